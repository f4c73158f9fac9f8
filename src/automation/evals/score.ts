// scoreRun: every evaluator of a config against one run, and the run's weighted score.
// An evaluator that cannot score yields score 0 with `error` set; scoreRun itself never
// throws for a bad output, a failing script or a failing provider.
import type { ScriptPool } from './sandbox.js';
import { runScorer } from './scorers/index.js';
import { EvaluatorError } from './subject.js';
import type {
  EvalFiles,
  EvaluatorConfig,
  EvaluatorResult,
  EvaluatorSpec,
  ModelProvider,
  RunScore,
  ScorerOutcome,
} from './types.js';

export interface ScoreRunArgs {
  readonly config: EvaluatorConfig;
  /** The run's JSON output. */
  readonly output: unknown;
  /** The example's expected output. */
  readonly expected?: unknown;
  /** The run's input, for custom scripts and judges that look at it. */
  readonly input?: unknown;
  readonly files?: EvalFiles;
  readonly provider?: ModelProvider;
  readonly pool?: ScriptPool;
  readonly signal?: AbortSignal;
}

// Sums of float products land a hair off exact values (0.7 as 0.69999…); a threshold
// comparison should not flip on that.
const EPSILON = 1e-9;

export function meetsThreshold(score: number, threshold: number): boolean {
  return score + EPSILON >= threshold;
}

/** Σ wᵢsᵢ / Σ wᵢ over weights > 0; null when no evaluator counts. */
export function weightedScore(results: readonly { score: number; weight: number }[]): number | null {
  let sum = 0;
  let weights = 0;
  for (const r of results) {
    if (r.weight > 0) {
      sum += r.weight * r.score;
      weights += r.weight;
    }
  }
  if (weights === 0) return null;
  return Math.min(1, Math.max(0, sum / weights));
}

function result(spec: EvaluatorSpec, outcome: ScorerOutcome): EvaluatorResult {
  const score = Math.min(1, Math.max(0, outcome.score));
  return {
    name: spec.name,
    type: spec.type,
    score,
    passed: outcome.passed ?? meetsThreshold(score, spec.threshold),
    weight: spec.weight,
    threshold: spec.threshold,
    label: outcome.label ?? null,
    details: outcome.details,
    error: null,
  };
}

function failure(spec: EvaluatorSpec, err: unknown): EvaluatorResult {
  const internal = !(err instanceof EvaluatorError);
  const message = err instanceof Error ? err.message : String(err);
  return {
    name: spec.name,
    type: spec.type,
    score: 0,
    passed: false,
    weight: spec.weight,
    threshold: spec.threshold,
    label: null,
    details: err instanceof EvaluatorError ? err.details : {},
    error: internal ? `internal evaluator failure: ${message}` : message,
  };
}

async function scoreOne(spec: EvaluatorSpec, args: ScoreRunArgs): Promise<EvaluatorResult> {
  try {
    const outcome = await runScorer(
      spec,
      { output: args.output, expected: args.expected, input: args.input },
      {
        ...(args.files === undefined ? {} : { files: args.files }),
        ...(args.provider === undefined ? {} : { provider: args.provider }),
        ...(args.pool === undefined ? {} : { pool: args.pool }),
        ...(args.signal === undefined ? {} : { signal: args.signal }),
      },
    );
    return result(spec, outcome);
  } catch (err) {
    return failure(spec, err);
  }
}

export async function scoreRun(args: ScoreRunArgs): Promise<RunScore> {
  // Evaluators are independent; the slow ones (scripts, judges) overlap.
  const results = await Promise.all(args.config.evaluators.map((spec) => scoreOne(spec, args)));
  const score = weightedScore(results);
  return {
    score,
    passed: score === null ? null : meetsThreshold(score, args.config.passThreshold),
    passThreshold: args.config.passThreshold,
    results,
  };
}
