// Experiments in LMDB (named database `experiments`, key [tenant, experimentId]): every read
// names the caller's tenant, so another tenant's experiment is simply absent.

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import type { ExperimentRecord } from './types.js';

export class ExperimentStore {
  private readonly table: Database<ExperimentRecord, [string, string]>;

  constructor(db: AutomationDb) {
    this.table = db.root.openDB<ExperimentRecord, [string, string]>({ name: 'experiments' });
  }

  get(tenant: string, id: string): ExperimentRecord | undefined {
    return this.table.get([tenant, id]);
  }

  put(record: ExperimentRecord): Promise<boolean> {
    return this.table.put([record.tenant, record.id], record);
  }

  /** The tenant's experiments of an automation, newest first. */
  list(tenant: string, automationId: string): ExperimentRecord[] {
    const out: ExperimentRecord[] = [];
    for (const { value } of this.table.getRange({ start: [tenant, ''], end: [tenant, '\uffff'] }))
      if (value.automationId === automationId) out.push(value);
    return out.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  }

  /** Of every tenant: used once at start to close what the last stop cut off. */
  unfinished(): ExperimentRecord[] {
    const out: ExperimentRecord[] = [];
    for (const { value } of this.table.getRange()) if (value.status !== 'completed') out.push(value);
    return out;
  }
}
