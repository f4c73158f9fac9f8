// The local over-limit cache on its own: expiry, byte bound, eviction order, and the sliding
// window's "over until" arithmetic it is fed with.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { LocalOverLimitCache } from '../../../src/ratelimit/store/local-cache.js';
import { overLimitUntil, planWindow, slidingCount } from '../../../src/ratelimit/store/window-keys.js';

describe('local over-limit cache', () => {
  it('answers until the given time, then forgets', () => {
    const c = new LocalOverLimitCache(10_000);
    c.set('k', 2000, 1000);
    assert.equal(c.has('k', 1999), true);
    assert.equal(c.has('k', 2000), false);
    assert.deepEqual(
      [c.stats().hitCount, c.stats().missCount, c.stats().expiredCount, c.stats().entryCount],
      [1, 1, 1, 0],
    );
  });

  it('stays within its byte bound by evicting the oldest entries', () => {
    const c = new LocalOverLimitCache(1000);
    for (let i = 0; i < 100; i++) c.set(`key-${i}`, 10_000, 0);
    const s = c.stats();
    assert.ok(s.bytes <= 1000);
    assert.ok(s.entryCount > 0 && s.entryCount < 100);
    assert.equal(s.evacuateCount, 100 - s.entryCount);
    assert.equal(c.has('key-99', 1), true);
    assert.equal(c.has('key-0', 1), false);
  });

  it('ignores entries already expired or larger than the whole cache; refuses a size of 0', () => {
    const c = new LocalOverLimitCache(100);
    c.set('past', 5, 10);
    c.set('x'.repeat(100), 50, 10);
    assert.equal(c.stats().entryCount, 0);
    assert.throws(() => new LocalOverLimitCache(0));
  });

  it('sliding: a key over only through the previous window is cached until that weight has decayed', () => {
    const plan = planWindow('k_', 60, 60_000, 'sliding');
    assert.equal(plan.current, 'k_60_s60');
    assert.equal(plan.previous, 'k_0_s60');
    // limit 10, current 4, previous 12: over while floor(12 × (1 − f)) + 4 > 10, i.e. f ≤ 5/12
    // (25 s into the window). Floating point may end the entry a millisecond early: harmless.
    const until = overLimitUntil(4, 12, 10, plan);
    assert.ok(until >= 84_999 && until <= 85_000, `until ${until}`);
    assert.ok(slidingCount(4, 12, plan, until - 1) > 10);
    assert.ok(slidingCount(4, 12, plan, 85_001) <= 10);
    // Over by the current window alone: until the window ends.
    assert.equal(overLimitUntil(11, 12, 10, plan), 120_000);
    assert.equal(planWindow('k_', 60, 61_000, 'fixed').current, 'k_60');
  });
});
