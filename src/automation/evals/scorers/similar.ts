import { resolvePointer } from '../json-pointer.js';
import { similarity } from '../levenshtein.js';
import { asText, EvaluatorError, resolveOperand, type ScoreInput } from '../subject.js';
import type { ScorerOutcome, SimilarSpec } from '../types.js';

function normalise(text: string, spec: SimilarSpec): string {
  let out = spec.normalizeWhitespace ? text.trim().replace(/\s+/g, ' ') : text;
  if (spec.ignoreCase) out = out.toLowerCase();
  return out;
}

/** Score = normalised Levenshtein similarity, 1 − distance / longer length. */
export function scoreSimilar(spec: SimilarSpec, data: ScoreInput): ScorerOutcome {
  const reference = asText(resolveOperand(spec.value, data));
  if (reference === undefined) throw new EvaluatorError('no reference text to compare with');
  const text = asText(resolvePointer(data.output, spec.path));
  if (text === undefined)
    return { score: 0, details: { path: spec.path, reason: 'no output value at path' } };
  let result: { similarity: number; distance: number };
  try {
    result = similarity(normalise(text, spec), normalise(reference, spec));
  } catch (err) {
    if (err instanceof RangeError) throw new EvaluatorError(err.message);
    throw err;
  }
  return {
    score: result.similarity,
    details: { path: spec.path, distance: result.distance, similarity: result.similarity },
  };
}
