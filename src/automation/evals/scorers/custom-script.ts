import type { ScriptPool } from '../sandbox.js';
import { EvaluatorError, type ScoreInput } from '../subject.js';
import type { CustomScriptSpec, ScorerOutcome } from '../types.js';

const RESULT_HELP = 'return a number in [0,1], a boolean, or { score, pass, reason, label }';

/** Turns what the script returned into an outcome; anything else is an evaluator error. */
export function interpretScriptValue(value: unknown): ScorerOutcome {
  if (typeof value === 'boolean') return { score: value ? 1 : 0, passed: value, details: {} };
  if (typeof value === 'number') {
    if (!Number.isFinite(value) || value < 0 || value > 1)
      throw new EvaluatorError(`the script returned ${value}; ${RESULT_HELP}`);
    return { score: value, details: {} };
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new EvaluatorError(`the script returned ${JSON.stringify(value)}; ${RESULT_HELP}`);
  }
  const r = value as Record<string, unknown>;
  const pass = r.pass ?? r.passed;
  if (pass !== undefined && typeof pass !== 'boolean')
    throw new EvaluatorError(`"pass" must be a boolean; ${RESULT_HELP}`);
  let score: number;
  if (r.score === undefined) {
    if (pass === undefined)
      throw new EvaluatorError(`the result has neither "score" nor "pass"; ${RESULT_HELP}`);
    score = pass ? 1 : 0;
  } else if (typeof r.score === 'number' && Number.isFinite(r.score) && r.score >= 0 && r.score <= 1) {
    score = r.score;
  } else {
    throw new EvaluatorError(`"score" is ${JSON.stringify(r.score)}; it must be a number in [0,1]`);
  }
  const details: Record<string, unknown> = {};
  if (r.reason !== undefined && r.reason !== null) {
    details.reason = (typeof r.reason === 'string' ? r.reason : JSON.stringify(r.reason)).slice(0, 2000);
  }
  const out: { score: number; details: Record<string, unknown>; passed?: boolean; label?: string } = {
    score,
    details,
  };
  if (pass !== undefined) out.passed = pass;
  if (typeof r.label === 'string' || typeof r.label === 'number') out.label = String(r.label).slice(0, 200);
  return out;
}

export async function scoreCustomScript(
  spec: CustomScriptSpec,
  data: ScoreInput,
  pool: ScriptPool | undefined,
  signal: AbortSignal | undefined,
): Promise<ScorerOutcome> {
  if (pool === undefined) throw new EvaluatorError('no script pool was given to run custom scripts');
  const outcome = await pool.run({
    script: spec.script,
    data: JSON.stringify({
      output: data.output ?? null,
      expected: data.expected ?? null,
      input: data.input ?? null,
    }),
    timeoutMs: spec.timeoutMs,
    memoryLimitMb: spec.memoryLimitMb,
    ...(signal === undefined ? {} : { signal }),
  });
  if (!outcome.ok)
    throw new EvaluatorError(
      outcome.kind === 'threw' ? `the script threw: ${outcome.message}` : outcome.message,
    );
  const parsed = JSON.parse(outcome.json) as { value?: unknown; thrown?: string; logs?: string[] };
  const logs = parsed.logs ?? [];
  if (parsed.thrown !== undefined) {
    throw new EvaluatorError(`the script threw ${parsed.thrown}`, logs.length > 0 ? { logs } : {});
  }
  const result = interpretScriptValue(parsed.value);
  return logs.length > 0 ? { ...result, details: { ...result.details, logs } } : result;
}
