// Runs in LMDB: the record (small, read by listings), its detail (input, steps, trace, usage),
// its events keyed (runId, seq) so they read back in order, and secondary index entries
// (field, value, tenant, createdAt, id) that list queries scan instead of the whole table. The
// tenant in the key keeps a listing inside the caller's tenant: it never reads another tenant's
// runs, and its cursor never points at one. An index entry's value is the run's sampleRank, so
// sample_rate skips runs without reading them.

import type { AutomationDb } from '../db.js';
import type { RunDetail, RunEvent, RunRecord } from './types.js';

export type IndexKey = [string, string, string, number, string];

export const INDEXED_FIELDS = ['source', 'status', 'type', 'trigger', 'by', 'batch', 'example'] as const;
export type IndexedField = (typeof INDEXED_FIELDS)[number] | 'all' | 'done';

export function indexKeys(run: RunRecord): IndexKey[] {
  const c = run.createdAt;
  const t = run.tenant;
  const keys: IndexKey[] = [
    ['all', '', t, c, run.id],
    ['source', run.automationId, t, c, run.id],
    ['status', run.status, t, c, run.id],
    ['type', run.type, t, c, run.id],
    ['trigger', run.trigger.type, t, c, run.id],
    ['by', run.trigger.by, t, c, run.id],
  ];
  if (run.batchId) keys.push(['batch', run.batchId, t, c, run.id]);
  if (run.exampleId) keys.push(['example', run.exampleId, t, c, run.id]);
  if (run.completedAt !== null) keys.push(['done', '', t, run.completedAt, run.id]);
  return keys;
}

const keyString = (k: IndexKey) => JSON.stringify(k);

export class RunStore {
  constructor(readonly db: AutomationDb) {}

  get(id: string): RunRecord | undefined {
    return this.db.runs.get(id) as RunRecord | undefined;
  }

  getDetail(id: string): RunDetail | undefined {
    return this.db.runDetails.get(id) as RunDetail | undefined;
  }

  /** Committed before it resolves, so an acknowledged run survives a crash. */
  create(run: RunRecord, detail: RunDetail, events: RunEvent[]): Promise<void> {
    return this.db.root.transaction(() => {
      this.db.runs.putSync(run.id, run);
      this.db.runDetails.putSync(run.id, detail);
      for (const key of indexKeys(run)) this.db.runIndex.putSync(key, run.sampleRank);
      for (const e of events) this.db.events.putSync([run.id, e.seq], e);
    });
  }

  /** Replaces the record, moving index entries whose key changed (status, completion). */
  update(previous: RunRecord, next: RunRecord, detail?: RunDetail): Promise<void> {
    const before = new Map(indexKeys(previous).map((k) => [keyString(k), k]));
    const after = new Map(indexKeys(next).map((k) => [keyString(k), k]));
    return this.db.root.transaction(() => {
      for (const [s, k] of before) if (!after.has(s)) this.db.runIndex.removeSync(k);
      for (const [s, k] of after) if (!before.has(s)) this.db.runIndex.putSync(k, next.sampleRank);
      this.db.runs.putSync(next.id, next);
      if (detail) this.db.runDetails.putSync(next.id, detail);
    });
  }

  appendEvent(runId: string, event: RunEvent): Promise<boolean> {
    return this.db.events.put([runId, event.seq], event);
  }

  events(runId: string): RunEvent[] {
    const out: RunEvent[] = [];
    for (const { value } of this.db.events.getRange({
      start: [runId, 0],
      end: [runId, Number.MAX_SAFE_INTEGER],
    })) {
      out.push(value as RunEvent);
    }
    return out;
  }

  lastEventSeq(runId: string): number {
    for (const { key } of this.db.events.getRange({
      start: [runId, Number.MAX_SAFE_INTEGER],
      end: [runId, 0],
      reverse: true,
      limit: 1,
    })) {
      return key[1];
    }
    return 0;
  }

  /** Runs (of every tenant) that were queued or running when the process stopped. */
  unfinished(): RunRecord[] {
    const out: RunRecord[] = [];
    for (const status of ['created', 'pending', 'running', 'waiting', 'finalizing']) {
      for (const { key } of this.db.runIndex.getRange({
        start: ['status', status, ''],
        end: ['status', status, '\uffff'],
      })) {
        const run = this.get(String(key[4]));
        if (run) out.push(run);
      }
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  }
}
