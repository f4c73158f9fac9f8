// The engine finds memory-store counters from key hashes pieced together from precomputed
// segments; network stores get the key as text. Both must name the same counter for every key
// shape: an engine on each path, sharing one counter table, must see each other's hits.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/ratelimit/engine/clock.js';
import { RateLimitEngine, type EngineSettings } from '../../src/ratelimit/engine/engine.js';
import { createStatsBuffer, SharedStatsTable } from '../../src/ratelimit/stats/shared-table.js';
import { createMemoryStoreBuffer, MemoryCounterStore } from '../../src/ratelimit/store/memory.js';
import type { CounterOp, CounterStore, Counts } from '../../src/ratelimit/store/types.js';
import { Code, type RateLimitRequest } from '../../src/ratelimit/types.js';
import { decide, rulesFrom, T0 } from './helpers.js';

const CONFIG = `
domain: shapes
descriptors:
  - key: ip
    rate_limit: { unit: minute, requests_per_unit: 100 }
  - key: path
    value: /login
    rate_limit: { unit: minute, requests_per_unit: 100 }
  - key: path
    value: /files/*
    rate_limit: { unit: minute, requests_per_unit: 100 }
  - key: shared
    value: x*
    share_threshold: true
    rate_limit: { unit: minute, requests_per_unit: 100 }
  - key: a_b
    rate_limit: { unit: hour, requests_per_unit: 100 }
  - key: user
    detailed_metric: true
    descriptors:
      - key: route
        value: /api/*
        rate_limit: { unit: minute, requests_per_unit: 100 }
      - key: plan
        value: gold
        rate_limit: { unit: minute, requests_per_unit: 100 }
`;

/** The memory store behind the CounterStore interface only: the engine takes the text-key path. */
class TextKeyStore implements CounterStore {
  readonly kind = 'text';
  constructor(private readonly inner: MemoryCounterStore) {}
  increment(ops: readonly CounterOp[], nowMs: number): Counts {
    return ops.map((op) => this.inner.incrementOne(op.key, op.divider, op.hits, nowMs));
  }
  peek(ops: readonly CounterOp[], nowMs: number): Counts {
    return ops.map((op) => this.inner.peekOne(op.key, op.divider, nowMs));
  }
  healthy(): boolean {
    return true;
  }
  async close(): Promise<void> {}
}

const SETTINGS: EngineSettings = {
  shadowMode: false,
  quotaMode: false,
  nearLimitRatio: 0.8,
  stopCacheKeyIncrementWhenOverlimit: false,
  cacheKeyPrefix: 'pre:',
  responseHeaders: { enabled: false, limit: 'a', remaining: 'b', reset: 'c' },
};

function enginesOnOneTable(algorithm: 'fixed' | 'sliding') {
  const buffer = createMemoryStoreBuffer(4096);
  const clock = new ManualClock(T0 + 5000);
  const rules = rulesFrom({ 'shapes.yaml': CONFIG });
  const make = (store: CounterStore) => {
    const engine = new RateLimitEngine({
      store,
      stats: new SharedStatsTable(createStatsBuffer(256)),
      clock,
      settings: SETTINGS,
    });
    engine.setRules(rules);
    return engine;
  };
  const hashed = make(new MemoryCounterStore(buffer, algorithm));
  const text = make(new TextKeyStore(new MemoryCounterStore(buffer, algorithm)));
  return { hashed, text };
}

const one = (entries: [string, string][], limit?: { requestsPerUnit: number; unit: number }) =>
  ({
    domain: 'shapes',
    descriptors: [{ entries: entries.map(([key, value]) => ({ key, value })), ...(limit ? { limit } : {}) }],
  }) satisfies RateLimitRequest;

const remaining = (engine: RateLimitEngine, request: RateLimitRequest) => {
  const s = decide(engine, request).statuses[0]!;
  assert.equal(s.code, Code.OK);
  return s.limitRemaining;
};

describe('ratelimit engine: hashed keys and text keys name the same counters', () => {
  for (const algorithm of ['fixed', 'sliding'] as const) {
    it(`every key shape (${algorithm})`, () => {
      const { hashed, text } = enginesOnOneTable(algorithm);
      const shapes: [string, RateLimitRequest][] = [
        ['key only', one([['ip', '10.0.0.1']])],
        ['explicit value', one([['path', '/login']])],
        ['wildcard, one counter per value', one([['path', '/files/a/b']])],
        ['share_threshold, the pattern in the key', one([['shared', 'xyz']])],
        ['composite alias (config a_b, request a=b)', one([['a', 'b']])],
        [
          'two levels, wildcard',
          one([
            ['user', 'u1'],
            ['route', '/api/items'],
          ]),
        ],
        [
          'two levels, explicit value',
          one([
            ['user', 'u1'],
            ['plan', 'gold'],
          ]),
        ],
        ['limit override', one([['anything', 'v']], { requestsPerUnit: 100, unit: 2 })],
        ['non-ASCII value', one([['ip', 'ünï-çødé-😀']])],
        ['empty value', one([['ip', '']])],
      ];
      for (const [name, request] of shapes) {
        // Alternate the paths: each must see the other's hits on the same counter.
        assert.equal(remaining(hashed, request), 99, name);
        assert.equal(remaining(text, request), 98, name);
        assert.equal(remaining(hashed, request), 97, name);
      }
      // share_threshold: another matching value counts on the same counter, on both paths.
      assert.equal(remaining(text, one([['shared', 'x-other']])), 96);
      assert.equal(remaining(hashed, one([['shared', 'xx']])), 95);
      // a different value of a key-only or wildcard rule is a different counter
      assert.equal(remaining(hashed, one([['ip', '10.0.0.2']])), 99);
      assert.equal(remaining(text, one([['path', '/files/other']])), 99);
    });
  }

  it('the cache key prefix and the domain are part of the key', () => {
    const buffer = createMemoryStoreBuffer(1024);
    const clock = new ManualClock(T0);
    const rules = rulesFrom({ 'shapes.yaml': CONFIG });
    const engine = (prefix: string) => {
      const e = new RateLimitEngine({
        store: new MemoryCounterStore(buffer, 'fixed'),
        stats: new SharedStatsTable(createStatsBuffer(64)),
        clock,
        settings: { ...SETTINGS, cacheKeyPrefix: prefix },
      });
      e.setRules(rules);
      return e;
    };
    const request = one([['ip', '1']]);
    assert.equal(remaining(engine('p1:'), request), 99);
    assert.equal(remaining(engine('p2:'), request), 99);
    assert.equal(remaining(engine('p1:'), request), 98);
    // `pre:` + `shapes_ip_1_` as one string finds the counter the engine used
    const store = new MemoryCounterStore(buffer, 'fixed');
    assert.equal(store.peekOne('p1:shapes_ip_1_', 60, T0), 2);
  });
});
