// The RunStore contract: every implementation (LMDB, PostgreSQL) passes the same cases. The run
// list is checked filter by filter against a small fixed set of runs of two tenants, each page
// read through its cursor until the end, so an implementation may answer short pages.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { CursorError, type RunListQuery } from '../../../src/automation/runs/list.js';
import { newRunId } from '../../../src/automation/runs/ids.js';
import type { RunStore } from '../../../src/automation/runs/store.js';
import {
  emptyDetail,
  type RunDetail,
  type RunEvent,
  type RunRecord,
  type RunStatus,
} from '../../../src/automation/runs/types.js';

export interface RunStoreUnderTest {
  store: RunStore;
  close(): Promise<void>;
}

const T0 = Date.UTC(2026, 0, 1);
const STATUSES: RunStatus[] = ['completed', 'failed', 'cancelled', 'running', 'pending'];

/** Run i of a tenant: fields vary with i so every filter selects a different subset. */
export function contractRun(tenant: string, i: number, extra: Partial<RunRecord> = {}): RunRecord {
  const createdAt = T0 + i * 1000;
  const status = STATUSES[i % STATUSES.length]!;
  const done = status === 'completed' || status === 'failed' || status === 'cancelled';
  return {
    id: newRunId(createdAt),
    tenant,
    type: i % 4 === 0 ? 'agent' : 'workflow',
    automationId: i % 4 === 0 ? 'agt_a' : `wf_${i % 2}`,
    slug: i % 4 === 0 ? 'agent-a' : `wf-${i % 2}`,
    name: 'contract run',
    version: i % 3 === 0 ? '2.0.0' : '1.0.0',
    versionId: null,
    git: {
      requestedRef: 'latest',
      resolvedRef: i % 3 === 0 ? 'x@2.0.0' : 'x@1.0.0',
      resolvedTag: i % 3 === 0 ? 'x@2.0.0' : 'x@1.0.0',
      commitSha: (i % 3 === 0 ? 'b' : 'a').repeat(40),
    },
    model: null,
    status,
    createdAt,
    startedAt: done || status === 'running' ? createdAt : null,
    // Completion order differs from creation order, so sort=completedAt is checked for real.
    completedAt: done ? createdAt + ((i * 7919) % 13) * 5000 : null,
    cancelRequestedAt: null,
    sampleRank: ((i * 37) % 100) / 100,
    trigger: { type: i % 5 === 0 ? 'experiment' : 'api', by: i % 3 === 0 ? 'bob' : 'alice' },
    batchId: i % 5 === 0 ? `batch_${i % 2}` : null,
    exampleId: i % 5 === 0 ? `example_${i}` : null,
    output: { i },
    error: status === 'failed' ? 'boom' : null,
    files: [],
    schemaValid: null,
    retry: { number: 0, previousRunId: null, nextRunId: null },
    review:
      i % 4 === 1
        ? {
            status: i % 8 === 1 ? 'closed' : 'open',
            verdict: i % 8 === 1 ? 'correct' : 'incorrect',
            note: i % 8 === 1 ? 'Looks GOOD' : 'wrong total',
            hasCorrections: i % 8 === 5,
            correctionCount: i % 8 === 5 ? 1 : 0,
            createdAt: createdAt + 100,
            updatedAt: createdAt + 200,
            closedAt: i % 8 === 1 ? createdAt + 300 : null,
          }
        : null,
    timeoutMs: 60_000,
    ...extra,
  };
}

/** The input metadata of the i-th run of a tenant: strings at several depths, for `search`. */
function metadataOf(i: number): Record<string, unknown> {
  return {
    m: 1,
    customer: i % 6 === 4 ? 'Acme Corp' : 'Globex',
    nested: {
      region: i % 9 === 5 ? 'eu-West-1' : 'us-east-1',
      tags: ['t', i % 7 === 3 ? 'Urgent' : 'later'],
    },
  };
}

