// Every automation store contract (test/automation/contracts/) on the PostgreSQL implementations:
// one private server for the file, a fresh database with the migrations applied per suite.
// Also: the run list's queries are index range scans (EXPLAIN), for the default listing and a
// filtered one, on enough rows that the planner would rather scan the table if it could.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { migrate } from '../../src/automation/pg/migrations.js';
import { PgDatabase, type Queryable } from '../../src/automation/pg/pool.js';
import { recordValues } from '../../src/automation/pg/stores/run-columns.js';
import { RunWriteQueue } from '../../src/automation/pg/stores/run-writes.js';
import type { AutomationStores } from '../../src/automation/stores.js';
import { openPgStores } from '../../src/automation/pg/stores/index.js';
import { listQuery } from '../../src/automation/pg/stores/runs.js';
import type { RunListQuery } from '../../src/automation/runs/list.js';
import { emptyDetail } from '../../src/automation/runs/types.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../helpers/postgres.js';
import { automationStoreContract } from './contracts/automation-store.contract.js';
import { emailMessageStoreContract } from './contracts/email-message-store.contract.js';
import { blobStoreContract } from './contracts/blob-store.contract.js';
import { evaluatorConfigStoreContract } from './contracts/evaluator-config-store.contract.js';
import { exampleStoreContract } from './contracts/example-store.contract.js';
import { experimentStoreContract } from './contracts/experiment-store.contract.js';
import { fileStoreContract } from './contracts/file-store.contract.js';
import { registrySourceStoreContract } from './contracts/registry-source-store.contract.js';
import { reviewStoreContract } from './contracts/review-store.contract.js';
import { contractRun, runStoreContract } from './contracts/run-store.contract.js';
import { result, scoreStoreContract } from './contracts/score-store.contract.js';

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
  return { ...openPgStores(t.db, { blobChunkBytes: 1024 }), db: t.db, close: t.close };
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
  emailMessageStoreContract(
    'PostgreSQL',
    one((s) => s.emailMessages),
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
  registrySourceStoreContract('PostgreSQL', async () => {
    const s = await openStores();
    const waiters = async () => {
      const { rows } = await s.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`,
      );
      return rows[0]!.n;
    };
    return { store: s.registrySources, blobs: s.blobs, baseWaiters: waiters, close: s.close };
  });

  // jsonb cannot hold U+0000 (PostgreSQL's text type has no NUL), but JSON can and run inputs,
  // outputs and events are the caller's data: they must read back as written, as on LMDB.
  it('keeps records whose strings hold U+0000', async () => {
    const s = await openStores();
    try {
      const nul = 'a\u0000b';
      const run = contractRun('t1', 1, { output: { text: nul }, error: nul, version: nul });
      const detail = { ...emptyDetail(), input: { args: { text: nul }, files: [], metadata: {} } };
      const event = { seq: 1, type: 'run.log', timestamp: new Date(0).toISOString(), message: nul };
      await s.runs.create(run, detail, [event]);
      await s.runs.appendEvent(run.id, { ...event, seq: 2 });
      assert.deepEqual(await s.runs.get(run.id), run);
      assert.deepEqual(await s.runs.getDetail(run.id), detail);
      assert.deepEqual(await s.runs.events(run.id), [event, { ...event, seq: 2 }]);
      assert.deepEqual(
        (
          await s.runs.list({
            tenant: 't1',
            limit: 10,
            sort: 'createdAt',
            order: 'desc',
            reviewNoteContains: 'good',
          })
        ).runs,
        [run],
      );
      const score = result(run.id, '000_a', { details: { text: nul } });
      await s.scores.record([score]);
      assert.deepEqual(await s.scores.list(run.id), [score]);
    } finally {
      await s.close();
    }
  });

  it('the run store sends the writes handed over in one turn as one statement; one that fails fails alone', async () => {
    const t = await openDb();
    try {
      const run = contractRun('t1', 1);
      await openPgStores(t.db).runs.create(run, emptyDetail(), []);
      let statements = 0;
      const counting: Queryable = {
        query: (text, values) => {
          statements++;
          return t.db.query(text, values);
        },
      };
      const writes = new RunWriteQueue(counting);
      const ev = (seq: number) => [{ seq, type: 'e', timestamp: new Date(0).toISOString() }];
      const record = { ...run, status: 'running' as const };
      await Promise.all([
        writes.write({ runId: run.id, record: recordValues(record) }),
        ...[1, 2, 3].map((seq) => writes.write({ runId: run.id, events: ev(seq) })),
        writes.write({ runId: run.id, detail: JSON.stringify(emptyDetail()) }),
      ]);
      assert.equal(statements, 1);
      const store = openPgStores(t.db).runs;
      assert.deepEqual(await store.get(run.id), record);
      assert.deepEqual(
        (await store.events(run.id)).map((e) => e.seq),
        [1, 2, 3],
      );
      // An event of a run that does not exist breaks the batch (its foreign key): it is sent
      // again one write at a time, and only that write fails.
      statements = 0;
      const good = [4, 5].map((seq) => writes.write({ runId: run.id, events: ev(seq) }));
      const bad = writes.write({ runId: 'exec_unknown', events: ev(1) });
      await Promise.all(good);
      await assert.rejects(bad, (err: Error & { code?: string }) => err.code === '23503');
      assert.equal(statements, 4);
      assert.equal(await store.lastEventSeq(run.id), 5);
    } finally {
      await t.close();
    }
  });

  it('a page with conditions no index serves stops at the scan limit; the cursor carries the scan on', async () => {
    const t = await openDb();
    try {
      const store = openPgStores(t.db, { listScanLimit: 3 }).runs;
      const runs = Array.from({ length: 12 }, (_, i) => contractRun('t1', i));
      for (const r of runs) await store.create(r, emptyDetail(), []);
      const q: RunListQuery = { tenant: 't1', limit: 2, sort: 'createdAt', order: 'asc', hasReview: true };
      const seen: string[] = [];
      let page = await store.list(q);
      assert.ok(page.runs.length < 2 && page.nextCursor !== null, 'the first page stops at the scan limit');
      for (;;) {
        seen.push(...page.runs.map((r) => r.id));
        if (page.nextCursor === null) break;
        page = await store.list({ ...q, cursor: page.nextCursor });
      }
      assert.deepEqual(
        seen,
        runs.filter((r) => r.review !== null).map((r) => r.id),
      );
      // Without such conditions the page is not bounded: it is full.
      const { hasReview: _, ...plain } = q;
      assert.equal((await store.list({ ...plain, limit: 5 })).runs.length, 5);
    } finally {
      await t.close();
    }
  });

  describe('run list queries', () => {
    let t: Awaited<ReturnType<typeof openDb>>;
    before(async () => {
      t = await openDb();
      // 20k runs of 10 tenants and 20 automations, written in one statement (only the columns
      // the list reads matter here), then ANALYZE so the planner knows the table's size.
      await t.db.query(
        `INSERT INTO runs (id, tenant, automation_id, type, status, trigger_type, triggered_by,
           created_at, completed_at, sample_rank, record, list_fields)
         SELECT 'exec_' || lpad(i::text, 8, '0'), 't' || (i % 10), 'wf_' || (i % 20), 'workflow',
           (ARRAY['completed', 'failed', 'running'])[1 + i % 3], 'api', 'alice',
           1700000000000 + i * 1000, 1700000000500 + i * 1000, (i % 100) / 100.0,
           json_build_object('id', 'exec_' || lpad(i::text, 8, '0')), '{}'
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
