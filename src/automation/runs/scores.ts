// Evaluator scores of a run. The evaluator side (src/automation/evals) writes them through ScoreStore;
// GET /runs/{id}/scores reads them. Kept apart from human review verdicts.

import type { AutomationDb } from '../db.js';

export interface EvalResult {
  id: string;
  runId: string;
  automationId: string;
  evaluatorName: string;
  evaluatorType: string;
  score: number;
  passed: boolean;
  label: string | null;
  weight: number;
  passThreshold: number;
  description: string | null;
  details: unknown;
  error: string | null;
  createdAt: string;
}

export interface ScoreStore {
  /** The run's results in id order; empty when it has none. */
  list(runId: string): Promise<EvalResult[]>;
  /** Stores the results together, replacing any of the same (runId, id). */
  record(results: readonly EvalResult[]): Promise<void>;
}

export class LmdbScoreStore implements ScoreStore {
  constructor(private readonly db: AutomationDb) {}

  async list(runId: string): Promise<EvalResult[]> {
    const out: EvalResult[] = [];
    for (const { value } of this.db.scores.getRange({ start: [runId, ''], end: [runId, '\uffff'] }))
      out.push(value as EvalResult);
    return out;
  }

  async record(results: readonly EvalResult[]): Promise<void> {
    await this.db.root.transaction(() => {
      for (const r of results) this.db.scores.putSync([r.runId, r.id], r);
    });
  }
}
