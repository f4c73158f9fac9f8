// The one retry policy for "the database is unavailable" (the PostgreSQL adapter's 503
// `database_unavailable`): what a live run writes while PostgreSQL is away (its end, its shared
// output files) is tried again, 100 ms doubling up to 2 s between attempts, until it goes
// through, another error comes, or the caller says to stop (the node shuts down, or the run is
// no longer this node's). An LMDB store never reports the database unavailable, so there the
// first error is the answer.

import { ApiError } from './errors.js';

/** The database could not be reached (the PostgreSQL adapter's 503 `database_unavailable`). */
export function isUnavailable(err: unknown): boolean {
  return err instanceof ApiError && err.code === 'database_unavailable';
}

/** The pause before attempt `attempt + 1`: 100 ms doubling up to 2 s. */
export function retryPauseMs(attempt: number): number {
  return Math.min(2000, 100 * 2 ** attempt);
}

/**
 * `write()`, tried again while it fails because the database is unavailable and `keepTrying()`
 * says so; any other error (or an outage once `keepTrying()` is false) is thrown.
 */
export async function whileUnavailable<T>(write: () => Promise<T>, keepTrying: () => boolean): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (!isUnavailable(err) || !keepTrying()) throw err;
      await new Promise<void>((resolve) => setTimeout(resolve, retryPauseMs(attempt)));
    }
  }
}
