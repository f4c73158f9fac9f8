// Window edges through the whole engine with an injected clock, for both algorithms, and the
// once-per-turn clock of the hot path.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { EventLoopClock } from '../../src/ratelimit/engine/clock.js';
import { Code } from '../../src/ratelimit/types.js';
import { decide, makeEngine, req, rulesFrom, T0 } from './helpers.js';

const rules = () =>
  rulesFrom({
    'w.yaml': 'domain: w\ndescriptors:\n  - key: k\n    rate_limit: { unit: minute, requests_per_unit: 4 }\n',
  });
const hit = (engine: Parameters<typeof decide>[0]) => decide(engine, req('w', [['k', 'v']])).statuses[0]!;

describe('ratelimit windows at their edges (injected clock)', () => {
  it('fixed: the last millisecond of a window still counts in it; the next one starts from zero', () => {
    const { engine, clock } = makeEngine(rules(), { algorithm: 'fixed' });
    clock.set(T0 + 59_999);
    for (let i = 0; i < 4; i++) hit(engine);
    assert.equal(hit(engine).code, Code.OVER_LIMIT);
    assert.equal(hit(engine).durationUntilReset, 1);
    clock.set(T0 + 60_000);
    const fresh = hit(engine);
    assert.equal(fresh.code, Code.OK);
    assert.equal(fresh.limitRemaining, 3);
    assert.equal(fresh.durationUntilReset, 60);
  });

  it('sliding: a burst at the end of a window still weighs on the start of the next', () => {
    const { engine, clock } = makeEngine(rules(), { algorithm: 'sliding' });
    clock.set(T0 + 59_000);
    for (let i = 0; i < 4; i++) assert.equal(hit(engine).code, Code.OK);
    // just after the edge the previous 4 still weigh floor(4 × 59.5/60) = 3: one more fits,
    // where a fixed window would allow four
    clock.set(T0 + 60_500);
    const edge = hit(engine);
    assert.equal(edge.code, Code.OK);
    assert.equal(edge.limitRemaining, 0);
    assert.equal(hit(engine).code, Code.OVER_LIMIT);
    // halfway: floor(4 × 0.5) = 2 from before + 2 counted in this window + this hit = 5 > 4
    clock.set(T0 + 90_000);
    assert.equal(hit(engine).code, Code.OVER_LIMIT);
    // two windows after the last hits nothing is left
    clock.set(T0 + 180_000);
    assert.equal(hit(engine).limitRemaining, 3);
  });

  it('EventLoopClock reads Date.now() once per event-loop turn', async () => {
    const clock = new EventLoopClock();
    const first = clock.nowMs();
    const spinUntil = Date.now() + 5;
    while (Date.now() < spinUntil) {
      // the same turn: time moves, the cached reading does not
    }
    assert.equal(clock.nowMs(), first);
    // The clock clears its reading from a setImmediate; one queued after it runs after it. A
    // timer is no boundary: Node 22's test runner starts a test where a due timer fires before
    // the pending immediates, so the reading would still be the cached one.
    await new Promise((r) => setImmediate(r));
    assert.ok(clock.nowMs() > first);
  });
});
