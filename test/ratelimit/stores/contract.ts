// One decision suite for every CounterStore: the memory table, Redis, the object cache. A store
// whose increments land asynchronously (the memcached object cache, docs/ratelimit.md) gives `settle`, which
// the suite awaits between sequential calls; concurrent calls are then checked for their
// eventual count rather than for each answer.

import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../../src/ratelimit/engine/clock.js';
import { RateLimitEngine } from '../../../src/ratelimit/engine/engine.js';
import type { WindowAlgorithm } from '../../../src/ratelimit/settings/index.js';
import { createStatsBuffer, SharedStatsTable } from '../../../src/ratelimit/stats/shared-table.js';
import type { CounterOp, CounterStore } from '../../../src/ratelimit/store/types.js';
import { Code, type RateLimitRequest, type RateLimitResponse } from '../../../src/ratelimit/types.js';
import { rulesFrom } from '../helpers.js';

export interface StoreUnderTest {
  store: CounterStore;
  /** Waits for background writes (asynchronous stores only). */
  settle?: () => Promise<void>;
  close(): Promise<void>;
}

export interface ContractOptions {
  /** Every answer is exact under concurrency (false: only the eventual count is). */
  exact: boolean;
  /** Reason to skip the whole suite (binary missing), shown in the test output. */
  skip?: string | false;
}

/** A minute boundary (2026-11-25T00:00:00Z) well clear of any real clock effects. */
const T0 = Date.UTC(2026, 10, 25);

const CONFIG = `
domain: contract
descriptors:
  - key: user
    rate_limit: { unit: minute, requests_per_unit: 3 }
  - key: zero
    rate_limit: { unit: minute, requests_per_unit: 0 }
  - key: free
    rate_limit: { unlimited: true }
  - key: path
    descriptors:
      - key: method
        rate_limit: { unit: hour, requests_per_unit: 2 }
`;

