// How lmdb-js reports a failed commit, and the rejection it leaves unhandled.
//
// Every write promise of a failed transaction rejects with `Error('Commit failed (see commitError
// for details)')`; the cause (ENOSPC, EIO, MDB_MAP_FULL …) is only in `error.commitError`, a promise
// rejected right after. lmdb-js (3.5) also creates a promise of its own for the instruction that
// opens each event turn's batch, drops it, and rejects it when the commit fails. Nobody can handle
// that rejection, and Node's default for an unhandled rejection ends the thread: the streams
// service's front-end thread died that way, and uWS then aborted the whole process. The guard below
// takes those lmdb-js rejections (and only those) as handled: the writer that awaited its own write
// got the failure already.

import { CodedError } from '../errors.js';

const COMMIT_FAILED = 'Commit failed (see commitError for details)';

type CommitFailure = Error & { commitError: Promise<never> };

export function isLmdbCommitFailure(error: unknown): error is CommitFailure {
  return (
    error instanceof Error &&
    error.message === COMMIT_FAILED &&
    typeof (error as { commitError?: { then?: unknown } }).commitError?.then === 'function'
  );
}

/** The error lmdb-js rejects `commitError` with: an errno or LMDB code, raised in its write.js. */
function isLmdbWriteError(reason: unknown): boolean {
  return (
    reason instanceof Error &&
    typeof (reason as { code?: unknown }).code === 'number' &&
    /[\\/]lmdb[\\/]write\.js/.test(reason.stack ?? '')
  );
}

/** The reason a commit failed (the error inside `commitError`), or `error` itself otherwise. */
export async function commitFailureCause(error: unknown): Promise<unknown> {
  if (!isLmdbCommitFailure(error)) return error;
  try {
    await error.commitError;
    return error;
  } catch (cause) {
    return cause;
  }
}

/** Marks a commit failure's `commitError` as handled, so it is never an unhandled rejection. */
function settle(error: CommitFailure): void {
  error.commitError.catch(() => undefined);
}

let installed = false;

/**
 * Installs, once per thread, the process listener that takes lmdb-js commit-failure rejections as
 * handled (logging them through `warn`). Any other unhandled rejection is rethrown as an uncaught
 * exception, which is what Node does without a listener.
 */
export function guardLmdbCommitFailures(warn: (message: string, cause: unknown) => void): void {
  if (installed) return;
  installed = true;
  const causes = new WeakSet<Promise<unknown>>();
  process.on('unhandledRejection', (reason, promise) => {
    if (isLmdbCommitFailure(reason)) {
      causes.add(reason.commitError);
      settle(reason);
      reason.commitError.catch((cause: unknown) => warn('an LMDB commit failed', cause));
      return;
    }
    if (causes.has(promise) || isLmdbWriteError(reason)) return;
    throw reason instanceof Error ? reason : new UnhandledRejection(reason);
  });
}

class UnhandledRejection extends CodedError {
  constructor(readonly reason: unknown) {
    super('unhandled_rejection', `unhandled promise rejection: ${String(reason)}`);
  }
}
