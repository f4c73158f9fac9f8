// Every automation store contract (test/automation/contracts/) on the PostgreSQL implementations:
// one private server for the file, a fresh database with the migrations applied per suite.
// Also: the run list's queries are index range scans (EXPLAIN), for the default listing and a
// filtered one, on enough rows that the planner would rather scan the table if it could.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { migrate } from '../../src/automation/pg/migrations.js';
import { PgDatabase } from '../../src/automation/pg/pool.js';
import type { AutomationStores } from '../../src/automation/stores.js';
import { openPgStores } from '../../src/automation/pg/stores/index.js';
import { listQuery } from '../../src/automation/pg/stores/runs.js';
import type { RunListQuery } from '../../src/automation/runs/list.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../helpers/postgres.js';
import { automationStoreContract } from './contracts/automation-store.contract.js';
import { blobStoreContract } from './contracts/blob-store.contract.js';
import { evaluatorConfigStoreContract } from './contracts/evaluator-config-store.contract.js';
import { exampleStoreContract } from './contracts/example-store.contract.js';
import { experimentStoreContract } from './contracts/experiment-store.contract.js';
import { fileStoreContract } from './contracts/file-store.contract.js';
import { reviewStoreContract } from './contracts/review-store.contract.js';
import { runStoreContract } from './contracts/run-store.contract.js';
import { scoreStoreContract } from './contracts/score-store.contract.js';

let server: PostgresServer | undefined;
let starting: Promise<PostgresServer> | undefined;

/** The file's server, started by the first suite that needs it. */
const postgres = () => (starting ??= startPostgres().then((s) => (server = s)));

after(async () => {
  await server?.stop();
});

/** A fresh migrated database and a close that ends its pool. */
async function openDb(): Promise<{ db: PgDatabase; close: () => Promise<void> }> {
  const db = new PgDatabase({ url: await (await postgres()).createDatabase(), poolSize: 4 });
  await migrate(db);
  return { db, close: () => db.close() };
}

/** The stores of a fresh database (openPgStores, as the service gets them) and its close. */
async function openStores() {
  const t = await openDb();
  // Small chunks, so the blob contract's contents span several.
  return { ...openPgStores(t.db, { blobChunkBytes: 1024 }), close: t.close };
}

describe('PostgreSQL stores', { skip: postgresSkip }, () => {
  /** A contract factory: the store `pick` takes from a fresh database's stores. */
  const one =
    <S>(pick: (s: AutomationStores) => S) =>
    async () => {
      const s = await openStores();
      return { store: pick(s), close: s.close };
    };
  runStoreContract(
    'PostgreSQL',
    one((s) => s.runs),
  );
  scoreStoreContract(
    'PostgreSQL',
    one((s) => s.scores),
  );
  experimentStoreContract(
    'PostgreSQL',
    one((s) => s.experiments),
  );
  evaluatorConfigStoreContract(
    'PostgreSQL',
    one((s) => s.evaluatorConfigs),
  );
  automationStoreContract(
    'PostgreSQL',
    one((s) => s.automations),
  );
  blobStoreContract(
    'PostgreSQL',
    one((s) => s.blobs),
  );
  fileStoreContract(
    'PostgreSQL',
    one((s) => s.files),
  );
  reviewStoreContract('PostgreSQL', async () => {
    const s = await openStores();
    return { store: s.reviews, runs: s.runs, close: s.close };
  });
  exampleStoreContract('PostgreSQL', async () => {
    const s = await openStores();
    return { store: s.examples, blobs: s.blobs, close: s.close };
  });

  describe('run list queries', () => {
    let t: Awaited<ReturnType<typeof openDb>>;
    before(async () => {
      t = await openDb();
      // 20k runs of 10 tenants and 20 automations, written in one statement (only the columns
      // the list reads matter here), then ANALYZE so the planner knows the table's size.
      await t.db.query(
        `INSERT INTO runs (id, tenant, automation_id, type, status, trigger_type, triggered_by,
           created_at, completed_at, sample_rank, record)
         SELECT 'exec_' || lpad(i::text, 8, '0'), 't' || (i % 10), 'wf_' || (i % 20), 'workflow',
           (ARRAY['completed', 'failed', 'running'])[1 + i % 3], 'api', 'alice',
           1700000000000 + i * 1000, 1700000000500 + i * 1000, (i % 100) / 100.0,
           jsonb_build_object('id', 'exec_' || lpad(i::text, 8, '0'))
         FROM generate_series(1, 20000) AS i`,
      );
      await t.db.query('ANALYZE runs');
    });
    after(async () => {
      await t?.close();
    });

    async function plan(q: RunListQuery): Promise<string> {
      const { text, values } = listQuery(q);
      const { rows } = await t.db.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    }

    const base: RunListQuery = { tenant: 't3', limit: 50, sort: 'createdAt', order: 'desc' };

    it('the default listing and filtered ones use an index, never a scan of runs', async () => {
      const cursor = Buffer.from(JSON.stringify([1700010000000, 'exec_00010000'])).toString('base64url');
      for (const q of [
        base,
        { ...base, cursor },
        { ...base, order: 'asc' as const },
        { ...base, sources: ['wf_3'] },
        { ...base, sources: ['wf_3'], order: 'asc' as const, cursor },
        { ...base, statuses: ['failed'], cursor },
        { ...base, sort: 'completedAt' as const },
      ]) {
        const text = await plan(q);
        assert.match(text, /Index Scan/, `${JSON.stringify(q)}:\n${text}`);
        assert.doesNotMatch(text, /Seq Scan/, `${JSON.stringify(q)}:\n${text}`);
        // The default listing (every run of the tenant) must come in index order: a Sort there
        // would read all of the tenant's runs before the first page. With a filter the planner
        // may sort the few rows it estimates instead.
        if (q === base) assert.doesNotMatch(text, /Sort|Bitmap/, text);
      }
    });
  });
});
