// Experiments and evaluator configurations in PostgreSQL: a row each under its tenant's key, the
// record as json; every read names the tenant, so another tenant's is simply absent.

import type { EvaluatorConfigStore, StoredEvaluatorConfig } from '../../evaluators/store.js';
import type { ExperimentStore } from '../../experiments/store.js';
import type { ExperimentRecord } from '../../experiments/types.js';
import type { PgDatabase } from '../pool.js';

export class PgExperimentStore implements ExperimentStore {
  constructor(private readonly db: PgDatabase) {}

  async get(tenant: string, id: string): Promise<ExperimentRecord | undefined> {
    const { rows } = await this.db.query<{ record: ExperimentRecord }>(
      'SELECT record FROM experiments WHERE tenant = $1 AND id = $2',
      [tenant, id],
    );
    return rows[0]?.record;
  }

  async put(record: ExperimentRecord): Promise<void> {
    // The parameter is serialised now, so later changes to the caller's object are not stored.
    await this.db.query(
      `INSERT INTO experiments (tenant, id, automation_id, status, created_at, record)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant, id) DO UPDATE SET automation_id = excluded.automation_id,
         status = excluded.status, created_at = excluded.created_at, record = excluded.record`,
      [
        record.tenant,
        record.id,
        record.automationId,
        record.status,
        record.createdAt,
        JSON.stringify(record),
      ],
    );
  }

  async list(tenant: string, automationId: string): Promise<ExperimentRecord[]> {
    const { rows } = await this.db.query<{ record: ExperimentRecord }>(
      `SELECT record FROM experiments WHERE tenant = $1 AND automation_id = $2
       ORDER BY created_at DESC, id DESC`,
      [tenant, automationId],
    );
    return rows.map((r) => r.record);
  }

  async unfinished(): Promise<ExperimentRecord[]> {
    const { rows } = await this.db.query<{ record: ExperimentRecord }>(
      "SELECT record FROM experiments WHERE status <> 'completed'",
    );
    return rows.map((r) => r.record);
  }
}

export class PgEvaluatorConfigStore implements EvaluatorConfigStore {
  constructor(private readonly db: PgDatabase) {}

  async get(tenant: string, automationId: string): Promise<StoredEvaluatorConfig | undefined> {
    const { rows } = await this.db.query<{ record: StoredEvaluatorConfig }>(
      'SELECT record FROM evaluator_configs WHERE tenant = $1 AND automation_id = $2',
      [tenant, automationId],
    );
    return rows[0]?.record;
  }

  async put(record: StoredEvaluatorConfig): Promise<void> {
    await this.db.query(
      `INSERT INTO evaluator_configs (tenant, automation_id, updated_at, record) VALUES ($1, $2, $3, $4)
       ON CONFLICT (tenant, automation_id) DO UPDATE SET updated_at = excluded.updated_at,
         record = excluded.record`,
      [record.tenant, record.automationId, validTime(record.updatedAt), JSON.stringify(record)],
    );
  }
}

/** A column time from a record's ISO string; now when the string is not a time. */
export function validTime(iso: string): Date {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? new Date() : d;
}
