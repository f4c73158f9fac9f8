// The RunQueue contract: both adapters (the in-process queue over LMDB, the PostgreSQL queue)
// pass the same cases, through the port the run service uses. Each case opens a fresh queue and
// run store. "Lapse" is the port's forget(): the holder gives the run up without a write, as a
// node whose lease ran out; the run is then taken over by the next claim (on PostgreSQL once the
// lease on the database clock has expired, so those cases wait for it).

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { QueueFullError, type QueueClaim, type RunQueue } from '../../../src/automation/runs/queue.js';
import type { RunStore } from '../../../src/automation/runs/store.js';
import { emptyDetail, type RunEvent, type RunRecord } from '../../../src/automation/runs/types.js';
import { waitUntil, withinHang } from '../../helpers/wait.js';
import { contractRun } from './run-store.contract.js';

export interface RunQueueUnderTest {
  queue: RunQueue;
  store: RunStore;
  /** When the database says the run's lease ends (ms); undefined for a queue without leases. */
  leaseExpiry(runId: string): Promise<number | undefined>;
  close(): Promise<void>;
}

export interface QueueLimits {
  tenantConcurrency: number;
  automationConcurrency: number;
}

const NO_LIMITS: QueueLimits = { tenantConcurrency: 0, automationConcurrency: 0 };

let n = 0;
function queuedRun(tenant = 't1', automationId = 'wf_a'): RunRecord {
  return {
    ...contractRun(tenant, ++n),
    automationId,
    status: 'pending',
    startedAt: null,
    completedAt: null,
    output: null,
    error: null,
    errorCode: null,
  };
}

const created = (run: RunRecord): RunEvent[] => [
  { seq: 1, type: 'run.created', timestamp: new Date(run.createdAt).toISOString(), status: 'created' },
];

function endOf(
  run: RunRecord,
  output: unknown,
): { record: RunRecord; detail: ReturnType<typeof emptyDetail>; events: RunEvent[] } {
  const record: RunRecord = { ...run, status: 'completed', completedAt: Date.now(), output };
  const detail = { ...emptyDetail(), trace: [{ type: 'end', output }] };
  return {
    record,
    detail,
    events: [{ seq: 2, type: 'run.completed', timestamp: new Date().toISOString(), status: 'completed' }],
  };
}