function detailOf(run: RunRecord, i = 0): RunDetail {
  return { ...emptyDetail(), input: { args: { run: run.id }, files: [], metadata: metadataOf(i) } };
}

const event = (seq: number, type: string): RunEvent => ({
  seq,
  type,
  timestamp: new Date(T0 + seq).toISOString(),
});

export function runStoreContract(label: string, make: () => Promise<RunStoreUnderTest>): void {
  describe(`RunStore contract: ${label}`, () => {
    let s: RunStoreUnderTest;
    const mine: RunRecord[] = [];
    const theirs: RunRecord[] = [];
    const N = 40;

    before(async () => {
      s = await make();
      for (let i = 0; i < N; i++) {
        const run = contractRun('t1', i);
        mine.push(run);
        await s.store.create(run, detailOf(run, i), [event(1, 'run.created')]);
      }
      // Another tenant's runs share every field value with t1's, so only tenant scoping keeps them out.
      for (let i = 0; i < 10; i++) {
        const run = contractRun('t2', i);
        theirs.push(run);
        await s.store.create(run, detailOf(run, i), []);
      }
    });
    after(async () => {
      await s?.close();
    });

    const base = (q: Partial<RunListQuery> = {}): RunListQuery => ({
      tenant: 't1',
      limit: 7,
      sort: 'createdAt',
      order: 'desc',
      ...q,
    });

    /** Every page of a query, read through its cursors; checks that no run repeats. */
    async function all(q: RunListQuery): Promise<string[]> {
      const out: string[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 1000; pages++) {
        const page = await s.store.list(cursor === undefined ? q : { ...q, cursor });
        assert.ok(page.runs.length <= q.limit, 'a page holds at most limit runs');
        out.push(...page.runs.map((r) => r.id));
        if (page.nextCursor === null) break;
        assert.equal(typeof page.nextCursor, 'string');
        cursor = page.nextCursor;
      }
      assert.equal(new Set(out).size, out.length, 'no run is listed twice');
      return out;
    }

    const newestFirst = (runs: RunRecord[]) =>
      [...runs].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1)).map((r) => r.id);
    const expect = (pred: (r: RunRecord) => boolean) => newestFirst(mine.filter(pred));

    it('get and getDetail read back what was created; unknown ids are undefined', async () => {
      const run = mine[3]!;
      assert.deepEqual(await s.store.get(run.id), run);
      assert.deepEqual(await s.store.getDetail(run.id), detailOf(run, 3));
      assert.equal(await s.store.get('exec_unknown'), undefined);
      assert.equal(await s.store.getDetail('exec_unknown'), undefined);
      // get is not tenant-scoped (callers check the tenant): another tenant's run reads back too.
      assert.equal((await s.store.get(theirs[0]!.id))?.tenant, 't2');
      // A created run has no output file stored with it (only a run's end stores any).
      assert.equal(await s.store.keptFile(run.id, 'output/report.md'), undefined);
      assert.equal(await s.store.keptFile('exec_unknown', 'output/report.md'), undefined);
    });

    it('lists only the tenant’s runs, newest first, every page through its cursor', async () => {
      assert.deepEqual(await all(base()), newestFirst(mine));
      assert.deepEqual(await all(base({ tenant: 't2' })), newestFirst(theirs));
      assert.deepEqual(await all(base({ tenant: 't3' })), []);
      assert.deepEqual(await all(base({ order: 'asc' })), newestFirst(mine).reverse());
      const first = await s.store.list(base({ limit: 100 }));
      assert.equal(first.nextCursor, null);
      assert.equal(first.runs.length, N);
      assert.deepEqual(first.runs[0], mine[N - 1], 'list answers whole records');
    });

    it('filters by type, source, status, trigger, triggered by, batch and example', async () => {
      const cases: [Partial<RunListQuery>, (r: RunRecord) => boolean][] = [
        [{ types: ['agent'] }, (r) => r.type === 'agent'],
        [{ types: ['agent', 'workflow'] }, () => true],
        [{ sources: ['wf_1'] }, (r) => r.automationId === 'wf_1'],
        [{ sources: ['wf_1', 'agt_a'] }, (r) => r.automationId !== 'wf_0'],
        [{ statuses: ['failed'] }, (r) => r.status === 'failed'],
        [{ statuses: ['running', 'pending'] }, (r) => r.status === 'running' || r.status === 'pending'],
        [{ triggers: ['experiment'] }, (r) => r.trigger.type === 'experiment'],
        [{ triggeredBy: ['bob'] }, (r) => r.trigger.by === 'bob'],
        [{ batchIds: ['batch_0'] }, (r) => r.batchId === 'batch_0'],
        [{ batchIds: ['batch_0', 'batch_1'] }, (r) => r.batchId !== null],
        [{ exampleIds: ['example_10'] }, (r) => r.exampleId === 'example_10'],
        [
          { exampleIds: ['example_10', 'example_15'] },
          (r) => ['example_10', 'example_15'].includes(r.exampleId!),
        ],
        [{ exampleIdContains: 'ple_1' }, (r) => (r.exampleId ?? '').includes('ple_1')],
        [{ experiments: false }, (r) => r.batchId === null],
        [
          { types: ['workflow'], statuses: ['completed'] },
          (r) => r.type === 'workflow' && r.status === 'completed',
        ],
        [{ sources: ['unknown'] }, () => false],
      ];
      for (const [q, pred] of cases) assert.deepEqual(await all(base(q)), expect(pred), JSON.stringify(q));
    });

    it('filters by source ref: version, requested, resolved ref or tag, or a commit prefix of 7+', async () => {
      assert.deepEqual(
        await all(base({ sourceRef: '2.0.0' })),
        expect((r) => r.version === '2.0.0'),
      );
      assert.deepEqual(
        await all(base({ sourceRef: 'x@1.0.0' })),
        expect((r) => r.version === '1.0.0'),
      );
      assert.deepEqual(
        await all(base({ sourceRef: 'latest' })),
        expect(() => true),
      );
      assert.deepEqual(
        await all(base({ sourceRef: 'bbbbbbb' })),
        expect((r) => r.version === '2.0.0'),
      );
      assert.deepEqual(await all(base({ sourceRef: 'bbbbbb' })), [], 'a commit prefix needs 7 characters');
    });

    it('filters by created and completed time ranges (inclusive) and created-after (exclusive)', async () => {
      const from = T0 + 10_000;
      const to = T0 + 20_000;
      assert.deepEqual(
        await all(base({ createdFrom: from, createdTo: to })),
        expect((r) => r.createdAt >= from && r.createdAt <= to),
      );
      assert.deepEqual(
        await all(base({ createdFrom: from })),
        expect((r) => r.createdAt >= from),
      );
      assert.deepEqual(
        await all(base({ createdTo: to, order: 'asc' })),
        expect((r) => r.createdAt <= to).reverse(),
      );
      assert.deepEqual(
        await all(base({ completedFrom: from, completedTo: to + 30_000 })),
        expect((r) => r.completedAt !== null && r.completedAt >= from && r.completedAt <= to + 30_000),
      );
      assert.deepEqual(
        await all(base({ createdAfterExclusive: from })),
        expect((r) => r.createdAt > from),
      );
    });

    it('filters by review fields', async () => {
      const rv = (r: RunRecord) => r.review;
      const cases: [Partial<RunListQuery>, (r: RunRecord) => boolean][] = [
        [{ hasReview: true }, (r) => rv(r) !== null],
        [{ hasReview: false }, (r) => rv(r) === null],
        [{ hasCorrections: true }, (r) => rv(r)?.hasCorrections === true],
        [{ hasCorrections: false }, (r) => rv(r)?.hasCorrections !== true],
        [{ reviewStatuses: ['closed'] }, (r) => rv(r)?.status === 'closed'],
        [{ reviewVerdicts: ['incorrect'] }, (r) => rv(r)?.verdict === 'incorrect'],
        [{ reviewNoteContains: 'good' }, (r) => (rv(r)?.note ?? '').toLowerCase().includes('good')],
        [
          { search: 'GOOD' },
          (r) => [r.id, r.exampleId ?? '', rv(r)?.note ?? ''].some((f) => f.toLowerCase().includes('good')),
        ],
        // Example ids and run ids too: one term, any of the three fields.
        [
          { search: 'Example_1' },
          (r) =>
            [r.id, r.exampleId ?? '', rv(r)?.note ?? ''].some((f) => f.toLowerCase().includes('example_1')),
        ],
        [
          { reviewCreated: [T0 + 5_000, T0 + 25_000] },
          (r) => rv(r) !== null && rv(r)!.createdAt >= T0 + 5_000 && rv(r)!.createdAt <= T0 + 25_000,
        ],
        [
          { reviewUpdated: [T0 + 20_000, undefined] },
          (r) => rv(r) !== null && rv(r)!.updatedAt >= T0 + 20_000,
        ],
        [
          { reviewClosed: [undefined, T0 + 30_000] },
          (r) => rv(r)?.closedAt != null && rv(r)!.closedAt! <= T0 + 30_000,
        ],
      ];
      for (const [q, pred] of cases) {
        const want = expect(pred);
        assert.ok(want.length > 0 || q.hasCorrections === true, `${JSON.stringify(q)} selects some runs`);
        assert.deepEqual(await all(base(q)), want, JSON.stringify(q));
      }
      // `search` also finds a run by (part of) its id, in upper case too.
      const one = mine[7]!;
      const part = one.id.slice(-10).toUpperCase();
      assert.deepEqual(
        await all(base({ search: part })),
        expect((r) => r.id.toLowerCase().includes(part.toLowerCase())),
      );
      assert.ok((await all(base({ search: part }))).includes(one.id));

      // …and by a string anywhere in its input metadata (values at any depth, not member names).
      const at = (r: RunRecord) => mine.indexOf(r);
      const byMetadata: [string, (r: RunRecord) => boolean][] = [
        ['ACME', (r) => at(r) % 6 === 4],
        ['eu-west', (r) => at(r) % 9 === 5],
        ['urgent', (r) => at(r) % 7 === 3],
      ];
      for (const [term, pred] of byMetadata) {
        const want = expect(pred);
        assert.ok(want.length > 0, `${term} selects some runs`);
        assert.deepEqual(await all(base({ search: term })), want, term);
      }
      assert.deepEqual(await all(base({ search: 'customer' })), [], 'member names are not searched');
      assert.deepEqual(await all(base({ search: 'region' })), []);
    });

    it('samples by sampleRank below the rate', async () => {
      assert.deepEqual(
        await all(base({ sampleRate: 0.3 })),
        expect((r) => r.sampleRank < 0.3),
      );
      assert.deepEqual(await all(base({ sampleRate: 0 })), []);
    });

    it('sorts by completion time: only completed runs, in completion order', async () => {
      const done = mine.filter((r) => r.completedAt !== null);
      const byCompletion = [...done]
        .sort((a, b) => a.completedAt! - b.completedAt! || (a.id < b.id ? -1 : 1))
        .map((r) => r.id);
      assert.deepEqual(await all(base({ sort: 'completedAt', order: 'asc' })), byCompletion);
      assert.deepEqual(await all(base({ sort: 'completedAt' })), [...byCompletion].reverse());
      assert.deepEqual(
        await all(base({ sort: 'completedAt', order: 'asc', statuses: ['failed'] })),
        byCompletion.filter((id) => mine.find((r) => r.id === id)!.status === 'failed'),
      );
    });

    it('lists given ids only, in order, never another tenant’s', async () => {
      const ids = [mine[5]!.id, mine[2]!.id, theirs[1]!.id, 'exec_unknown', mine[30]!.id];
      assert.deepEqual(await all(base({ ids })), [mine[30]!.id, mine[5]!.id, mine[2]!.id]);
      assert.deepEqual(await all(base({ ids, limit: 1, order: 'asc' })), [
        mine[2]!.id,
        mine[5]!.id,
        mine[30]!.id,
      ]);
      assert.deepEqual(await all(base({ ids, statuses: ['completed'] })), [mine[30]!.id, mine[5]!.id]);
      assert.deepEqual(await all(base({ ids: [theirs[1]!.id] })), []);
    });

    it('skips `offset` matching runs on the first page', async () => {
      const page = await s.store.list(base({ offset: 5, limit: 100 }));
      assert.deepEqual(
        page.runs.map((r) => r.id),
        newestFirst(mine).slice(5),
      );
      const filtered = await s.store.list(base({ offset: 2, limit: 100, types: ['agent'] }));
      assert.deepEqual(
        filtered.runs.map((r) => r.id),
        expect((r) => r.type === 'agent').slice(2),
      );
    });

    it('a cursor neither repeats nor skips runs when newer runs are added between pages', async () => {
      const q = base({ tenant: 't4', limit: 2 });
      const early = [0, 1, 2, 3, 4].map((i) => contractRun('t4', i));
      for (const r of early) await s.store.create(r, detailOf(r), []);
      const first = await s.store.list(q);
      assert.ok(first.runs.length <= 2 && first.nextCursor !== null);
      const later = contractRun('t4', 100);
      await s.store.create(later, detailOf(later), []);
      const rest: string[] = first.runs.map((r) => r.id);
      let cursor: string | null = first.nextCursor;
      while (cursor !== null) {
        const page = await s.store.list({ ...q, cursor });
        rest.push(...page.runs.map((r) => r.id));
        cursor = page.nextCursor;
      }
      assert.deepEqual(rest, newestFirst(early));
    });

    it('rejects a cursor it did not issue with CursorError', async () => {
      for (const cursor of ['not a cursor', Buffer.from('[1,"../x"]').toString('base64url'), ''])
        await assert.rejects(s.store.list(base({ cursor })), CursorError, JSON.stringify(cursor));
    });

    it('update replaces the record (and its detail when given); listings follow the new state', async () => {
      const prev = contractRun('t5', 1, { status: 'pending', completedAt: null, startedAt: null });
      await s.store.create(prev, detailOf(prev), []);
      const running = { ...prev, status: 'running' as const, startedAt: prev.createdAt + 1 };
      await s.store.update(prev, running);
      assert.deepEqual(await s.store.get(prev.id), running);
      assert.deepEqual(await s.store.getDetail(prev.id), detailOf(prev), 'the detail stays when not given');
      const q = base({ tenant: 't5' });
      assert.deepEqual(await all({ ...q, statuses: ['pending'] }), []);
      assert.deepEqual(await all({ ...q, statuses: ['running'] }), [prev.id]);
      const doneDetail = { ...detailOf(prev), steps: [], trace: [{ type: 'x' }] };
      const done = { ...running, status: 'completed' as const, completedAt: prev.createdAt + 10 };
      await s.store.update(running, done, doneDetail);
      assert.deepEqual(await s.store.getDetail(prev.id), doneDetail);
      assert.deepEqual(await all({ ...q, statuses: ['running'] }), []);
      assert.deepEqual(await all({ ...q, statuses: ['completed'] }), [prev.id]);
      assert.deepEqual(await all({ ...q, sort: 'completedAt' }), [prev.id]);
    });

    it('events read back in seq order; lastEventSeq is the highest; unknown runs have none', async () => {
      const run = contractRun('t6', 1);
      await s.store.create(run, detailOf(run), [event(1, 'run.created'), event(2, 'run.queued')]);
      await s.store.appendEvent(run.id, event(4, 'step.completed'));
      await s.store.appendEvent(run.id, event(3, 'run.started'));
      await s.store.appendEvent(run.id, {
        ...event(11, 'run.completed'),
        status: 'completed',
        metadata: { a: 1 },
      });
      const events = await s.store.events(run.id);
      assert.deepEqual(
        events.map((e) => [e.seq, e.type]),
        [
          [1, 'run.created'],
          [2, 'run.queued'],
          [3, 'run.started'],
          [4, 'step.completed'],
          [11, 'run.completed'],
        ],
      );
      assert.deepEqual(events[4], { ...event(11, 'run.completed'), status: 'completed', metadata: { a: 1 } });
      assert.equal(await s.store.lastEventSeq(run.id), 11);
      // Every write above resolved, so it was sent: nothing is left for an end to take.
      assert.deepEqual(s.store.takeUnwritten(run.id), []);
      assert.deepEqual(s.store.takeUnwritten('exec_unknown'), []);
      assert.deepEqual(await s.store.events('exec_unknown'), []);
      assert.equal(await s.store.lastEventSeq('exec_unknown'), 0);
      // A run's events are its own: another run's are not mixed in.
      assert.deepEqual(
        (await s.store.events(mine[0]!.id)).map((e) => e.seq),
        [1],
      );
    });

    it('writes handed over together without waiting: each resolves once stored, events in seq order, the last update wins', async () => {
      const run = contractRun('t7', 1, { status: 'running', completedAt: null });
      await s.store.create(run, detailOf(run), [event(1, 'run.created')]);
      const writes: Promise<void>[] = [];
      let record = run;
      // Out of order and interleaved with record updates, as a run's reports may come.
      for (const seq of [3, 2, 5, 4, 6, 8, 7, 9, 10, 12, 11]) {
        writes.push(s.store.appendEvent(run.id, event(seq, `e${seq}`)));
        if (seq % 3 === 0) {
          const next = { ...record, output: { seq } };
          writes.push(s.store.update(record, next));
          record = next;
        }
      }
      // The same seq again: the later one is what is stored (as sent one by one in this order).
      writes.push(s.store.appendEvent(run.id, event(5, 'e5-again')));
      const detail = { ...detailOf(run), trace: [{ type: 'last' }] };
      const done = { ...record, status: 'completed' as const, completedAt: run.createdAt + 5 };
      writes.push(s.store.update(record, done, detail));
      await writes[0];
      assert.ok(
        (await s.store.events(run.id)).some((e) => e.seq === 3),
        'stored once resolved',
      );
      await Promise.all(writes);
      assert.deepEqual(
        (await s.store.events(run.id)).map((e) => `${e.seq}:${e.type}`),
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12].map((seq) =>
          seq === 1 ? '1:run.created' : seq === 5 ? '5:e5-again' : `${seq}:e${seq}`,
        ),
      );
      assert.deepEqual(await s.store.get(run.id), done);
      assert.deepEqual(await s.store.getDetail(run.id), detail);
      assert.equal(await s.store.lastEventSeq(run.id), 12);
      const q = base({ tenant: 't7' });
      assert.deepEqual(await all({ ...q, statuses: ['running'] }), []);
      assert.deepEqual(await all({ ...q, statuses: ['completed'] }), [run.id]);
    });

    it('unfinished lists every tenant’s runs that are not terminal, oldest first', async () => {
      const got = await s.store.unfinished();
      const terminal = new Set(['completed', 'failed', 'cancelled', 'rejected']);
      assert.ok(got.every((r) => !terminal.has(r.status)));
      const ids = got.map((r) => r.id);
      for (const r of [...mine, ...theirs].filter((x) => !terminal.has(x.status)))
        assert.ok(ids.includes(r.id), `${r.tenant} ${r.status} run listed`);
      for (let i = 1; i < got.length; i++)
        assert.ok(
          got[i - 1]!.createdAt < got[i]!.createdAt ||
            (got[i - 1]!.createdAt === got[i]!.createdAt && got[i - 1]!.id < got[i]!.id),
          'oldest first',
        );
    });
  });
}
