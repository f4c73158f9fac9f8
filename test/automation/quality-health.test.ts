// Review health arithmetic on hand-computed cases: Wilson bounds, calendar buckets, rolling windows.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { bucketStart, nextBucket, reviewHealth } from '../../src/automation/reviews/health.js';
import { wilson } from '../../src/automation/reviews/wilson.js';
import type { RunRecord } from '../../src/automation/runs/types.js';
import { RunReviewHealthResponse } from '../../src/automation/wire/reviews.js';

const near = (a: number | null | undefined, b: number, eps = 1e-4) =>
  assert.ok(a !== null && a !== undefined && Math.abs(a - b) < eps, `${a} ≉ ${b}`);

function run(id: string, createdAt: number, verdict?: 'correct' | 'incorrect' | null): RunRecord {
  return {
    id,
    createdAt,
    review:
      verdict === undefined
        ? null
        : {
            status: 'closed',
            verdict,
            note: null,
            correctionCount: 0,
            hasCorrections: false,
            createdAt,
            updatedAt: createdAt,
            closedAt: createdAt,
          },
  } as RunRecord;
}

describe('review health arithmetic', () => {
  it('Wilson 95% bounds match published values', () => {
    near(wilson(5, 6)!.lower, 0.4365);
    near(wilson(5, 6)!.upper, 0.9699);
    near(wilson(0, 10)!.lower, 0);
    near(wilson(0, 10)!.upper, 0.2775);
    near(wilson(50, 100)!.lower, 0.4038);
    near(wilson(50, 100)!.upper, 0.5962);
    assert.equal(wilson(0, 0), null);
  });

  it('buckets are UTC days, Monday weeks and calendar months', () => {
    const wed = Date.parse('2026-11-25T15:30:00Z'); // a Wednesday
    assert.equal(new Date(bucketStart(wed, 'day')).toISOString(), '2026-11-25T00:00:00.000Z');
    assert.equal(new Date(bucketStart(wed, 'week')).toISOString(), '2026-11-23T00:00:00.000Z');
    assert.equal(new Date(bucketStart(wed, 'month')).toISOString(), '2026-11-01T00:00:00.000Z');
    assert.equal(
      new Date(nextBucket(bucketStart(wed, 'month'), 'month')).toISOString(),
      '2026-12-01T00:00:00.000Z',
    );
    const sun = Date.parse('2026-11-29T23:59:59Z');
    assert.equal(new Date(bucketStart(sun, 'week')).toISOString(), '2026-11-23T00:00:00.000Z');
  });

  it('summarises, buckets and rolls a fixture of known verdicts', () => {
    const day = 86_400_000;
    const t0 = Date.parse('2026-11-02T12:00:00Z');
    // day 0: c, c, i, (none); day 1: c, nit, c; day 2: (none), i, (none)
    const runs = [
      run('a', t0, 'correct'),
      run('b', t0 + 1, 'correct'),
      run('c', t0 + 2, 'incorrect'),
      run('d', t0 + 3),
      run('e', t0 + day, 'correct'),
      run('f', t0 + day + 1, null),
      run('g', t0 + day + 2, 'correct'),
      run('h', t0 + 2 * day),
      run('i', t0 + 2 * day + 1, 'incorrect'),
      run('j', t0 + 2 * day + 2),
    ];
    const h = reviewHealth(runs, {
      from: Date.parse('2026-11-02T00:00:00Z'),
      to: Date.parse('2026-11-04T23:59:59Z'),
      bucket: 'day',
      rollingWindow: 4,
      minRollingReviews: 3,
    });
    assert.ok(
      Value.Check(RunReviewHealthResponse, h),
      [...Value.Errors(RunReviewHealthResponse, h)][0]?.message,
    );
    // Coverage and correctness count ranked reviews only; the nit (f) is counted apart.
    assert.deepEqual(
      { ...h.summary, confidence: undefined },
      {
        totalRuns: 10,
        reviewedRuns: 6,
        reviewCoverage: 0.6,
        correctReviews: 4,
        incorrectReviews: 2,
        nitReviews: 1,
        reviewedCorrectness: 4 / 6,
        confidence: undefined,
      },
    );
    near(h.summary.confidence.lower, 0.3); // Wilson 4 of 6
    near(h.summary.confidence.upper, 0.9032);
    assert.deepEqual(
      h.buckets.map((b) => [b.totalRuns, b.reviewedRuns, b.correctReviews, b.incorrectReviews, b.nitReviews]),
      [
        [4, 3, 2, 1, 0],
        [3, 2, 2, 0, 1],
        [3, 1, 0, 1, 0],
      ],
    );
    assert.equal(h.buckets[1]!.reviewedCorrectness, 1);
    assert.equal(h.buckets[1]!.reviewCoverage, 2 / 3);
    // Ranked reviews in order: a c, b c, c i, e c, g c, i i; window 4, at least 3 reviews. The
    // coverage window is the last 4 runs (reviewed or not) ending at the point's run.
    assert.deepEqual(
      h.rolling.map((p) => [p.at, p.reviewedRuns, p.correctReviews, p.totalRunsInWindow, p.reviewCoverage]),
      [
        [new Date(t0 + 2).toISOString(), 3, 2, 3, 1], // a b c
        [new Date(t0 + day).toISOString(), 4, 3, 4, 3 / 4], // runs b c d e
        [new Date(t0 + day + 2).toISOString(), 4, 3, 4, 2 / 4], // runs d e f g
        [new Date(t0 + 2 * day + 1).toISOString(), 4, 2, 4, 2 / 4], // runs f g h i
      ],
    );
    assert.equal(h.rolling[3]!.reviewedCorrectness, 0.5);
    near(h.rolling[3]!.confidenceLower, 0.15); // Wilson 2 of 4
    near(h.rolling[3]!.confidenceUpper, 0.85);
  });

  it('has no rolling points and null ratios when nothing is ranked', () => {
    const t0 = Date.parse('2026-11-02T12:00:00Z');
    const h = reviewHealth([run('a', t0, null), run('b', t0 + 1)], {
      from: t0 - 1000,
      to: t0 + 1000,
      bucket: 'week',
      rollingWindow: 100,
      minRollingReviews: 1,
    });
    assert.ok(Value.Check(RunReviewHealthResponse, h));
    assert.equal(h.summary.reviewedRuns, 0);
    assert.equal(h.summary.nitReviews, 1);
    assert.equal(h.summary.reviewCoverage, 0);
    assert.equal(h.summary.reviewedCorrectness, null);
    assert.deepEqual(h.summary.confidence, { lower: null, upper: null, method: 'wilson' });
    assert.deepEqual(h.rolling, []);
  });
});
