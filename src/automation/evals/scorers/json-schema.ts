import { resolvePointer } from '../json-pointer.js';
import type { ScriptPool } from '../sandbox.js';
import { checkSchema } from '../schema-check.js';
import { EvaluatorError, type ScoreInput } from '../subject.js';
import type { JsonSchemaSpec, ScorerOutcome } from '../types.js';

/** Schemas with `pattern`/`patternProperties` run in the pool under its pattern time limit
 *  when one is given (see schema-check.ts); a time-out is an evaluator error. */
export async function scoreJsonSchema(
  spec: JsonSchemaSpec,
  data: ScoreInput,
  pool: ScriptPool | undefined,
  signal: AbortSignal | undefined,
): Promise<ScorerOutcome> {
  const value = resolvePointer(data.output, spec.path);
  if (value === undefined)
    return { score: 0, details: { path: spec.path, reason: 'no output value at path' } };
  const outcome = await checkSchema(spec.schema, value, pool, signal);
  if (!outcome.ok) throw new EvaluatorError(outcome.message);
  if (outcome.valid) return { score: 1, details: { path: spec.path } };
  const errors = outcome.issues.slice(0, 20).map((e) => ({
    path: e.instancePath === '' ? '/' : e.instancePath,
    message: e.message,
  }));
  return { score: 0, details: { path: spec.path, errors } };
}
