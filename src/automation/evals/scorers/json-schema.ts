import type { ValidateFunction } from 'ajv';
import { resolvePointer } from '../json-pointer.js';
import { cachedCompile } from '../schema-compiler.js';
import type { ScoreInput } from '../subject.js';
import type { JsonSchemaSpec, ScorerOutcome } from '../types.js';

// Parsed configs are reused for every run of an experiment; compile each schema once.
const compiled = new WeakMap<JsonSchemaSpec, ValidateFunction>();

export function scoreJsonSchema(spec: JsonSchemaSpec, data: ScoreInput): ScorerOutcome {
  let validate = compiled.get(spec);
  if (validate === undefined) {
    validate = cachedCompile(spec.schema);
    compiled.set(spec, validate);
  }
  const value = resolvePointer(data.output, spec.path);
  if (value === undefined)
    return { score: 0, details: { path: spec.path, reason: 'no output value at path' } };
  if (validate(value)) return { score: 1, details: { path: spec.path } };
  const errors = (validate.errors ?? []).slice(0, 20).map((e) => ({
    path: e.instancePath === '' ? '/' : e.instancePath,
    message: e.message ?? e.keyword,
  }));
  return { score: 0, details: { path: spec.path, errors } };
}
