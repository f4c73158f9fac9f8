// The PostgreSQL adapter's pool and migrations on a private server (test/helpers/postgres.ts):
// migrations applied once under the advisory lock even when two nodes start together, a
// server that goes away turns into database_unavailable (503 naming PostgreSQL), and the same
// pool works again once the server is back. The settings are checked without a server.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { errorBody, toHttpError } from '../../../src/automation/http/envelope.js';
import { MIGRATIONS, MigrationError, migrate } from '../../../src/automation/pg/migrations.js';
import { DatabaseUnavailableError, PgDatabase } from '../../../src/automation/pg/pool.js';
import { CLAIM_READ } from '../../../src/automation/pg/queue/sql.js';
import { loadAutomationSettings } from '../../../src/automation/settings.js';
import { HttpError } from '../../../src/core/http/index.js';
import { EnvReader, loadCoreSettings, SettingsError } from '../../../src/core/settings/index.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../../helpers/postgres.js';
import { waitUntil } from '../../helpers/wait.js';

const load = (vars: Record<string, string>) => {
  const env = new EnvReader(vars);
  return loadAutomationSettings(env, loadCoreSettings(env));
};

describe('automation settings: PostgreSQL', () => {
  it('is off by default (LMDB and local files)', () => {
    const s = load({});
    assert.equal(s.database, undefined);
    assert.equal(s.leaseMs, 30_000);
    assert.match(s.nodeId, /^[A-Za-z0-9._-]+$/);
    assert.equal(s.tenantConcurrency, 0);
  });

  it('reads the URL, pool size, connect timeout, node id, lease and limits', () => {
    const s = load({
      AUTOMATION_DATABASE_URL: 'postgresql://sluice:pw@db.internal:5433/sluice',
      AUTOMATION_DATABASE_POOL_SIZE: '4',
      AUTOMATION_DATABASE_CONNECT_TIMEOUT: '3s',
      AUTOMATION_NODE_ID: 'node-a',
      AUTOMATION_RUN_LEASE: '10s',
      AUTOMATION_TENANT_CONCURRENCY: '5',
      AUTOMATION_AUTOMATION_CONCURRENCY: '2',
    });
    assert.deepEqual(s.database, {
      url: 'postgresql://sluice:pw@db.internal:5433/sluice',
      poolSize: 4,
      connectTimeoutMs: 3000,
    });
    assert.equal(s.nodeId, 'node-a');
    assert.equal(s.leaseMs, 10_000);
    assert.equal(s.tenantConcurrency, 5);
    assert.equal(s.automationConcurrency, 2);
  });

  it('refuses a bad value naming the setting, without echoing a password', () => {
    for (const bad of ['mysql://u:secret@h/db', 'not a url', 'postgres://', 'http://u:secret@h/db']) {
      assert.throws(
        () => load({ AUTOMATION_DATABASE_URL: bad }),
        (err: unknown) =>
          err instanceof SettingsError &&
          err.message.includes('AUTOMATION_DATABASE_URL') &&
          !err.message.includes('secret'),
        bad,
      );
    }
    assert.throws(
      () => load({ AUTOMATION_DATABASE_URL: 'postgres://h/db', AUTOMATION_DATABASE_POOL_SIZE: '0' }),
      /AUTOMATION_DATABASE_POOL_SIZE/,
    );
    assert.throws(() => load({ AUTOMATION_NODE_ID: 'a b' }), /AUTOMATION_NODE_ID/);
    assert.throws(() => load({ AUTOMATION_RUN_LEASE: '10ms' }), /AUTOMATION_RUN_LEASE/);
  });
});

