// The console's per-rule history ring: increases per step, a baseline of zeros, rules that
// appear later padded with zeros, the ring bounded to its points. Driven by sample() calls, no timer.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { StatsHistory, type RuleTotals } from '../../src/ratelimit/server/stats-history.js';

const totals = (entries: Record<string, [number, number, number]>): RuleTotals =>
  new Map(
    Object.entries(entries).map(([key, [total_hits, over_limit, near_limit]]) => [
      key,
      { total_hits, over_limit, near_limit },
    ]),
  );

describe('stats history ring', () => {
  it('keeps the increase per step, oldest first, bounded to its points', () => {
    let now = totals({ a: [10, 1, 0] });
    const history = new StatsHistory({ read: () => now, points: 3 });
    history.sample(); // baseline: what happened before the first reading is not a step
    assert.deepEqual(history.of('a').total_hits, [0]);
    now = totals({ a: [15, 1, 2] });
    history.sample();
    now = totals({ a: [15, 4, 2], b: [7, 0, 0] });
    history.sample();
    assert.deepEqual(history.of('a'), {
      total_hits: [0, 5, 0],
      over_limit: [0, 0, 3],
      near_limit: [0, 2, 0],
    });
    // b appeared at the third reading: zeros before, then all its hits in that step.
    assert.deepEqual(history.of('b').total_hits, [0, 0, 7]);
    now = totals({ a: [16, 4, 2], b: [7, 0, 0] });
    history.sample();
    assert.deepEqual(history.of('a').total_hits, [5, 0, 1], 'the oldest step dropped');
    assert.deepEqual(history.of('never').total_hits, [0, 0, 0], 'an unseen rule is a flat line');
  });

  it('never shows a negative step (a counter that went back, e.g. a reset table)', () => {
    let now = totals({ a: [10, 0, 0] });
    const history = new StatsHistory({ read: () => now });
    history.sample();
    now = totals({ a: [4, 0, 0] });
    history.sample();
    assert.deepEqual(history.of('a').total_hits, [0, 0]);
  });

  it('samples on its own once started and stops on close', async () => {
    let reads = 0;
    const history = new StatsHistory({
      read: () => {
        reads++;
        return totals({});
      },
      stepMs: 5,
    });
    history.start();
    assert.equal(reads, 1, 'the baseline is read at start');
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (reads >= 3) {
          clearInterval(check);
          resolve();
        }
      }, 1);
    });
    await history.close();
    const stopped = reads;
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(reads, stopped, 'no reading after close');
  });
});
