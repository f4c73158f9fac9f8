// Every automation store contract (test/automation/contracts/) on the LMDB implementations, each
// suite on a fresh LMDB environment in a temp directory.

import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { openAutomationDb, type AutomationDb } from '../../src/automation/db.js';
import { LmdbEvaluatorConfigStore } from '../../src/automation/evaluators/store.js';
import { LmdbExperimentStore } from '../../src/automation/experiments/store.js';
import { LmdbAutomationStore } from '../../src/automation/registry/store.js';
import { LmdbRegistrySourceStore } from '../../src/automation/registry/source-store.js';
import { LmdbReviewStore } from '../../src/automation/reviews/store.js';
import { LmdbScoreStore } from '../../src/automation/runs/scores.js';
import { LmdbRunStore } from '../../src/automation/runs/store.js';
import { emptyDetail } from '../../src/automation/runs/types.js';
import { LmdbExampleStore } from '../../src/automation/datasets/store.js';
import { LocalBlobStore } from '../../src/automation/files/blobs.js';
import { LmdbFileStore } from '../../src/automation/files/store.js';
import { blobStoreContract } from './contracts/blob-store.contract.js';
import { exampleStoreContract } from './contracts/example-store.contract.js';
import { fileStoreContract } from './contracts/file-store.contract.js';
import { automationStoreContract } from './contracts/automation-store.contract.js';
import { evaluatorConfigStoreContract } from './contracts/evaluator-config-store.contract.js';
import { experimentStoreContract } from './contracts/experiment-store.contract.js';
import { registrySourceStoreContract } from './contracts/registry-source-store.contract.js';
import { reviewStoreContract } from './contracts/review-store.contract.js';
import { contractRun, runStoreContract } from './contracts/run-store.contract.js';
import { scoreStoreContract } from './contracts/score-store.contract.js';
import { emailMessageStoreContract } from './contracts/email-message-store.contract.js';
import { LmdbEmailMessageStore } from '../../src/automation/triggers/email/message-store.js';

/** A fresh LMDB environment and a close that removes it. */
function openTemp(): { db: AutomationDb; dir: string; close: () => Promise<void> } {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-stores-'));
  const db = openAutomationDb(join(dir, 'meta.lmdb'));
  const close = async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  };
  return { db, dir, close };
}

/** A contract factory: the store `build` makes on a fresh environment. */
const onLmdb =
  <S>(build: (db: AutomationDb) => S) =>
  async () => {
    const t = openTemp();
    return { store: build(t.db), close: t.close };
  };

runStoreContract(
  'LMDB',
  onLmdb((db) => new LmdbRunStore(db)),
);

scoreStoreContract(
  'LMDB',
  onLmdb((db) => new LmdbScoreStore(db)),
);

experimentStoreContract(
  'LMDB',
  onLmdb((db) => new LmdbExperimentStore(db)),
);

evaluatorConfigStoreContract(
  'LMDB',
  onLmdb((db) => new LmdbEvaluatorConfigStore(db)),
);

reviewStoreContract('LMDB', async () => {
  const t = openTemp();
  return { store: new LmdbReviewStore(t.db), runs: new LmdbRunStore(t.db), close: t.close };
});

automationStoreContract(
  'LMDB',
  onLmdb((db) => new LmdbAutomationStore(db)),
);

emailMessageStoreContract(
  'LMDB',
  onLmdb((db) => new LmdbEmailMessageStore(db)),
);

blobStoreContract('local directory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-blobs-'));
  const close = async () => rmSync(dir, { recursive: true, force: true });
  return { store: new LocalBlobStore(dir), close };
});

fileStoreContract('LMDB', async () => {
  const t = openTemp();
  return { store: new LmdbFileStore(t.db, new LocalBlobStore(join(t.dir, 'blobs'))), close: t.close };
});

exampleStoreContract('LMDB', async () => {
  const t = openTemp();
  const blobs = new LocalBlobStore(join(t.dir, 'blobs'));
  return { store: new LmdbExampleStore(t.db, blobs), blobs, close: t.close };
});

registrySourceStoreContract('LMDB', async () => {
  const t = openTemp();
  const blobs = new LocalBlobStore(join(t.dir, 'blobs'));
  return { store: new LmdbRegistrySourceStore(t.db, blobs), blobs, close: t.close };
});

describe('LmdbRunStore scan limit', () => {
  it('answers short pages below the limit and the cursor carries the scan on', async () => {
    const t = openTemp();
    try {
      const store = new LmdbRunStore(t.db, { listScanLimit: 3 });
      const runs = Array.from({ length: 10 }, (_, i) => contractRun('t1', i));
      for (const r of runs) await store.create(r, emptyDetail(), []);
      const q = { tenant: 't1', limit: 5, sort: 'createdAt', order: 'asc', types: ['agent'] } as const;
      const seen: string[] = [];
      let page = await store.list({ ...q, types: [...q.types] });
      assert.ok(page.runs.length < 5 && page.nextCursor !== null, 'the first page stops at the scan limit');
      for (;;) {
        seen.push(...page.runs.map((r) => r.id));
        if (page.nextCursor === null) break;
        page = await store.list({ ...q, types: [...q.types], cursor: page.nextCursor });
      }
      assert.deepEqual(
        seen,
        runs.filter((r) => r.type === 'agent').map((r) => r.id),
      );
    } finally {
      await t.close();
    }
  });
});

describe('LmdbRunStore end of a run', () => {
  it('writes the last events, the record and the detail in one go, index entries moved from the stored record', async () => {
    const t = openTemp();
    try {
      const store = new LmdbRunStore(t.db);
      const run = {
        ...contractRun('t1', 1),
        status: 'pending' as const,
        startedAt: null,
        completedAt: null,
      };
      const created = { seq: 1, type: 'run.created', timestamp: new Date(run.createdAt).toISOString() };
      await store.create(run, emptyDetail(), [created]);
      // Written through while it ran: the end moves index entries from this record, not the first.
      const running = { ...run, status: 'running' as const, startedAt: run.createdAt + 1 };
      await store.update(run, running);
      const ended = { ...running, status: 'completed' as const, completedAt: run.createdAt + 2, output: 1 };
      const last = { seq: 2, type: 'run.completed', timestamp: new Date(ended.completedAt).toISOString() };
      const detail = { ...emptyDetail(), trace: [{ type: 'end' }] };
      await store.end(ended, detail, [last]);
      assert.deepEqual(await store.get(run.id), ended);
      assert.deepEqual(await store.getDetail(run.id), detail);
      assert.deepEqual(
        (await store.events(run.id)).map((e) => e.type),
        ['run.created', 'run.completed'],
      );
      const byStatus = async (status: string) =>
        (
          await store.list({ tenant: 't1', limit: 10, sort: 'createdAt', order: 'asc', statuses: [status] })
        ).runs.map((r) => r.id);
      assert.deepEqual(await byStatus('completed'), [run.id]);
      assert.deepEqual(await byStatus('running'), []);
      assert.deepEqual(await byStatus('pending'), []);
      assert.deepEqual(
        (await store.unfinished()).map((r) => r.id),
        [],
      );
    } finally {
      await t.close();
    }
  });
});
