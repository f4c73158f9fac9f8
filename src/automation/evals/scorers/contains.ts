import { resolvePointer } from '../json-pointer.js';
import { asText, type ScoreInput } from '../subject.js';
import type { ContainsSpec, ScorerOutcome } from '../types.js';

/** mode all: score = share of values found; mode any: 1 when at least one is found. */
export function scoreContains(spec: ContainsSpec, data: ScoreInput): ScorerOutcome {
  const text = asText(resolvePointer(data.output, spec.path));
  if (text === undefined)
    return { score: 0, details: { path: spec.path, reason: 'no output value at path' } };
  const haystack = spec.ignoreCase ? text.toLowerCase() : text;
  const found: string[] = [];
  const missing: string[] = [];
  for (const v of spec.values)
    (haystack.includes(spec.ignoreCase ? v.toLowerCase() : v) ? found : missing).push(v);
  const score = spec.mode === 'any' ? (found.length > 0 ? 1 : 0) : found.length / spec.values.length;
  return { score, details: { path: spec.path, mode: spec.mode, found, missing } };
}