export function runQueueContract(
  name: string,
  open: (limits: QueueLimits) => Promise<RunQueueUnderTest>,
  skip: string | false = false,
): void {
  describe(`RunQueue contract: ${name}`, { skip }, () => {
    async function withQueue(
      limits: QueueLimits,
      body: (t: RunQueueUnderTest) => Promise<void>,
    ): Promise<void> {
      const t = await open(limits);
      try {
        await body(t);
      } finally {
        await t.close();
      }
    }

    async function add(
      t: RunQueueUnderTest,
      count: number,
      tenant?: string,
      automation?: string,
    ): Promise<RunRecord[]> {
      const runs: RunRecord[] = [];
      for (let i = 0; i < count; i++) {
        const run = queuedRun(tenant, automation);
        await t.queue.createQueued(run, emptyDetail(), created(run));
        runs.push(run);
      }
      return runs;
    }

    it('stores and queues a run in one step, wakes, and hands it to exactly one claim', () =>
      withQueue(NO_LIMITS, async (t) => {
        let woken = 0;
        t.queue.onWake(() => woken++);
        const [run] = await add(t, 1);
        assert.deepEqual(await t.store.get(run!.id), run);
        assert.deepEqual(
          (await t.store.events(run!.id)).map((e) => e.type),
          ['run.created'],
        );
        assert.equal(await t.queue.queuedCount(10), 1);
        await waitUntil('a wake', () => woken > 0);
        const claims = await t.queue.claim(5);
        assert.deepEqual(claims.map(portFields), [
          { runId: run!.id, attempt: 1, takeover: false, previousNode: null, cancelRequested: false },
        ]);
        assert.equal(await t.queue.queuedCount(10), 0);
        assert.deepEqual(await t.queue.claim(5), []);
      }));

    it('claims several runs at once, oldest first, and counts the rest up to a bound', () =>
      withQueue(NO_LIMITS, async (t) => {
        const runs = await add(t, 5);
        assert.equal(await t.queue.queuedCount(3), 3);
        const first = await t.queue.claim(3);
        assert.deepEqual(
          first.map((c) => c.runId),
          runs.slice(0, 3).map((r) => r.id),
        );
        assert.equal(await t.queue.queuedCount(10), 2);
        const rest = await t.queue.claim(10);
        assert.deepEqual(
          rest.map((c) => c.runId),
          runs.slice(3).map((r) => r.id),
        );
      }));

    it('keeps a claimed run held (leases renewed) until its end is written with the done state', () =>
      withQueue(NO_LIMITS, async (t) => {
        const [run] = await add(t, 1);
        await t.queue.claim(1);
        const lease = await t.leaseExpiry(run!.id);
        if (lease !== undefined)
          await waitUntil(
            'a renewal of the lease',
            async () => ((await t.leaseExpiry(run!.id)) ?? 0) > lease,
          );
        assert.deepEqual(await t.queue.claim(1), [], 'a held run is not claimed again');
        const waiting = t.queue.waitForDone(run!.id);
        const end = endOf(run!, { ok: 1 });
        assert.equal(await t.queue.completeWith(run!.id, 'completed', end), true);
        await withinHang('the done of the run', waiting);
        assert.deepEqual(await t.store.get(run!.id), end.record);
        assert.deepEqual((await t.store.getDetail(run!.id))?.trace, [{ type: 'end', output: { ok: 1 } }]);
        assert.deepEqual(
          (await t.store.events(run!.id)).map((e) => e.type),
          ['run.created', 'run.completed'],
        );
        // Already done: a waiter that comes later hears it at once.
        await withinHang('the done of an ended run', t.queue.waitForDone(run!.id));
      }));

    it('takes a lapsed run over (attempt + 1, naming the previous node) and fences the old holder', () =>
      withQueue(NO_LIMITS, async (t) => {
        const [run] = await add(t, 1);
        const [claim] = await t.queue.claim(1);
        assert.equal(claim!.attempt, 1);
        t.queue.forget(run!.id);
        // The old holder's end is not written: the run is not its own any more.
        assert.equal(await t.queue.completeWith(run!.id, 'completed', endOf(run!, 'stale')), false);
        assert.equal((await t.store.get(run!.id))?.status, 'pending');
        const takeover = await waitUntil('the takeover of the lapsed run', async () => {
          const got: QueueClaim[] = await t.queue.claim(1);
          return got[0];
        });
        assert.equal(takeover.runId, run!.id);
        assert.equal(takeover.takeover, true);
        assert.equal(takeover.attempt, 2);
        assert.equal(takeover.previousNode, t.queue.nodeId);
        const end = endOf(run!, 'fresh');
        assert.equal(await t.queue.completeWith(run!.id, 'completed', end), true);
        assert.deepEqual((await t.store.get(run!.id))?.output, 'fresh');
      }));

    it('puts a released run back in the queue for the next claim', () =>
      withQueue(NO_LIMITS, async (t) => {
        const [run] = await add(t, 1);
        await t.queue.claim(1);
        assert.equal(await t.queue.release(run!.id), true);
        assert.equal(await t.queue.release(run!.id), false, 'no longer held');
        assert.equal(await t.queue.queuedCount(10), 1);
        const [again] = await t.queue.claim(1);
        assert.equal(again?.runId, run!.id);
        assert.equal(again?.takeover, false);
        assert.equal(again?.attempt, 2);
      }));

    it('cancels: a queued run leaves the queue, a claimed one is signalled to its holder', () =>
      withQueue(NO_LIMITS, async (t) => {
        const cancels: string[] = [];
        t.queue.onCancel((id) => cancels.push(id));
        const [running, queued] = await add(t, 2);
        await t.queue.claim(1);
        const waiting = t.queue.waitForDone(queued!.id);
        assert.deepEqual(await t.queue.cancel(queued!.id), { state: 'dequeued' });
        await withinHang('the done of the dequeued run', waiting);
        assert.deepEqual(await t.queue.claim(5), [], 'a dequeued run is not claimed');
        const signalled = await t.queue.cancel(running!.id);
        assert.equal(signalled.state, 'signalled');
        await waitUntil('the cancel signal', () => cancels.includes(running!.id));
        assert.deepEqual(await t.queue.cancel('exec_unknown0000000000000000'), { state: 'unknown' });
        assert.equal(await t.queue.completeWith(running!.id, 'cancelled', endOf(running!, null)), true);
        assert.deepEqual(await t.queue.cancel(running!.id), { state: 'finished' });
      }));

    it('claims within the tenant and automation concurrency limits', () =>
      withQueue({ tenantConcurrency: 1, automationConcurrency: 2 }, async (t) => {
        const [a1, a2] = await add(t, 2, 't1', 'wf_a');
        const [b1] = await add(t, 1, 't2', 'wf_a');
        const [c1] = await add(t, 1, 't3', 'wf_a');
        const first = await t.queue.claim(10);
        // One run of t1 (tenant limit), and wf_a runs only two at once (automation limit).
        assert.deepEqual(
          first.map((c) => c.runId),
          [a1!.id, b1!.id],
        );
        assert.equal(await t.queue.completeWith(a1!.id, 'completed', endOf(a1!, 1)), true);
        const next = await t.queue.claim(10);
        assert.deepEqual(
          next.map((c) => c.runId),
          [a2!.id],
        );
        assert.equal(await t.queue.completeWith(b1!.id, 'completed', endOf(b1!, 1)), true);
        assert.deepEqual(
          (await t.queue.claim(10)).map((c) => c.runId),
          [c1!.id],
        );
      }));

    it('stores and queues runs started together, and claims as many as asked in one claim', () =>
      withQueue(NO_LIMITS, async (t) => {
        const runs = Array.from({ length: 8 }, () => queuedRun());
        await Promise.all(runs.map((r) => t.queue.createQueued(r, emptyDetail(), created(r))));
        for (const r of runs) assert.deepEqual(await t.store.get(r.id), r);
        assert.equal(await t.queue.queuedCount(100), 8);
        // Two claims at once never hand out the same run.
        const [a, b] = await Promise.all([t.queue.claim(5), t.queue.claim(5)]);
        const ids = [...a, ...b].map((c) => c.runId);
        assert.equal(ids.length, 8);
        assert.deepEqual(new Set(ids), new Set(runs.map((r) => r.id)));
        for (const c of [...a, ...b]) {
          assert.equal(c.attempt, 1);
          // What an adapter reads with the claim is what is stored.
          if (c.stored) {
            assert.deepEqual(c.stored.record, await t.store.get(c.runId));
            assert.deepEqual(c.stored.detail, await t.store.getDetail(c.runId));
            assert.equal(c.stored.lastSeq, 1);
          }
        }
        assert.equal(await t.queue.queuedCount(100), 0);
      }));

    it('refuses a start that would queue past maxQueued, in the step that stores it', () =>
      withQueue(NO_LIMITS, async (t) => {
        await add(t, 2);
        // Started together (one batch where the adapter batches): one more fits under 3.
        const starts = Array.from({ length: 3 }, () => queuedRun());
        const outcomes = await Promise.allSettled(
          starts.map((r) => t.queue.createQueued(r, emptyDetail(), created(r), { maxQueued: 3 })),
        );
        const stored = starts.filter((_, i) => outcomes[i]!.status === 'fulfilled');
        assert.equal(stored.length, 1, 'exactly one start fits under the bound');
        for (const [i, o] of outcomes.entries()) {
          if (o.status === 'fulfilled') continue;
          assert.ok(o.reason instanceof QueueFullError, String(o.reason));
          assert.equal(await t.store.get(starts[i]!.id), undefined, 'a refused run is not stored');
        }
        assert.equal(await t.queue.queuedCount(100), 3);
        await assert.rejects(
          t.queue.createQueued(queuedRun(), emptyDetail(), [], { maxQueued: 3 }),
          QueueFullError,
        );
        // Without a bound, or with room under it, runs are stored as before.
        await t.queue.createQueued(queuedRun(), emptyDetail(), [], { maxQueued: 5 });
        await add(t, 1);
        assert.equal(await t.queue.queuedCount(100), 5);
      }));

    it('writes the ends of runs finishing together, each only while its holder still holds it', () =>
      withQueue(NO_LIMITS, async (t) => {
        const runs = await add(t, 6);
        assert.equal((await t.queue.claim(6)).length, 6);
        const lapsed = runs[5]!;
        t.queue.forget(lapsed.id);
        const waiting = runs.map((r) => t.queue.waitForDone(r.id));
        const ends = runs.map((r, i) => endOf(r, { i }));
        const written = await Promise.all(
          runs.map((r, i) => t.queue.completeWith(r.id, 'completed', ends[i]!)),
        );
        assert.deepEqual(written, [true, true, true, true, true, false]);
        await withinHang('the done of the ended runs', Promise.all(waiting.slice(0, 5)));
        for (const [i, r] of runs.slice(0, 5).entries()) {
          assert.deepEqual(await t.store.get(r.id), ends[i]!.record);
          assert.deepEqual((await t.store.getDetail(r.id))?.trace, [{ type: 'end', output: { i } }]);
          assert.deepEqual(
            (await t.store.events(r.id)).map((e) => e.type),
            ['run.created', 'run.completed'],
          );
        }
        // The lapsed run's end was not written: it is taken over and ended by its new holder.
        assert.equal((await t.store.get(lapsed.id))?.status, 'pending');
        assert.deepEqual(
          (await t.store.events(lapsed.id)).map((e) => e.type),
          ['run.created'],
        );
        const takeover = await waitUntil('the takeover of the lapsed run', async () => {
          const got: QueueClaim[] = await t.queue.claim(1);
          return got[0];
        });
        assert.equal(takeover.runId, lapsed.id);
        assert.equal(await t.queue.completeWith(lapsed.id, 'completed', ends[5]!), true);
        await withinHang('the done of the taken-over run', waiting[5]!);
        assert.deepEqual(await t.store.get(lapsed.id), ends[5]!.record);
      }));
  });
}

/** A claim as the port defines it (an adapter may say more). */
function portFields(c: QueueClaim): QueueClaim {
  const { runId, attempt, takeover, previousNode, cancelRequested } = c;
  return { runId, attempt, takeover, previousNode, cancelRequested };
}
