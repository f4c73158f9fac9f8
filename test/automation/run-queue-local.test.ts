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
