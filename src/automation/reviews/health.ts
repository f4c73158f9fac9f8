// Review health of an automation over a time range, as the SDK's RunReviewHealthResponse: a run
// counts as reviewed when its review has a ranked verdict (correct or incorrect); a null verdict
// is a "nit", counted apart and left out of coverage and correctness. Coverage = reviewed / total
// runs, correctness = correct / reviewed with a Wilson interval, per calendar bucket (UTC) and as
// a rolling window over the last N ranked reviews. Runs are placed in time by creation time.

import type { RunRecord } from '../runs/types.js';
import type { RunReviewHealthResponse } from '../wire/reviews.js';
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
  /** Ranked reviews: a correct or incorrect verdict. */
  reviewed: number;
  correct: number;
  incorrect: number;
  nit: number;
}

const isRanked = (r: RunRecord) => r.review?.verdict === 'correct' || r.review?.verdict === 'incorrect';

function count(runs: readonly RunRecord[]): Counts {
  const c: Counts = { total: 0, reviewed: 0, correct: 0, incorrect: 0, nit: 0 };
  for (const r of runs) {
    c.total++;
    if (!r.review) continue;
    if (r.review.verdict === 'correct') c.correct++;
    else if (r.review.verdict === 'incorrect') c.incorrect++;
    else c.nit++;
  }
  c.reviewed = c.correct + c.incorrect;
  return c;
}

const ratio = (a: number, b: number) => (b > 0 ? a / b : null);

function countFields(c: Counts) {
  return {
    totalRuns: c.total,
    reviewedRuns: c.reviewed,
    reviewCoverage: ratio(c.reviewed, c.total),
    correctReviews: c.correct,
    incorrectReviews: c.incorrect,
    nitReviews: c.nit,
    reviewedCorrectness: ratio(c.correct, c.reviewed),
  };
}

export const MAX_BUCKETS = 2000;

export function reviewHealth(runs: readonly RunRecord[], o: HealthOptions): RunReviewHealthResponse {
  const sorted = [...runs].sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1));
  const s = count(sorted);
  const ci = wilson(s.correct, s.reviewed);
  const summary = {
    ...countFields(s),
    confidence: { lower: ci?.lower ?? null, upper: ci?.upper ?? null, method: 'wilson' as const },
  };

  const buckets = [];
  let i = 0;
  for (let start = bucketStart(o.from, o.bucket); start <= o.to; start = nextBucket(start, o.bucket)) {
    const end = nextBucket(start, o.bucket);
    const inBucket: RunRecord[] = [];
    while (i < sorted.length && sorted[i]!.createdAt < end) inBucket.push(sorted[i++]!);
    buckets.push({ start: iso(start), end: iso(end), ...countFields(count(inBucket)) });
  }

  // Rolling: one point per ranked review, over it and the N-1 ranked reviews before it; its
  // coverage is over the same number N of runs (reviewed or not) ending at that run.
  const rankedBefore = [0]; // rankedBefore[k] = ranked reviews among sorted[0..k-1]
  for (const r of sorted) rankedBefore.push(rankedBefore.at(-1)! + (isRanked(r) ? 1 : 0));
  const rankedIdx: number[] = [];
  sorted.forEach((r, idx) => {
    if (isRanked(r)) rankedIdx.push(idx);
  });
  const rolling = [];
  let correct = 0;
  for (let k = 0; k < rankedIdx.length; k++) {
    if (sorted[rankedIdx[k]!]!.review!.verdict === 'correct') correct++;
    const leaving = k - o.rollingWindow;
    if (leaving >= 0 && sorted[rankedIdx[leaving]!]!.review!.verdict === 'correct') correct--;
    const reviewedRuns = Math.min(k + 1, o.rollingWindow);
    if (reviewedRuns < o.minRollingReviews) continue;
    const last = rankedIdx[k]!;
    const w = wilson(correct, reviewedRuns)!;
    const first = Math.max(0, last - o.rollingWindow + 1);
    const totalRunsInWindow = last - first + 1;
    rolling.push({
      at: iso(sorted[last]!.createdAt),
      reviewedRuns,
      correctReviews: correct,
      reviewedCorrectness: correct / reviewedRuns,
      confidenceLower: w.lower,
      confidenceUpper: w.upper,
      totalRunsInWindow,
      reviewCoverage: (rankedBefore[last + 1]! - rankedBefore[first]!) / totalRunsInWindow,
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
