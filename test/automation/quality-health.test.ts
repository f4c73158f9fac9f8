// Review health arithmetic on hand-computed cases: Wilson bounds, calendar buckets, rolling windows.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bucketStart, nextBucket, reviewHealth } from '../../src/automation/reviews/health.js';
import { wilson } from '../../src/automation/reviews/wilson.js';
import type { RunRecord } from '../../src/automation/runs/types.js';

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
    assert.deepEqual(
      { ...h.summary, confidence: undefined },
      {
        totalRuns: 10,
        reviewedRuns: 7,
        reviewCoverage: 0.7,
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
        [3, 3, 2, 0, 1],
        [3, 1, 0, 1, 0],
      ],
    );
    assert.equal(h.buckets[1]!.reviewedCorrectness, 1);
    // reviewed order: a c, b c, c i, e c, f nit, g c, i i; window 4, at least 3 reviews
    assert.deepEqual(
      h.rolling.map((p) => [
        p.runId,
        p.reviewedRuns,
        p.correctReviews,
        p.incorrectReviews,
        p.totalRunsInWindow,
      ]),
      [
        ['c', 3, 2, 1, 3],
        ['e', 4, 3, 1, 5], // a..e holds the unreviewed d
        ['f', 4, 2, 1, 5], // b c e f → runs b..f (d unreviewed)
        ['g', 4, 2, 1, 5], // c e f g → runs c..g
        ['i', 4, 2, 1, 5], // e f g i → runs e..i (h unreviewed)
      ],
    );
    assert.equal(h.rolling[4]!.reviewCoverage, 4 / 5);
  });
});
