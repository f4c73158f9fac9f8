// Whole decisions (match → cache key → shared counter → status → stats) for the request shapes
// Envoy sends, against a raw Atomics.add. Target from the issue: ≥ 2M two-level decisions/s.

import { compileRuleSet } from '../src/ratelimit/config/compile.js';
import { parseConfigFile } from '../src/ratelimit/config/parse.js';
import { RateLimitEngine } from '../src/ratelimit/engine/engine.js';
import { createStatsBuffer, SharedStatsTable } from '../src/ratelimit/stats/shared-table.js';
import { createMemoryStoreBuffer, MemoryCounterStore } from '../src/ratelimit/store/memory.js';
import type { RateLimitRequest } from '../src/ratelimit/types.js';
import type { BenchFile } from './types.js';

const CONFIG = `
domain: bench
descriptors:
  - key: remote_address
    rate_limit: { unit: second, requests_per_unit: 1000000 }
  - key: user
    descriptors:
      - key: route
        value: /api/*
        rate_limit: { unit: minute, requests_per_unit: 1000000 }
  - key: path
    value: /healthz
    rate_limit: { unlimited: true }
`;

const OPS = 64;

const bench: BenchFile = () => {
  const raw = new Int32Array(new SharedArrayBuffer(64 * 4));
  const rules = compileRuleSet([parseConfigFile('bench.yaml', CONFIG)], {
    mergeDomainConfig: false,
    nearLimitRatio: 0.8,
  });
  const now = Date.UTC(2026, 10, 25, 12, 0, 30);
  const make = (algorithm: 'fixed' | 'sliding') => {
    const engine = new RateLimitEngine({
      store: new MemoryCounterStore(createMemoryStoreBuffer(1 << 17), algorithm),
      stats: new SharedStatsTable(createStatsBuffer(1024)),
      clock: { nowMs: () => now },
      settings: {
        shadowMode: false,
        quotaMode: false,
        nearLimitRatio: 0.8,
        stopCacheKeyIncrementWhenOverlimit: false,
        cacheKeyPrefix: '',
        responseHeaders: { enabled: false, limit: '', remaining: '', reset: '' },
      },
    });
    engine.setRules(rules);
    return engine;
  };
  const fixed = make('fixed');
  const sliding = make('sliding');
  const twoLevel: RateLimitRequest[] = Array.from({ length: 1000 }, (_, i) => ({
    domain: 'bench',
    descriptors: [
      {
        entries: [
          { key: 'user', value: `u${i}` },
          { key: 'route', value: `/api/items/${i % 7}` },
        ],
      },
    ],
  }));
  const oneLevel: RateLimitRequest[] = Array.from({ length: 1000 }, (_, i) => ({
    domain: 'bench',
    descriptors: [{ entries: [{ key: 'remote_address', value: `10.0.${i >> 8}.${i & 255}` }] }],
  }));
  const unlimited: RateLimitRequest = {
    domain: 'bench',
    descriptors: [{ entries: [{ key: 'path', value: '/healthz' }] }],
  };
  let n = 0;
  return [
    {
      name: 'ratelimit decision engine',
      description:
        'full decisions against the shared memory store with a fixed clock; ceiling = one raw Atomics.add',
      ceiling: 'Atomics.add Int32',
      tasks: {
        'Atomics.add Int32': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) Atomics.add(raw, i & 63, 1);
          },
        },
        'two-level descriptor, wildcard, fixed window': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) void fixed.shouldRateLimit(twoLevel[n++ % 1000]!);
          },
        },
        'two-level descriptor, wildcard, sliding window': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) void sliding.shouldRateLimit(twoLevel[n++ % 1000]!);
          },
        },
        'one-level key-only descriptor, sliding window': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) void sliding.shouldRateLimit(oneLevel[n++ % 1000]!);
          },
        },
        'unlimited rule (no store)': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) void sliding.shouldRateLimit(unlimited);
          },
        },
      },
    },
  ];
};

export default bench;
