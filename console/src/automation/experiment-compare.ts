// Two experiments of one automation side by side (page logic, no browser): the runs of each are
// matched by their dataset example, and each example gets, per evaluator, the score and pass of
// each side. Examples where anything differs (a score, a pass, an evaluator error, or the example
// ran on one side only) come first, the largest score change first; the rest keep dataset order.

import type { EvalResult, ExperimentDetail } from './wire.js';

export interface SideScore {
  score: number | null;
  passed: boolean | null;
  error: string | null;
}

export interface ComparedExample {
  /** The example's name, else its id, else the run id (a run without an example). */
  label: string;
  runA: string | null;
  runB: string | null;
  /** Per evaluator name: each side's result, undefined when that side has none. */
  scores: Record<string, { a: SideScore | undefined; b: SideScore | undefined }>;
  changed: boolean;
  /** Sum over evaluators of |score B − score A| (scores present on both sides). */
  change: number;
}

export interface Comparison {
  evaluators: string[];
  examples: ComparedExample[];
  changedCount: number;
}

const side = (r: EvalResult | undefined): SideScore | undefined =>
  r ? { score: r.score, passed: r.passed, error: r.error } : undefined;

const same = (x: SideScore | undefined, y: SideScore | undefined) =>
  x === undefined || y === undefined
    ? x === y
    : x.score === y.score && x.passed === y.passed && (x.error === null) === (y.error === null);

export function compareExperiments(a: ExperimentDetail, b: ExperimentDetail): Comparison {
  const evaluators: string[] = [];
  for (const d of [a, b])
    for (const results of Object.values(d.resultsByRun))
      for (const r of results) if (!evaluators.includes(r.evaluatorName)) evaluators.push(r.evaluatorName);

  const keyOf = (run: ExperimentDetail['runs'][number]) => run.exampleId ?? run.exampleName ?? run.id;
  const order: string[] = [];
  const rows = new Map<string, { label: string; runA: string | null; runB: string | null }>();
  for (const [which, d] of [
    ['a', a],
    ['b', b],
  ] as const) {
    for (const run of d.runs) {
      const key = keyOf(run);
      let row = rows.get(key);
      if (!row) {
        row = { label: run.exampleName ?? run.exampleId ?? run.id, runA: null, runB: null };
        rows.set(key, row);
        order.push(key);
      }
      if (which === 'a') row.runA = run.id;
      else row.runB = run.id;
    }
  }

  const examples = order.map((key): ComparedExample => {
    const row = rows.get(key)!;
    const resultsA = row.runA ? (a.resultsByRun[row.runA] ?? []) : [];
    const resultsB = row.runB ? (b.resultsByRun[row.runB] ?? []) : [];
    const scores: ComparedExample['scores'] = {};
    let changed = row.runA === null || row.runB === null;
    let change = 0;
    for (const e of evaluators) {
      const sa = side(resultsA.find((r) => r.evaluatorName === e));
      const sb = side(resultsB.find((r) => r.evaluatorName === e));
      scores[e] = { a: sa, b: sb };
      if (!same(sa, sb)) changed = true;
      if (typeof sa?.score === 'number' && typeof sb?.score === 'number')
        change += Math.abs(sb.score - sa.score);
    }
    return { ...row, scores, changed, change };
  });
  // Array.prototype.sort is stable, so equal rows keep the dataset order.
  examples.sort((x, y) => Number(y.changed) - Number(x.changed) || y.change - x.change);
  return { evaluators, examples, changedCount: examples.filter((x) => x.changed).length };
}
