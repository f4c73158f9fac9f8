// A reload swaps the compiled rules while decisions run: every answer must come wholly from
// the rule set it started with (never one status from the old set and one from the new), and
// every decision started after the swap must use the new set.

import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { RunningService } from '../../src/core/service.js';
import { ManualClock } from '../../src/ratelimit/engine/clock.js';
import { RateLimitEngine } from '../../src/ratelimit/engine/engine.js';
import { startRatelimit } from '../../src/ratelimit/index.js';
import { createStatsBuffer, SharedStatsTable } from '../../src/ratelimit/stats/shared-table.js';
import { createMemoryStoreBuffer, MemoryCounterStore } from '../../src/ratelimit/store/memory.js';
import type { CounterOp, CounterStore, Counts } from '../../src/ratelimit/store/types.js';
import type { RateLimitRequest, RateLimitResponse } from '../../src/ratelimit/types.js';
import { makeTestContext } from '../helpers/context.js';
import { withinHang } from '../helpers/wait.js';
import { decide, makeEngine, rulesFrom, T0 } from './helpers.js';

/** Rule set `tag`: limits tag+1 and tag+2 on two descriptors of one request. */
const config = (tag: number) => `
domain: race
descriptors:
  - key: a
    rate_limit: { unit: hour, requests_per_unit: ${tag + 1} }
  - key: b
    rate_limit: { unit: hour, requests_per_unit: ${tag + 2} }
`;
const A = 1000;
const B = 2000;
const REQUEST: RateLimitRequest = {
  domain: 'race',
  descriptors: [{ entries: [{ key: 'a', value: 'x' }] }, { entries: [{ key: 'b', value: 'y' }] }],
};

/** Which rule set answered: A or B when both statuses agree, NaN for a mixed answer. */
function answeredBy(r: { statuses: { currentLimit?: { requestsPerUnit: number } | undefined }[] }): number {
  const first = r.statuses[0]?.currentLimit?.requestsPerUnit;
  const second = r.statuses[1]?.currentLimit?.requestsPerUnit;
  if (first === A + 1 && second === A + 2) return A;
  if (first === B + 1 && second === B + 2) return B;
  return NaN;
}

/** The memory table behind a promise that resolves when the test says so (a slow network store). */
class HeldStore implements CounterStore {
  readonly kind = 'held';
  private readonly held: (() => void)[] = [];
  constructor(private readonly inner: MemoryCounterStore) {}
  increment(ops: readonly CounterOp[], nowMs: number): Promise<Counts> {
    const counts = ops.map((op) => this.inner.incrementOne(op.key, op.divider, op.hits, nowMs));
    return new Promise((resolve) => this.held.push(() => resolve(counts)));
  }
  peek(ops: readonly CounterOp[], nowMs: number): Counts {
    return ops.map((op) => this.inner.peekOne(op.key, op.divider, nowMs));
  }
  release(): void {
    for (const r of this.held.splice(0)) r();
  }
  healthy(): boolean {
    return true;
  }
  async close(): Promise<void> {}
}

describe('ratelimit: a reload racing decisions', () => {
  it('memory store: each decision is answered by the rules installed when it ran', () => {
    const a = rulesFrom({ 'race.yaml': config(A) });
    const b = rulesFrom({ 'race.yaml': config(B) });
    const { engine } = makeEngine(a);
    for (let i = 0; i < 200; i++) {
      const installed = i % 3 === 0 ? b : a;
      engine.setRules(installed);
      assert.equal(answeredBy(decide(engine, REQUEST)), installed === a ? A : B);
    }
  });

  it('a store that answers later: decisions in flight keep the rules they started with', async () => {
    const store = new HeldStore(new MemoryCounterStore(createMemoryStoreBuffer(256), 'fixed'));
    const engine = new RateLimitEngine({
      store,
      stats: new SharedStatsTable(createStatsBuffer(64)),
      clock: new ManualClock(T0),
      settings: {
        shadowMode: false,
        quotaMode: false,
        nearLimitRatio: 0.8,
        stopCacheKeyIncrementWhenOverlimit: false,
        cacheKeyPrefix: '',
        responseHeaders: { enabled: false, limit: 'a', remaining: 'b', reset: 'c' },
      },
    });
    engine.setRules(rulesFrom({ 'race.yaml': config(A) }));
    const before = engine.shouldRateLimit(REQUEST) as Promise<RateLimitResponse>;
    engine.setRules(rulesFrom({ 'race.yaml': config(B) }));
    const after = engine.shouldRateLimit(REQUEST) as Promise<RateLimitResponse>;
    store.release();
    assert.equal(answeredBy(await before), A);
    assert.equal(answeredBy(await after), B);
    // both rule sets count on the same counters (same keys, same windows)
    assert.equal((await after).statuses[0]!.limitRemaining, B + 1 - 2);
  });

  it('over HTTP while the configuration file is rewritten: no mixed answer, the new rules win', async () => {
    const runtime = mkdtempSync(join(tmpdir(), 'sluice-rl-race-'));
    mkdirSync(join(runtime, 'config'));
    writeFileSync(join(runtime, 'config', 'race.yaml'), config(A));
    const t = await makeTestContext({
      env: { RUNTIME_ROOT: runtime, RUNTIME_WATCH_ROOT: 'false', WINDOW_ALGORITHM: 'fixed' },
    });
    let service: RunningService | undefined;
    try {
      service = await startRatelimit(t.ctx, { clock: new ManualClock(Date.now()) });
      const url = `${service.addresses.http!}/json`;
      const body = JSON.stringify(REQUEST);
      const batch = () =>
        Promise.all(
          Array.from({ length: 20 }, async () => {
            const res = await fetch(url, { method: 'POST', body });
            assert.equal(res.status, 200);
            return answeredBy((await res.json()) as Parameters<typeof answeredBy>[0]);
          }),
        );
      const seen: number[][] = [await batch()];
      writeFileSync(join(runtime, 'config', 'race.yaml'), config(B));
      // Batches run one after another until one is answered wholly by B.
      await withinHang(
        'an HTTP batch answered by the reloaded rules',
        (async () => {
          while (!seen.at(-1)!.every((x) => x === B)) seen.push(await batch());
        })(),
      );
      const all = seen.flat();
      assert.ok(
        all.every((x) => x === A || x === B),
        'every answer comes from one rule set',
      );
      // Once a batch has seen B, no later batch sees A (the swap is one assignment).
      const firstB = seen.findIndex((b) => b.includes(B));
      for (const later of seen.slice(firstB + 1))
        assert.ok(!later.includes(A), 'no old answer after the swap');
      assert.ok(seen[0]!.every((x) => x === A));
    } finally {
      await service?.close();
      await t.cleanup();
      rmSync(runtime, { recursive: true, force: true });
    }
  });
});
