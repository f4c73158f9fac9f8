// Versioned schema migrations, applied at start (docs/architecture.md). Every node runs
// migrate(); a session advisory lock makes them take turns, so of several nodes starting at
// once on a fresh database one applies the migrations and the others find them applied. Each
// migration runs in its own transaction together with its row in schema_migrations, so a
// failed one leaves nothing behind and is tried again at the next start.

import { createHash } from 'node:crypto';
import { CodedError } from '../../core/errors.js';
import schema001 from './migrations/001_schema.js';
import blobHolds002 from './migrations/002_blob_holds.js';
import schedules003 from './migrations/003_schedules.js';
import retention004 from './migrations/004_retention.js';
import { mapDatabaseError, type PgDatabase } from './pool.js';

export interface Migration {
  /** 1, 2, 3 … in the order they apply. */
  version: number;
  name: string;
  /** Statements separated by `;`, run as one simple query. */
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [schema001, blobHolds002, schedules003, retention004];

/** The advisory lock key (an arbitrary constant: "sluice:automation:migrate"). */
export const MIGRATION_LOCK_KEY = 7_301_239_547_011_203n;

const checksum = (m: Migration) => createHash('sha256').update(m.sql).digest('hex');

export class MigrationError extends CodedError {
  constructor(message: string) {
    super('migration_failed', message);
  }
}

export interface MigrateResult {
  /** Versions this call applied (empty when another node or an earlier start did). */
  applied: number[];
  /** The schema version afterwards. */
  version: number;
}

export async function migrate(
  db: PgDatabase,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<MigrateResult> {
  checkOrder(migrations);
  const client = await db.connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY.toString()]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
      const { rows } = await client.query<{ version: number; name: string; checksum: string }>(
        'SELECT version, name, checksum FROM schema_migrations ORDER BY version',
      );
      const known = new Map(migrations.map((m) => [m.version, m]));
      for (const row of rows) {
        const m = known.get(row.version);
        if (!m)
          throw new MigrationError(
            `the database has schema version ${row.version} (${row.name}), newer than this Sluice knows; ` +
              'run the newer release or a database of its own',
          );
        if (row.checksum !== checksum(m))
          throw new MigrationError(`migration ${m.version} (${m.name}) changed after it was applied`);
      }
      const done = new Set(rows.map((r) => r.version));
      const applied: number[] = [];
      for (const m of migrations) {
        if (done.has(m.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(m.sql);
          await client.query('INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)', [
            m.version,
            m.name,
            checksum(m),
          ]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK').catch(() => undefined);
          throw err;
        }
        applied.push(m.version);
      }
      const version = Math.max(0, ...rows.map((r) => r.version), ...applied);
      return { applied, version };
    } finally {
      // Also released when the connection closes, so a node that dies here blocks no one.
      await client
        .query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY.toString()])
        .catch((e: Error) => (broken = e));
    }
  } catch (err) {
    if (!(err instanceof MigrationError)) broken = err as Error;
    throw mapDatabaseError(err);
  } finally {
    client.release(broken);
  }
}

function checkOrder(migrations: readonly Migration[]): void {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1)
      throw new MigrationError(`migration ${m.name} has version ${m.version}, expected ${i + 1}`);
  });
}
