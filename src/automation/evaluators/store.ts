// Where evaluator configurations are kept. Callers depend on the EvaluatorConfigStore interface;
// the LMDB class keeps them in the named database `evaluator-configs` under the key
// [tenant, automationId]. Only the YAML text as given is stored (so GET answers exactly what was
// PUT); validating and parsing it is the evaluator service's job (service.ts).

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';

export interface StoredEvaluatorConfig {
  tenant: string;
  automationId: string;
  yaml: string;
  updatedAt: string;
}

export interface EvaluatorConfigStore {
  /** The tenant's config of the automation, or undefined (another tenant's is not found either). */
  get(tenant: string, automationId: string): Promise<StoredEvaluatorConfig | undefined>;
  /** Stores the record, replacing the tenant's config of the same automation. */
  put(record: StoredEvaluatorConfig): Promise<void>;
}

export class LmdbEvaluatorConfigStore implements EvaluatorConfigStore {
  private readonly table: Database<StoredEvaluatorConfig, [string, string]>;

  constructor(db: AutomationDb) {
    this.table = db.root.openDB<StoredEvaluatorConfig, [string, string]>({ name: 'evaluator-configs' });
  }

  async get(tenant: string, automationId: string): Promise<StoredEvaluatorConfig | undefined> {
    return this.table.get([tenant, automationId]);
  }

  async put(record: StoredEvaluatorConfig): Promise<void> {
    await this.table.put([record.tenant, record.automationId], record);
  }
}
