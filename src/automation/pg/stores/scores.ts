// Evaluator scores in PostgreSQL: a `scores` row per (run, result id), the result as json.

import type { EvalResult, ScoreStore } from '../../runs/scores.js';
import type { PgDatabase } from '../pool.js';

export class PgScoreStore implements ScoreStore {
  constructor(private readonly db: PgDatabase) {}

  async list(runId: string): Promise<EvalResult[]> {
    const { rows } = await this.db.query<{ record: EvalResult }>(
      'SELECT record FROM scores WHERE run_id = $1 ORDER BY id',
      [runId],
    );
    return rows.map((r) => r.record);
  }

  async record(results: readonly EvalResult[]): Promise<void> {
    if (results.length === 0) return;
    // One statement stores them together; the last of a repeated (runId, id) wins, as when put
    // one after another (one INSERT … ON CONFLICT cannot touch a row twice).
    const last = [...new Map(results.map((r) => [`${r.runId}\u0000${r.id}`, r])).values()];
    // Keys as parameters of their own: a json operator would fail on a result holding U+0000.
    await this.db.query(
      `INSERT INTO scores (run_id, id, record)
       SELECT * FROM unnest($1::text[], $2::text[], $3::json[])
       ON CONFLICT (run_id, id) DO UPDATE SET record = excluded.record`,
      [last.map((r) => r.runId), last.map((r) => r.id), last.map((r) => JSON.stringify(r))],
    );
  }
}