export function storeContract(
  name: string,
  open: (algorithm: WindowAlgorithm) => Promise<StoreUnderTest>,
  options: ContractOptions,
): void {
  for (const algorithm of ['fixed', 'sliding'] as const) {
    describe(`${name} store contract (${algorithm})`, { skip: options.skip ?? false }, () => {
      let s: StoreUnderTest;
      const settle = async (): Promise<void> => {
        await s.settle?.();
      };
      const inc = async (ops: CounterOp[], now: number): Promise<number[]> => {
        const counts = await s.store.increment(ops, now);
        await settle();
        return counts;
      };
      // Every test works on its own keys, so a shared server needs no flushing between tests.
      const key = (label: string): string => `ct_${label}_${randomUUID().slice(0, 8)}_`;

      before(async () => {
        s = await open(algorithm);
      });
      after(async () => {
        await s?.close();
      });

      it('counts hits on a key within one window, returning counts in op order', async () => {
        const a = key('a');
        const b = key('b');
        assert.deepEqual(await inc([{ key: a, divider: 60, hits: 1 }], T0 + 1000), [1]);
        assert.deepEqual(
          await inc(
            [
              { key: a, divider: 60, hits: 1 },
              { key: b, divider: 60, hits: 5 },
            ],
            T0 + 2000,
          ),
          [2, 5],
        );
        assert.deepEqual(
          await inc(
            [
              { key: b, divider: 60, hits: 2 },
              { key: a, divider: 60, hits: 3 },
            ],
            T0 + 59_000,
          ),
          [7, 5],
        );
      });

      it('hits 0 reads without consuming', async () => {
        const a = key('zero');
        assert.deepEqual(await inc([{ key: a, divider: 60, hits: 0 }], T0), [0]);
        await inc([{ key: a, divider: 60, hits: 4 }], T0);
        assert.deepEqual(await inc([{ key: a, divider: 60, hits: 0 }], T0 + 10), [4]);
      });

      it('peek returns the count without changing it', async () => {
        const a = key('peek');
        await inc([{ key: a, divider: 3600, hits: 6 }], T0);
        assert.deepEqual(await s.store.peek([{ key: a, divider: 3600, hits: 1 }], T0 + 5), [6]);
        assert.deepEqual(await s.store.peek([{ key: a, divider: 3600, hits: 1 }], T0 + 5), [6]);
        assert.deepEqual(await s.store.peek([{ key: key('never'), divider: 3600, hits: 1 }], T0), [0]);
      });

      it('different window lengths of one key are different counters', async () => {
        // Away from T0, where minute and hour windows start together: the upstream key then holds
        // the same text for both (key + window start), which the shared stores keep on purpose.
        const a = key('div');
        const t = T0 + 61_000;
        assert.deepEqual(
          await inc(
            [
              { key: a, divider: 60, hits: 2 },
              { key: a, divider: 3600, hits: 5 },
            ],
            t,
          ),
          [2, 5],
        );
        assert.deepEqual(
          await inc(
            [
              { key: a, divider: 60, hits: 1 },
              { key: a, divider: 3600, hits: 1 },
            ],
            t + 1,
          ),
          [3, 6],
        );
      });

      if (algorithm === 'fixed') {
        it('a new window starts from zero (epoch-aligned)', async () => {
          const a = key('win');
          await inc([{ key: a, divider: 60, hits: 9 }], T0 + 59_999);
          assert.deepEqual(await inc([{ key: a, divider: 60, hits: 1 }], T0 + 60_000), [1]);
        });
      } else {
        it('the previous window counts, weighted by the part still inside the interval', async () => {
          const a = key('slide');
          await inc([{ key: a, divider: 60, hits: 10 }], T0 + 5_000);
          // 15 s into the next window: 3/4 of the previous window is still inside → 7 (floor 7.5) + 1.
          assert.deepEqual(await inc([{ key: a, divider: 60, hits: 1 }], T0 + 75_000), [8]);
          // Two windows later nothing of the first window is left.
          assert.deepEqual(await inc([{ key: a, divider: 60, hits: 1 }], T0 + 180_000), [1]);
        });
      }

      it('concurrent increments are neither lost nor double counted', async () => {
        const a = key('conc');
        const n = 40;
        const answers = await Promise.all(
          Array.from({ length: n }, () =>
            Promise.resolve(s.store.increment([{ key: a, divider: 60, hits: 1 }], T0)),
          ),
        );
        await settle();
        if (options.exact) {
          assert.deepEqual(
            answers.map((c) => c[0]).sort((x, y) => x! - y!),
            Array.from({ length: n }, (_, i) => i + 1),
          );
        } else {
          for (const c of answers) assert.ok(c[0]! >= 1 && c[0]! <= n, `answer ${c[0]} within 1..${n}`);
        }
        assert.deepEqual(await s.store.peek([{ key: a, divider: 60, hits: 0 }], T0), [n]);
      });

      it('decides through the engine: OK down to 0 remaining, then OVER_LIMIT; 0 blocks; unlimited skips the store', async () => {
        const clock = new ManualClock(T0 + 1000);
        const engine = new RateLimitEngine({
          store: s.store,
          stats: new SharedStatsTable(createStatsBuffer(256)),
          clock,
          settings: {
            shadowMode: false,
            quotaMode: false,
            nearLimitRatio: 0.8,
            stopCacheKeyIncrementWhenOverlimit: false,
            cacheKeyPrefix: key('engine'),
            responseHeaders: { enabled: false, limit: 'a', remaining: 'b', reset: 'c' },
          },
        });
        engine.setRules(rulesFrom({ 'contract.yaml': CONFIG }));
        const call = async (request: RateLimitRequest): Promise<RateLimitResponse> => {
          const r = await engine.shouldRateLimit(request);
          await settle();
          return r;
        };
        const user = { domain: 'contract', descriptors: [{ entries: [{ key: 'user', value: 'alice' }] }] };
        const remaining: number[] = [];
        for (let i = 0; i < 3; i++) {
          const r = await call(user);
          assert.equal(r.overallCode, Code.OK);
          remaining.push(r.statuses[0]!.limitRemaining);
        }
        assert.deepEqual(remaining, [2, 1, 0]);
        const over = await call(user);
        assert.equal(over.overallCode, Code.OVER_LIMIT);
        assert.equal(over.statuses[0]!.durationUntilReset, 59);
        // Another value of a key-only rule has its own counter.
        assert.equal(
          (await call({ domain: 'contract', descriptors: [{ entries: [{ key: 'user', value: 'bob' }] }] }))
            .overallCode,
          Code.OK,
        );
        assert.equal(
          (await call({ domain: 'contract', descriptors: [{ entries: [{ key: 'zero', value: 'x' }] }] }))
            .overallCode,
          Code.OVER_LIMIT,
        );
        const free = await call({
          domain: 'contract',
          descriptors: [{ entries: [{ key: 'free', value: 'x' }] }],
        });
        assert.equal(free.statuses[0]!.limitRemaining, 4294967295);
        const nested = {
          domain: 'contract',
          descriptors: [
            {
              entries: [
                { key: 'path', value: '/a' },
                { key: 'method', value: 'GET' },
              ],
            },
          ],
          hitsAddend: 2,
        };
        const n1 = await call(nested);
        assert.equal(n1.overallCode, Code.OK);
        assert.equal(n1.statuses[0]!.limitRemaining, 0);
        assert.equal((await call(nested)).overallCode, Code.OVER_LIMIT);
        // A new window (fixed) or a window later with the old one mostly gone (sliding) admits again.
        clock.set(T0 + 3 * 60_000 + 1000);
        assert.equal((await call(user)).overallCode, Code.OK);
      });
    });
  }
}
