// Shared set-up for the rate limit unit tests: a rule set from fixture text and an engine on a
// fresh shared memory store with a manual clock.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileRuleSet } from '../../src/ratelimit/config/compile.js';
import { parseConfigFile } from '../../src/ratelimit/config/parse.js';
import type { RuleSet } from '../../src/ratelimit/config/rules.js';
import { ManualClock } from '../../src/ratelimit/engine/clock.js';
import { RateLimitEngine, type EngineSettings } from '../../src/ratelimit/engine/engine.js';
import { createStatsBuffer, SharedStatsTable } from '../../src/ratelimit/stats/shared-table.js';
import { createMemoryStoreBuffer, MemoryCounterStore } from '../../src/ratelimit/store/memory.js';
import type { WindowAlgorithm } from '../../src/ratelimit/settings/index.js';
import type { RateLimitRequest, RateLimitResponse } from '../../src/ratelimit/types.js';

export const FIXTURES = join(import.meta.dirname, 'fixtures');

export function fixture(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8');
}

export function rulesFrom(files: Record<string, string>, merge = false): RuleSet {
  const docs = Object.entries(files).map(([name, text]) => parseConfigFile(name, text));
  return compileRuleSet(docs, { mergeDomainConfig: merge, nearLimitRatio: 0.8 });
}

/** 2026-11-25T00:00:00Z — a whole day, hour and minute boundary. */
export const T0 = Date.UTC(2026, 10, 25);

export function makeEngine(
  rules: RuleSet | undefined,
  options: {
    settings?: Partial<EngineSettings>;
    algorithm?: WindowAlgorithm;
    maxKeys?: number;
    now?: number;
  } = {},
) {
  const clock = new ManualClock(options.now ?? T0);
  const stats = new SharedStatsTable(createStatsBuffer(1024));
  const store = new MemoryCounterStore(
    createMemoryStoreBuffer(options.maxKeys ?? 1024),
    options.algorithm ?? 'fixed',
  );
  let untracked = 0;
  const engine = new RateLimitEngine({
    store,
    stats,
    clock,
    settings: {
      shadowMode: false,
      quotaMode: false,
      nearLimitRatio: 0.8,
      stopCacheKeyIncrementWhenOverlimit: false,
      cacheKeyPrefix: '',
      responseHeaders: {
        enabled: false,
        limit: 'RateLimit-Limit',
        remaining: 'RateLimit-Remaining',
        reset: 'RateLimit-Reset',
      },
      ...options.settings,
    },
    onUntracked: () => untracked++,
  });
  engine.setRules(rules);
  return { engine, clock, stats, store, untracked: () => untracked };
}

export function decide(engine: RateLimitEngine, request: RateLimitRequest): RateLimitResponse {
  const result = engine.shouldRateLimit(request);
  if (result instanceof Promise) throw new Error('memory store answers synchronously');
  return result;
}

/** A request with one descriptor per argument; each argument is a list of [key, value]. */
export function req(domain: string, ...descriptors: [string, string][][]): RateLimitRequest {
  return {
    domain,
    descriptors: descriptors.map((d) => ({ entries: d.map(([key, value]) => ({ key, value })) })),
  };
}
