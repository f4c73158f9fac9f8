// Experiments in LMDB (named database `experiments`, key: experiment id).

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import type { ExperimentRecord } from './types.js';

export class ExperimentStore {
  private readonly table: Database<ExperimentRecord, string>;

  constructor(db: AutomationDb) {
    this.table = db.root.openDB<ExperimentRecord, string>({ name: 'experiments' });
  }

  get(id: string): ExperimentRecord | undefined {
    return this.table.get(id);
  }

  put(record: ExperimentRecord): Promise<boolean> {
    return this.table.put(record.id, record);
  }

  /** Newest first. */
  list(automationId: string): ExperimentRecord[] {
    const out: ExperimentRecord[] = [];
    for (const { value } of this.table.getRange()) if (value.automationId === automationId) out.push(value);
    return out.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  }

  unfinished(): ExperimentRecord[] {
    const out: ExperimentRecord[] = [];
    for (const { value } of this.table.getRange()) if (value.status !== 'completed') out.push(value);
    return out;
  }
}
