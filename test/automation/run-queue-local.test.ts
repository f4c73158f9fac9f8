// The RunQueue contract on the in-process queue (one node, LMDB run store in a temp dir).

import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAutomationDb } from '../../src/automation/db.js';
import { LocalRunQueue, type LocalQueueStore } from '../../src/automation/runs/local-queue.js';
import { LmdbRunStore } from '../../src/automation/runs/store.js';
import { emptyDetail } from '../../src/automation/runs/types.js';
import { describe, it } from 'node:test';
import { runQueueContract } from './contracts/run-queue.contract.js';
import { contractRun } from './contracts/run-store.contract.js';
import { waitUntil } from '../helpers/wait.js';

runQueueContract('in-process (LMDB)', async (limits) => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-run-queue-'));
  const db = openAutomationDb(join(dir, 'meta.lmdb'));
  const store = new LmdbRunStore(db);
  const queue = new LocalRunQueue(store, limits);
  return {
    queue,
    store,
    leaseExpiry: () => Promise.resolve(undefined),
    async close() {
      queue.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('in-process queue: a creation that does not commit', () => {
  // A failed LMDB commit cannot be produced on demand: the store's create is held, then failed.
  function open() {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-run-queue-'));
    const db = openAutomationDb(join(dir, 'meta.lmdb'));
    const store = new LmdbRunStore(db);
    let fail!: (err: Error) => void;
    const held: LocalQueueStore = {
      create: () => new Promise<void>((_, reject) => (fail = reject)),
      createDeferred: (run, detail, events, flushMs) => store.createDeferred(run, detail, events, flushMs),
      flush: (id) => store.flush(id),
      end: (next, detail, events) => store.end(next, detail, events),
      get: (id) => store.get(id),
      unfinished: () => store.unfinished(),
    };
    const queue = new LocalRunQueue(held, { tenantConcurrency: 0, automationConcurrency: 0 });
    return {
      queue,
      store,
      fail: (err: Error) => fail(err),
      async close() {
        queue.close();
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const pending = () => ({ ...contractRun('t1', 1), status: 'pending' as const, completedAt: null });

  it('takes a run still queued out of the queue', async () => {
    const t = open();
    try {
      const run = pending();
      const creating = t.queue.createQueued(run, emptyDetail(), []);
      assert.equal(await t.queue.queuedCount(10), 1, 'queued while its commit is under way');
      t.fail(new Error('commit failed'));
      await assert.rejects(creating, /commit failed/);
      assert.equal(await t.queue.queuedCount(10), 0);
      assert.deepEqual(await t.queue.claim(5), []);
    } finally {
      await t.close();
    }
  });

  it('tells the node executing it that it is lost; its end is refused and it is not queued again', async () => {
    const t = open();
    try {
      const lost: string[] = [];
      t.queue.onLost((id) => lost.push(id));
      const run = pending();
      const creating = t.queue.createQueued(run, emptyDetail(), []);
      const [claim] = await t.queue.claim(1);
      assert.equal(claim?.runId, run.id, 'claimable while its commit is under way');
      t.fail(new Error('commit failed'));
      await assert.rejects(creating, /commit failed/);
      assert.deepEqual(lost, [run.id]);
      const end = {
        record: { ...run, status: 'completed' as const, completedAt: Date.now() },
        detail: emptyDetail(),
        events: [],
      };
      assert.equal(await t.queue.completeWith(run.id, 'completed', end), false, 'nothing written');
      assert.equal(await t.store.get(run.id), undefined);
      t.queue.forget(run.id);
      assert.equal(await t.queue.queuedCount(10), 0);
      assert.deepEqual(await t.queue.claim(5), []);
    } finally {
      await t.close();
    }
  });
});

describe('in-process queue: a run whose end alone is acknowledged (a synchronous start)', () => {
  function open(deferredFlushMs: number) {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-run-queue-'));
    const db = openAutomationDb(join(dir, 'meta.lmdb'));
    const store = new LmdbRunStore(db);
    const queue = new LocalRunQueue(store, {
      tenantConcurrency: 0,
      automationConcurrency: 0,
      deferredFlushMs,
    });
    return {
      queue,
      store,
      db,
      async close() {
        queue.close();
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  const pending = () => ({ ...contractRun('t1', 1), status: 'pending' as const, completedAt: null });
  const event = (seq: number, type: string) => ({ seq, type, timestamp: new Date().toISOString() });
  /** The run ids a listing of tenant t1 finds (with these statuses, when given). */
  const listed = async (t: ReturnType<typeof open>, statuses?: ('pending' | 'running')[]) =>
    (
      await t.store.list({
        tenant: 't1',
        limit: 10,
        order: 'desc',
        sort: 'createdAt',
        ...(statuses ? { statuses } : {}),
      })
    ).runs.map((r) => r.id);

  it('is created, changed and ended in one write, read by id all along', async () => {
    // A flush far beyond the test: only the end writes the run.
    const t = open(3_600_000);
    try {
      const run = pending();
      await t.queue.createQueued(run, emptyDetail(), [event(1, 'run.created')], { endAcknowledged: true });
      const [claim] = await t.queue.claim(1);
      assert.equal(claim?.runId, run.id);
      assert.equal(claim?.stored?.record.id, run.id, 'the claim hands the run over, nothing read back');
      const running = { ...run, status: 'running' as const, startedAt: Date.now() };
      void t.store.update(run, running);
      await t.store.appendEvent(run.id, event(2, 'run.started'));
      assert.equal((await t.store.get(run.id))?.status, 'running', 'read by id before it is written');
      assert.deepEqual(
        (await t.store.events(run.id)).map((e) => e.seq),
        [1, 2],
      );
      assert.equal(t.db.runs.get(run.id), undefined, 'not written yet');
      assert.deepEqual(await listed(t), [], 'a listing sees it once written');
      const ended = { ...running, status: 'completed' as const, completedAt: Date.now() };
      assert.equal(
        await t.queue.completeWith(run.id, 'completed', {
          record: ended,
          detail: emptyDetail(),
          events: [event(3, 'run.completed')],
        }),
        true,
      );
      assert.equal((t.db.runs.get(run.id) as { status: string }).status, 'completed');
      assert.deepEqual(await listed(t), [run.id]);
      assert.deepEqual(await listed(t, ['pending', 'running']), [], 'indexed by its final state only');
      assert.deepEqual(
        (await t.store.events(run.id)).map((e) => e.type),
        ['run.created', 'run.started', 'run.completed'],
      );
    } finally {
      await t.close();
    }
  });

  it('is written as it is when its creation must be acknowledged after all, and then ends as any run', async () => {
    const t = open(3_600_000);
    try {
      const run = pending();
      await t.queue.createQueued(run, emptyDetail(), [event(1, 'run.created')], { endAcknowledged: true });
      await t.queue.claim(1);
      const running = { ...run, status: 'running' as const, startedAt: Date.now() };
      void t.store.update(run, running);
      await t.queue.committed(run.id);
      assert.equal((t.db.runs.get(run.id) as { status: string }).status, 'running');
      assert.deepEqual(await listed(t, ['running']), [run.id]);
      const ended = { ...running, status: 'completed' as const, completedAt: Date.now() };
      await t.queue.completeWith(run.id, 'completed', { record: ended, detail: emptyDetail(), events: [] });
      assert.deepEqual(await listed(t, ['running']), [], 'the running index entry moved by its end');
      assert.equal((t.db.runs.get(run.id) as { status: string }).status, 'completed');
    } finally {
      await t.close();
    }
  });

  it('is written by its flush deadline when it has not ended', async () => {
    const t = open(0);
    try {
      const run = pending();
      await t.queue.createQueued(run, emptyDetail(), [event(1, 'run.created')], { endAcknowledged: true });
      await waitUntil('the held creation to be written', () => t.db.runs.get(run.id) !== undefined);
      assert.deepEqual(await listed(t), [run.id]);
    } finally {
      await t.close();
    }
  });
});
