// Faults of a real redis-server: killed mid-load, stalled (SIGSTOP), restarted on the same port.
// Decisions must settle (never hang) with the policy's answer, health must follow the
// connection, the error statistic must count, and service must resume without intervention.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { HealthRegistry } from '../../../src/core/health.js';
import { EnvReader } from '../../../src/core/settings/index.js';
import { ManualClock } from '../../../src/ratelimit/engine/clock.js';
import { RateLimitEngine } from '../../../src/ratelimit/engine/engine.js';
import { createStatsBuffer, SharedStatsTable } from '../../../src/ratelimit/stats/shared-table.js';
import { StoreUnavailableError } from '../../../src/ratelimit/store/failure-policy.js';
import {
  createConfiguredStores,
  STORE_ERROR_STAT,
  type ConfiguredStores,
} from '../../../src/ratelimit/store/factory.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';
import { Code, RateLimitRequestError, type RateLimitResponse } from '../../../src/ratelimit/types.js';
import { redisAvailable, startRedis, type RedisProcess } from '../../helpers/redis.js';
import { rulesFrom } from '../helpers.js';

const CONFIG = `
domain: fault
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 1000000 }
`;

const request = { domain: 'fault', descriptors: [{ entries: [{ key: 'user', value: 'u' }] }] };

async function waitFor(what: string, check: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Settles or throws `hung` — a guard against a hang, not a speed assertion. */
async function settles<T>(p: Promise<T>, ms = 15_000): Promise<PromiseSettledResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('decision never settled')), ms);
  });
  try {
    return await Promise.race([Promise.allSettled([p]).then((r) => r[0]), hung]);
  } finally {
    clearTimeout(timer);
  }
}

describe('Redis failure policy', { skip: redisAvailable ? false : 'redis-server is not installed' }, () => {
  let redis: RedisProcess;
  before(async () => {
    redis = await startRedis();
  });
  after(async () => {
    await redis?.stop();
  });

  async function setUp(mode: 'open' | 'closed'): Promise<{
    engine: RateLimitEngine;
    stats: SharedStatsTable;
    health: HealthRegistry;
    stores: ConfiguredStores;
  }> {
    const health = new HealthRegistry();
    const stats = new SharedStatsTable(createStatsBuffer(256));
    const settings = loadStoreSettings(
      new EnvReader({
        KVSTORE_URL: `127.0.0.1:${redis.port}`,
        KVSTORE_TIMEOUT: '5s',
        KVSTORE_FAILURE_MODE: mode,
        KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: 'true',
        KVSTORE_POOL_SIZE: '2',
      }),
    );
    const stores = (await createConfiguredStores(settings, { algorithm: 'fixed', health, stats }))!;
    const engine = new RateLimitEngine({
      store: stores.store,
      stats,
      clock: new ManualClock(Date.now()),
      settings: {
        shadowMode: false,
        quotaMode: false,
        nearLimitRatio: 0.8,
        stopCacheKeyIncrementWhenOverlimit: false,
        cacheKeyPrefix: `fault_${mode}_`,
        responseHeaders: { enabled: false, limit: 'a', remaining: 'b', reset: 'c' },
      },
    });
    engine.setRules(rulesFrom({ 'fault.yaml': CONFIG }));
    return { engine, stats, health, stores };
  }

  it('open: killed mid-load → decisions still answer OK, health red, errors counted; restart → counted again', async () => {
    const { engine, stats, health, stores } = await setUp('open');
    assert.equal(health.snapshot().components['redis'], true);
    let stop = false;
    const outcomes: PromiseSettledResult<RateLimitResponse>[] = [];
    const load = (async () => {
      while (!stop) {
        const batch = await Promise.all(
          Array.from({ length: 10 }, () => settles(Promise.resolve(engine.shouldRateLimit(request)))),
        );
        outcomes.push(...batch);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await waitFor('some decisions', () => outcomes.length >= 50);
    await redis.kill();
    await waitFor('health to turn red', () => health.snapshot().components['redis'] === false);
    await waitFor('store errors to be counted', () => stats.get(STORE_ERROR_STAT) >= 10);
    const during = outcomes.length;
    await waitFor('decisions while Redis is down', () => outcomes.length >= during + 30);
    await redis.restart();
    await waitFor('health to turn green again', () => health.snapshot().components['redis'] === true);
    const errorsAfterRecovery = stats.get(STORE_ERROR_STAT);
    const fromRecovery = outcomes.length;
    await waitFor('decisions after recovery', () => outcomes.length >= fromRecovery + 30);
    stop = true;
    await load;
    for (const o of outcomes) {
      assert.equal(o.status, 'fulfilled', 'fail-open never refuses a decision');
      if (o.status === 'fulfilled') assert.equal(o.value.overallCode, Code.OK);
    }
    // After recovery the counts come from the restarted (empty) Redis again, not the open answer.
    const r = await engine.shouldRateLimit(request);
    const remaining = r.statuses[0]!.limitRemaining;
    assert.ok(remaining < 1_000_000 - 1, `remaining ${remaining} shows counting resumed`);
    assert.equal(stats.get(STORE_ERROR_STAT), errorsAfterRecovery, 'no errors once Redis is back');
    await stores.close();
  });

  it('closed: a stalled Redis (SIGSTOP) → decisions fail with a store error after the timeout; SIGCONT → served again', async () => {
    const { engine, stats, stores } = await setUp('closed');
    assert.equal((await engine.shouldRateLimit(request)).overallCode, Code.OK);
    process.kill(redis.pid()!, 'SIGSTOP');
    try {
      const outcome = await settles(Promise.resolve(engine.shouldRateLimit(request)));
      assert.equal(outcome.status, 'rejected');
      if (outcome.status === 'rejected') {
        assert.ok(outcome.reason instanceof RateLimitRequestError);
        assert.equal(outcome.reason.kind, 'store_error');
        assert.match((outcome.reason as Error).message, /redis store unavailable: no answer within 5000 ms/);
      }
      // A refused call is counted once, by the Decider that sees the RateLimitRequestError, not here.
      assert.equal(stats.get(STORE_ERROR_STAT), 0);
    } finally {
      process.kill(redis.pid()!, 'SIGCONT');
    }
    await waitFor('decisions served again', async () => {
      const o = await settles(Promise.resolve(engine.shouldRateLimit(request)));
      return o.status === 'fulfilled';
    });
    await stores.close();
  });

  it('closed: Redis down → StoreUnavailableError straight from the store', async () => {
    const { stores } = await setUp('closed');
    await redis.kill();
    try {
      await waitFor('the pool to notice', () => stores.redis!.pool.activeConnections() === 0);
      await assert.rejects(
        Promise.resolve(stores.store.increment([{ key: 'x_', divider: 60, hits: 1 }], Date.now())),
        StoreUnavailableError,
      );
    } finally {
      await redis.restart();
      await stores.close();
    }
  });
});
