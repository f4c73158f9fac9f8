// Review health of an automation over a time range: coverage (reviewed / total runs) and
// correctness (correct / (correct + incorrect); a null verdict is a "nit" and counts as reviewed
// but not in correctness), each with a Wilson interval, per calendar bucket (UTC) and as a
// rolling window over the last N reviewed runs. Runs are placed in time by their creation time.

import type { RunRecord } from '../runs/types.js';
import { wilson } from './wilson.js';

export type Bucket = 'day' | 'week' | 'month';

export interface HealthOptions {
  from: number;
  to: number;
  bucket: Bucket;
  rollingWindow: number;
  minRollingReviews: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function bucketStart(ms: number, bucket: Bucket): number {
  const d = new Date(ms);
  const day = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate());
  if (bucket === 'day') return day;
  if (bucket === 'week') return day - ((d.getUTCDay() + 6) % 7) * 86_400_000; // weeks start on Monday
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

export function nextBucket(start: number, bucket: Bucket): number {
  if (bucket === 'day') return start + 86_400_000;
  if (bucket === 'week') return start + 7 * 86_400_000;
  const d = new Date(start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

interface Counts {
  total: number;
  reviewed: number;
  correct: number;
  incorrect: number;
  nit: number;
}

function count(runs: readonly RunRecord[]): Counts {
  const c: Counts = { total: 0, reviewed: 0, correct: 0, incorrect: 0, nit: 0 };
  for (const r of runs) {
    c.total++;
    if (!r.review) continue;
    c.reviewed++;
    if (r.review.verdict === 'correct') c.correct++;
    else if (r.review.verdict === 'incorrect') c.incorrect++;
    else c.nit++;
  }
  return c;
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : null);

export const MAX_BUCKETS = 2000;

export function reviewHealth(runs: readonly RunRecord[], o: HealthOptions) {
  const sorted = [...runs].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  const s = count(sorted);
  const ci = wilson(s.correct, s.correct + s.incorrect);
  const summary = {
    totalRuns: s.total,
    reviewedRuns: s.reviewed,
    reviewCoverage: ratio(s.reviewed, s.total),
    correctReviews: s.correct,
    incorrectReviews: s.incorrect,
    nitReviews: s.nit,
    reviewedCorrectness: ratio(s.correct, s.correct + s.incorrect),
    confidence: { lower: ci?.lower ?? null, upper: ci?.upper ?? null, method: 'wilson' as const },
  };

  const buckets = [];
  let i = 0;
  for (let start = bucketStart(o.from, o.bucket); start <= o.to; start = nextBucket(start, o.bucket)) {
    const end = nextBucket(start, o.bucket);
    const inBucket: RunRecord[] = [];
    while (i < sorted.length && sorted[i]!.createdAt < end) inBucket.push(sorted[i++]!);
    const c = count(inBucket);
    const b = wilson(c.correct, c.correct + c.incorrect);
    buckets.push({
      start: iso(start),
      end: iso(end),
      totalRuns: c.total,
      reviewedRuns: c.reviewed,
      reviewCoverage: ratio(c.reviewed, c.total),
      correctReviews: c.correct,
      incorrectReviews: c.incorrect,
      nitReviews: c.nit,
      reviewedCorrectness: ratio(c.correct, c.correct + c.incorrect),
      confidenceLower: b?.lower ?? null,
      confidenceUpper: b?.upper ?? null,
    });
  }

  // Rolling: one point per reviewed run, over it and the N-1 reviewed runs before it.
  const reviewedIdx: number[] = [];
  sorted.forEach((r, idx) => {
    if (r.review) reviewedIdx.push(idx);
  });
  const rolling = [];
  let correct = 0;
  let incorrect = 0;
  for (let k = 0; k < reviewedIdx.length; k++) {
    const add = sorted[reviewedIdx[k]!]!.review!.verdict;
    if (add === 'correct') correct++;
    else if (add === 'incorrect') incorrect++;
    const leaving = k - o.rollingWindow;
    if (leaving >= 0) {
      const v = sorted[reviewedIdx[leaving]!]!.review!.verdict;
      if (v === 'correct') correct--;
      else if (v === 'incorrect') incorrect--;
    }
    const first = reviewedIdx[Math.max(0, k - o.rollingWindow + 1)]!;
    const last = reviewedIdx[k]!;
    const reviewedRuns = Math.min(k + 1, o.rollingWindow);
    if (reviewedRuns < o.minRollingReviews) continue;
    const w = wilson(correct, correct + incorrect);
    const totalRunsInWindow = last - first + 1;
    rolling.push({
      at: iso(sorted[last]!.createdAt),
      runId: sorted[last]!.id,
      reviewedRuns,
      correctReviews: correct,
      incorrectReviews: incorrect,
      reviewedCorrectness: ratio(correct, correct + incorrect),
      confidenceLower: w?.lower ?? null,
      confidenceUpper: w?.upper ?? null,
      totalRunsInWindow,
      reviewCoverage: ratio(reviewedRuns, totalRunsInWindow),
    });
  }

  return {
    timeRange: { from: iso(o.from), to: iso(o.to) },
    granularity: { bucket: o.bucket, rollingWindow: o.rollingWindow, minRollingReviews: o.minRollingReviews },
    summary,
    buckets,
    rolling,
  };
}
