// Where experiments are kept. Callers depend on the ExperimentStore interface; the LMDB class
// keeps them in the named database `experiments` under the key [tenant, experimentId], so every
// read names the caller's tenant and another tenant's experiment is simply absent.

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import type { ExperimentRecord } from './types.js';

export interface ExperimentStore {
  /** The tenant's experiment, or undefined (another tenant's is not found either). */
  get(tenant: string, id: string): Promise<ExperimentRecord | undefined>;
  /**
   * Stores the record, replacing one of the same (tenant, id). The value is taken as it is when
   * put is called: the caller may change its object afterwards.
   */
  put(record: ExperimentRecord): Promise<void>;
  /** The tenant's experiments of an automation, newest first (createdAt, then id, both descending). */
  list(tenant: string, automationId: string): Promise<ExperimentRecord[]>;
  /** Of every tenant, not yet completed: read once at start to close what the last stop cut off. */
  unfinished(): Promise<ExperimentRecord[]>;
}

export class LmdbExperimentStore implements ExperimentStore {
  private readonly table: Database<ExperimentRecord, [string, string]>;

  constructor(db: AutomationDb) {
    this.table = db.root.openDB<ExperimentRecord, [string, string]>({ name: 'experiments' });
  }

  async get(tenant: string, id: string): Promise<ExperimentRecord | undefined> {
    return this.table.get([tenant, id]);
  }

  async put(record: ExperimentRecord): Promise<void> {
    await this.table.put([record.tenant, record.id], record);
  }

  async list(tenant: string, automationId: string): Promise<ExperimentRecord[]> {
    const out: ExperimentRecord[] = [];
    for (const { value } of this.table.getRange({ start: [tenant, ''], end: [tenant, '\uffff'] }))
      if (value.automationId === automationId) out.push(value);
    return out.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  }

  async unfinished(): Promise<ExperimentRecord[]> {
    const out: ExperimentRecord[] = [];
    for (const { value } of this.table.getRange()) if (value.status !== 'completed') out.push(value);
    return out;
  }
}
