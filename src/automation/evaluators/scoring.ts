// Scores a finished run against its dataset example with the automation's evaluator config and
// records the results (ScoreStore → GET /runs/{id}/scores). A run that did not complete gets no
// evaluator results; callers count it as not passed.

import { readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import type { ScoreStore, EvalResult } from '../runs/scores.js';
import type { RunService } from '../runs/service.js';
import type { RunRecord } from '../runs/types.js';
import { readAll, type BlobStore } from '../files/blob-store.js';
import { scoreRun, type ModelProvider, type ScriptPool, type EvalFiles } from '../evals/index.js';
import type { ExampleRecord } from '../datasets/types.js';
import type { EvaluatorConfigs } from './service.js';

export interface RunScoreSummary {
  score: number | null;
  passed: boolean | null;
  results: EvalResult[];
}

export class RunScorer {
  constructor(
    private readonly deps: {
      runs: RunService;
      scores: ScoreStore;
      blobs: BlobStore;
      evaluators: Pick<EvaluatorConfigs, 'config'>;
      pool: ScriptPool;
      provider: ModelProvider;
    },
  ) {}

  private files(run: RunRecord, example: ExampleRecord | undefined): EvalFiles {
    const readOr = async (path: string | undefined) => {
      if (path === undefined) return undefined;
      try {
        return new Uint8Array(await readFile(path));
      } catch {
        return undefined;
      }
    };
    return {
      readOutput: async (name) => {
        const artifact = run.files.find((f) => f.role === 'output' && (f.name === name || f.path === name));
        // With several nodes the run may have been executed elsewhere: the blob store has it.
        return artifact ? readOr(await this.deps.runs.localFile(run, artifact)) : undefined;
      },
      readExpected: async (name) => {
        const ref = example?.files.expected[name];
        if (!ref) return undefined;
        try {
          return new Uint8Array(await readAll(this.deps.blobs, ref.sha256));
        } catch {
          return undefined;
        }
      },
    };
  }

  /**
   * Scores with the evaluators of the run's tenant and records; undefined when that tenant has
   * none for the automation or the run did not complete.
   */
  async score(run: RunRecord, example: ExampleRecord | undefined): Promise<RunScoreSummary | undefined> {
    const config = await this.deps.evaluators.config(run.tenant, run.automationId);
    if (!config || run.status !== 'completed') return undefined;
    const detail = await this.deps.runs.getDetail(run.id);
    const score = await scoreRun({
      config,
      output: run.output,
      expected: example?.expected,
      input: detail?.input.args,
      files: this.files(run, example),
      provider: this.deps.provider,
      pool: this.deps.pool,
    });
    const createdAt = new Date().toISOString();
    const results: EvalResult[] = score.results.map((r, i) => ({
      id: `${String(i).padStart(3, '0')}_${randomBytes(4).toString('hex')}`,
      runId: run.id,
      automationId: run.automationId,
      evaluatorName: r.name,
      evaluatorType: r.type,
      score: r.score,
      passed: r.passed,
      label: r.label,
      weight: r.weight,
      passThreshold: r.threshold,
      description: config.evaluators[i]?.description ?? null,
      details: r.details,
      error: r.error,
      createdAt,
    }));
    await this.deps.scores.record(results);
    return { score: score.score, passed: score.passed, results };
  }
}
