import { parseFieldPath, type PathStep } from '../field-path.js';
import { diffJson } from '../json-diff.js';
import { EvaluatorError, type ScoreInput } from '../subject.js';
import type { ExactDiffSpec, ScorerOutcome } from '../types.js';

function compiledPaths(spec: ExactDiffSpec): PathStep[][] {
  return spec.paths.map((p) => {
    const parsed = parseFieldPath(p);
    // The config parser rejects bad paths, so this only guards hand-built specs.
    if ('error' in parsed) throw new Error(`bad path "${p}": ${parsed.error}`);
    return parsed.steps;
  });
}

/** Score = share of compared leaves that match; the diff list says which did not. */
export function scoreExactDiff(spec: ExactDiffSpec, data: ScoreInput): ScorerOutcome {
  // Nothing to compare with is a dataset problem, not a wrong output.
  if (data.expected === undefined) throw new EvaluatorError('the example has no expected output');
  const report = diffJson(
    data.output,
    data.expected,
    { numericTolerance: spec.numericTolerance, allowExtraFields: spec.allowExtraFields },
    compiledPaths(spec),
  );
  const score = report.compared === 0 ? 1 : (report.compared - report.differing) / report.compared;
  return {
    score,
    details: {
      compared: report.compared,
      differing: report.differing,
      diff: report.entries,
      ...(report.truncated ? { truncated: true } : {}),
    },
  };
}