describe('PostgreSQL pool and migrations', { skip: postgresSkip }, () => {
  let server: PostgresServer;
  before(async () => {
    server = await startPostgres();
  });
  after(async () => {
    await server?.stop();
  });

  /** A new database with the schema, closed after `fn`. */
  async function withSchema(fn: (db: PgDatabase) => Promise<void>): Promise<void> {
    const db = new PgDatabase({ url: await server.createDatabase() });
    try {
      await migrate(db);
      await fn(db);
    } finally {
      await db.close();
    }
  }

  it('two nodes migrating a fresh database at once apply each migration once', async () => {
    const url = await server.createDatabase();
    const a = new PgDatabase({ url });
    const b = new PgDatabase({ url });
    try {
      const [ra, rb] = await Promise.all([migrate(a), migrate(b)]);
      const latest = MIGRATIONS.length;
      assert.equal(ra.version, latest);
      assert.equal(rb.version, latest);
      // Exactly one of them applied the migrations; the other found them applied.
      assert.deepEqual([...ra.applied, ...rb.applied].sort(), MIGRATIONS.map((m) => m.version).sort());
      const { rows } = await a.query<{ version: number }>('SELECT version FROM schema_migrations');
      assert.equal(rows.length, latest);
      // Idempotent: a later start applies nothing.
      assert.deepEqual(await migrate(a), { applied: [], version: latest });
      // The schema has every record's table.
      const tables = await a.query<{ name: string }>(
        "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'",
      );
      const names = new Set(tables.rows.map((r) => r.name));
      for (const t of [
        'automations',
        'automation_aliases',
        'automation_versions',
        'releases',
        'runs',
        'run_details',
        'run_events',
        'scores',
        'files',
        'file_uploads',
        'blobs',
        'blob_chunks',
        'blob_refs',
        'dataset_examples',
        'evaluator_configs',
        'experiments',
        'reviews',
        'api_keys',
        'meta',
      ])
        assert.ok(names.has(t), `table ${t}`);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it('the run list page is an index scan on (tenant, created_at, id)', async () => {
    await withSchema(async (db) => {
      await db.query(`INSERT INTO runs (id, tenant, automation_id, type, status, trigger_type, triggered_by,
          created_at, sample_rank, record)
        SELECT 'run_' || i, 't' || (i % 10), 'wf_' || (i % 7), 'workflow', 'completed', 'api', 'u', i, 0.5, '{}'
        FROM generate_series(1, 20000) AS i`);
      await db.query('ANALYZE runs');
      const plan = await db.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT id FROM runs WHERE tenant = 't3' AND (created_at, id) < (15000, 'run_15000')
         ORDER BY created_at DESC, id DESC LIMIT 50`,
      );
      const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
      assert.match(text, /Index (Only )?Scan using runs_tenant_created/);
      assert.doesNotMatch(text, /Sort/);
    });
  });

  it("the claim reads a claimed run's detail and last event by their keys, not by a table scan", async () => {
    await withSchema(async (db) => {
      await db.query(`INSERT INTO runs (id, tenant, automation_id, type, status, trigger_type, triggered_by,
          created_at, sample_rank, record, queue_state, queued_at, attempt)
        SELECT 'run_' || i, 't', 'wf', 'workflow', 'queued', 'api', 'u', i, 0.5, '{}', 'queued', now(), 0
        FROM generate_series(1, 2000) AS i`);
      await db.query(`INSERT INTO run_details (run_id, detail) SELECT id, '{}' FROM runs`);
      await db.query(`INSERT INTO run_events (run_id, seq, event)
        SELECT id, s, json_build_object('timestamp', '2026-11-27T00:00:00.000Z') FROM runs, generate_series(1, 3) AS s`);
      await db.query('ANALYZE');
      // With sequential scans priced out, a plan that still has one has no index it could use:
      // runs.id is COLLATE "C" and the run_id keys of the other tables are not.
      await db.transaction(async (tx) => {
        await tx.query('SET LOCAL enable_seqscan = off');
        const plan = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${CLAIM_READ}`, ['n', 30, 2, []]);
        const text = plan.rows.map((r) => r['QUERY PLAN']).join('\n');
        assert.doesNotMatch(text, /Seq Scan on run_(details|events)/, text);
        assert.match(text, /run_details_pkey/);
        assert.match(text, /run_events_pkey/);
      });
    });
  });

  it('refuses a database with a newer schema or a changed migration', async () => {
    await withSchema(async (db) => {
      await db.query("INSERT INTO schema_migrations (version, name, checksum) VALUES (99, 'future', 'x')");
      await assert.rejects(
        migrate(db),
        (err: unknown) => err instanceof MigrationError && /99/.test(err.message),
      );
      await db.query('DELETE FROM schema_migrations WHERE version = 99');
      const changed = MIGRATIONS.map((m) => ({ ...m, sql: m.sql + '\n-- edited' }));
      await assert.rejects(migrate(db, changed), /changed after it was applied/);
    });
  });

  it('a transaction commits, or rolls back when its function throws', async () => {
    await withSchema(async (db) => {
      await db.transaction(async (tx) => {
        await tx.query("INSERT INTO meta (key, value) VALUES ('a', '1')");
      });
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query("INSERT INTO meta (key, value) VALUES ('b', '2')");
          throw new Error('no');
        }),
        /no/,
      );
      const { rows } = await db.query<{ key: string }>('SELECT key FROM meta ORDER BY key');
      assert.deepEqual(
        rows.map((r) => r.key),
        ['a'],
      );
    });
  });

  it('prepares statements with parameters, and runs one again when a table changed its result', async () => {
    // One connection, so the statement prepared is the one asked about.
    const db = new PgDatabase({ url: await server.createDatabase(), poolSize: 1 });
    try {
      await db.query('CREATE TABLE prepared_probe (id integer PRIMARY KEY)');
      await db.query('INSERT INTO prepared_probe VALUES (1)');
      const select = 'SELECT * FROM prepared_probe WHERE id = $1';
      assert.deepEqual((await db.query(select, [1])).rows, [{ id: 1 }]);
      const { rows } = await db.query<{ n: string }>(
        'SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = $1',
        [select],
      );
      assert.equal(rows[0]?.n, '1', 'the statement is prepared on the connection');
      // A newer node's migration adds a column: the prepared statement's result would change.
      await db.query('ALTER TABLE prepared_probe ADD COLUMN note text');
      assert.deepEqual((await db.query(select, [1])).rows, [{ id: 1, note: null }]);
    } finally {
      await db.close();
    }
  });

  it('server down: database_unavailable (503 naming PostgreSQL); back: the same pool recovers', async () => {
    const url = await server.createDatabase();
    const idleErrors: Error[] = [];
    const db = new PgDatabase({ url, poolSize: 3, onIdleError: (e) => idleErrors.push(e) });
    try {
      await migrate(db);
      // Hold idle connections in the pool so the shutdown breaks some.
      await Promise.all([1, 2, 3].map(() => db.query('SELECT pg_sleep(0)')));
      await server.shutdown();
      for (const attempt of [db.query('SELECT 1'), db.transaction((tx) => tx.query('SELECT 1'))]) {
        const err = await attempt.then(
          () => assert.fail('a query succeeded with the server down'),
          (e: unknown) => e,
        );
        assert.ok(err instanceof DatabaseUnavailableError, String(err));
        assert.equal(err.code, 'database_unavailable');
        const http = toHttpError(err);
        assert.ok(http instanceof HttpError);
        assert.equal(http.status, 503);
        const body = errorBody({
          status: http.status,
          code: http.code,
          message: http.message,
          requestId: 'r1',
          details: http.details,
        }) as { issues: { code: string; message: string }[] };
        assert.equal(body.issues[0]!.code, 'database_unavailable');
        assert.match(body.issues[0]!.message, /PostgreSQL/);
        assert.doesNotMatch(body.issues[0]!.message, /127\.0\.0\.1/);
      }
      await server.start();
      // The same pool, no new instance: the first queries may still meet connections that
      // broke during the shutdown, which the pool drops; it then connects again.
      const rows = await waitUntil('the pool to reconnect', async () => {
        try {
          return (await db.query<{ one: number }>('SELECT 1 AS one')).rows;
        } catch (err) {
          if (err instanceof DatabaseUnavailableError) return false;
          throw err;
        }
      });
      assert.deepEqual(rows, [{ one: 1 }]);
      await db.transaction(async (tx) => {
        await tx.query("INSERT INTO meta (key, value) VALUES ('after', 'true')");
      });
    } finally {
      await db.close();
    }
  });
});
