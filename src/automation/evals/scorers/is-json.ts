import { resolvePointer } from '../json-pointer.js';
import type { ScoreInput } from '../subject.js';
import type { IsJsonSpec, ScorerOutcome } from '../types.js';

/** A string must parse as JSON; a structured value already is JSON. */
export function scoreIsJson(spec: IsJsonSpec, data: ScoreInput): ScorerOutcome {
  const value = resolvePointer(data.output, spec.path);
  if (value === undefined)
    return { score: 0, details: { path: spec.path, reason: 'no output value at path' } };
  if (typeof value !== 'string')
    return { score: 1, details: { path: spec.path, reason: 'the value is structured JSON' } };
  try {
    JSON.parse(value);
    return { score: 1, details: { path: spec.path } };
  } catch (err) {
    return {
      score: 0,
      details: { path: spec.path, reason: err instanceof Error ? err.message : String(err) },
    };
  }
}
