// A session advisory lock taken without waiting, for background work that one node at a time
// does (the retention pass). The lock is held on a connection of its own, outside the pool, so
// the work can have the whole pool even when it is one connection; the server releases the lock
// when that connection ends, also when this node dies holding it
// (https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS).

import { Client } from 'pg';
import { mapDatabaseError, type PgDatabase } from './pool.js';

/**
 * Runs `work` when `key` is free across every node and answers true; answers false at once,
 * without running it, while another session holds the lock.
 */
export async function withTryLock(
  db: PgDatabase,
  key: bigint,
  work: () => Promise<void>,
  applicationName = 'sluice-automation-lock',
): Promise<boolean> {
  const client = new Client({
    connectionString: db.options.url,
    keepAlive: true,
    connectionTimeoutMillis: db.options.connectTimeoutMs ?? 10_000,
    application_name: applicationName,
  });
  // A connection that breaks fails the query in progress; the event itself is not thrown.
  client.on('error', () => undefined);
  try {
    try {
      await client.connect();
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
        key.toString(),
      ]);
      if (!rows[0]?.locked) return false;
    } catch (err) {
      throw mapDatabaseError(err);
    }
    await work();
    return true;
  } finally {
    // Ending the session releases its advisory locks.
    await client.end().catch(() => undefined);
  }
}
