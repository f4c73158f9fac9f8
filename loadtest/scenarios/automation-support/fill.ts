// Synthetic stored runs for the list benchmark and load test: written straight through the
// service's own RunStore (records, details and index entries), so listing sees real data.

import { openAutomationDb } from '../../../src/automation/db.js';
import { newRunId, sampleRank } from '../../../src/automation/runs/ids.js';
import { LmdbRunStore } from '../../../src/automation/runs/store.js';
import { emptyDetail, type RunRecord, type RunStatus } from '../../../src/automation/runs/types.js';

const STATUSES: RunStatus[] = ['completed', 'completed', 'completed', 'failed', 'cancelled'];

export function syntheticRun(i: number, start: number): RunRecord {
  const createdAt = start + i;
  const id = newRunId(createdAt);
  const agent = i % 5 === 0;
  return {
    id,
    tenant: 'default',
    type: agent ? 'agent' : 'workflow',
    automationId: agent ? 'aut_agent' : `aut_wf_${i % 3}`,
    slug: agent ? 'echo-agent' : `wf-${i % 3}`,
    name: agent ? 'Echo agent' : `Workflow ${i % 3}`,
    version: '1.0.0',
    versionId: null,
    git: {
      requestedRef: 'latest',
      resolvedRef: 'x@1.0.0',
      resolvedTag: 'x@1.0.0',
      commitSha: '0'.repeat(40),
    },
    model: agent ? 'builtin:echo' : null,
    status: STATUSES[i % STATUSES.length]!,
    createdAt,
    startedAt: createdAt,
    completedAt: createdAt + 5,
    cancelRequestedAt: null,
    sampleRank: sampleRank('default', id),
    trigger: { type: i % 10 === 0 ? 'experiment' : 'api', by: i % 7 === 0 ? 'bob' : 'admin' },
    batchId: i % 10 === 0 ? `batch-${Math.floor(i / 1000)}` : null,
    exampleId: i % 10 === 0 ? `example-${i % 100}` : null,
    output: { n: i },
    error: null,
    files: [],
    schemaValid: true,
    retry: { number: 0, previousRunId: null, nextRunId: null },
    review: null,
    timeoutMs: 60_000,
  };
}

/** Writes `count` runs into the automation LMDB at `path`, 5000 per transaction. */
export async function fillRuns(path: string, count: number): Promise<void> {
  const db = openAutomationDb(path);
  const store = new LmdbRunStore(db);
  const start = Date.now() - count - 60_000;
  try {
    for (let done = 0; done < count;) {
      const n = Math.min(5000, count - done);
      const writes: Promise<void>[] = [];
      for (let i = done; i < done + n; i++) {
        writes.push(store.create(syntheticRun(i, start), emptyDetail(), []));
      }
      await Promise.all(writes);
      done += n;
    }
  } finally {
    await db.close();
  }
}
