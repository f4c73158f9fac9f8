import { resolvePointer } from '../json-pointer.js';
import { diffJson, preview } from '../json-diff.js';
import { resolveOperand, type ScoreInput } from '../subject.js';
import type { EqualsSpec, ScorerOutcome } from '../types.js';

/** Deep JSON equality (object key order ignored, no numeric tolerance). */
export function scoreEquals(spec: EqualsSpec, data: ScoreInput): ScorerOutcome {
  const expected = resolveOperand(spec.value, data);
  const actual = resolvePointer(data.output, spec.path);
  const report = diffJson(actual, expected, { numericTolerance: 0, allowExtraFields: false, maxEntries: 10 });
  const equal = report.differing === 0;
  return {
    score: equal ? 1 : 0,
    details: equal
      ? { path: spec.path }
      : {
          path: spec.path,
          expected: preview(expected),
          actual: actual === undefined ? null : preview(actual),
          diff: report.entries,
        },
  };
}
