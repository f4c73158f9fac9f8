import { resolvePointer } from '../json-pointer.js';
import type { ScriptPool } from '../sandbox.js';
import { asText, EvaluatorError, type ScoreInput } from '../subject.js';
import type { RegexSpec, ScorerOutcome } from '../types.js';

/** With a pool the pattern runs in a worker under the pool's pattern time limit (a pattern that
 *  backtracks longer is stopped: an evaluator error); without one it runs inline,
 *  which is only for trusted configs (tests, benches, the library used on its own). */
export async function scoreRegex(
  spec: RegexSpec,
  data: ScoreInput,
  pool: ScriptPool | undefined,
  signal: AbortSignal | undefined,
): Promise<ScorerOutcome> {
  const text = asText(resolvePointer(data.output, spec.path));
  if (text === undefined)
    return { score: 0, details: { path: spec.path, reason: 'no output value at path' } };
  let match: { text: string; index: number } | null;
  if (pool === undefined) {
    const m = new RegExp(spec.pattern, spec.flags).exec(text);
    match = m === null ? null : { text: m[0].slice(0, 200), index: m.index };
  } else {
    const outcome = await pool.execRegex({
      pattern: spec.pattern,
      flags: spec.flags,
      text,
      ...(signal === undefined ? {} : { signal }),
    });
    if (!outcome.ok) throw new EvaluatorError(outcome.message);
    match = outcome.match;
  }
  return {
    score: match === null ? 0 : 1,
    details:
      match === null
        ? { path: spec.path, pattern: spec.pattern }
        : { path: spec.path, pattern: spec.pattern, match: match.text, index: match.index },
  };
}
