// The RunQueue contract on the in-process queue (one node, LMDB run store in a temp dir).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openAutomationDb } from '../../src/automation/db.js';
import { LocalRunQueue } from '../../src/automation/runs/local-queue.js';
import { LmdbRunStore } from '../../src/automation/runs/store.js';
import { runQueueContract } from './contracts/run-queue.contract.js';

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
