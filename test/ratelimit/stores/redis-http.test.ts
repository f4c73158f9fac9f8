// End to end over real HTTP: the rate limit HTTP front end, its Decider and engine on the Redis
// store built by the factory. Redis killed → /json keeps answering (fail-open) and
// /healthcheck turns 500; Redis restarted → both recover and counting resumes.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { HealthRegistry } from '../../../src/core/health.js';
import { buildLogger } from '../../../src/core/log.js';
import { EnvReader } from '../../../src/core/settings/index.js';
import { ManualClock } from '../../../src/ratelimit/engine/clock.js';
import { RateLimitEngine } from '../../../src/ratelimit/engine/engine.js';
import { Decider } from '../../../src/ratelimit/server/decider.js';
import { startRatelimitHttp } from '../../../src/ratelimit/server/http.js';
import { createStatsBuffer, SharedStatsTable } from '../../../src/ratelimit/stats/shared-table.js';
import {
  createConfiguredStores,
  STORE_ERROR_STAT,
  type ConfiguredStores,
} from '../../../src/ratelimit/store/factory.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';
import { redisAvailable, startRedis, type RedisProcess } from '../../helpers/redis.js';
import { rulesFrom } from '../helpers.js';

const CONFIG = `
domain: web
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 2 }
`;

async function waitFor(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe(
  'POST /json and /healthcheck on Redis',
  { skip: redisAvailable ? false : 'redis-server is not installed' },
  () => {
    let redis: RedisProcess;
    let stores: ConfiguredStores;
    let http: { url: string; close(): Promise<void> };
    let stats: SharedStatsTable;
    before(async () => {
      redis = await startRedis();
      const health = new HealthRegistry();
      stats = new SharedStatsTable(createStatsBuffer(256));
      const settings = loadStoreSettings(
        new EnvReader({
          KVSTORE_URL: `127.0.0.1:${redis.port}`,
          KVSTORE_TIMEOUT: '5s',
          KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: 'true',
          KVSTORE_POOL_SIZE: '2',
          CACHE_KEY_PREFIX: 'http_',
        }),
      );
      stores = (await createConfiguredStores(settings, { algorithm: 'fixed', health, stats }))!;
      const engine = new RateLimitEngine({
        store: stores.store,
        stats,
        // The clock stands still: no window edge falls between the hits a test counts.
        clock: new ManualClock(Date.now()),
        settings: {
          shadowMode: false,
          quotaMode: false,
          nearLimitRatio: 0.8,
          stopCacheKeyIncrementWhenOverlimit: false,
          cacheKeyPrefix: 'http_',
          responseHeaders: { enabled: false, limit: 'a', remaining: 'b', reset: 'c' },
        },
      });
      engine.setRules(rulesFrom({ 'web.yaml': CONFIG }));
      http = await startRatelimitHttp({
        host: '127.0.0.1',
        port: 0,
        maxRequestBytes: 65536,
        decider: new Decider(engine, stats, stores.store.kind),
        health,
        log: buildLogger('silent', 'json'),
      });
    });
    after(async () => {
      await http?.close();
      await stores?.close();
      await redis?.stop();
    });

    const decide = async (
      user: string,
    ): Promise<{
      status: number;
      body: { overallCode: string; statuses: { limitRemaining?: number }[] };
    }> => {
      const r = await fetch(`${http.url}/json`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ domain: 'web', descriptors: [{ entries: [{ key: 'user', value: user }] }] }),
      });
      return {
        status: r.status,
        body: (await r.json()) as { overallCode: string; statuses: { limitRemaining?: number }[] },
      };
    };
    const healthStatus = async (): Promise<number> => (await fetch(`${http.url}/healthcheck`)).status;

    it('counts in Redis: 200, 200, then 429', async () => {
      assert.equal(await healthStatus(), 200);
      assert.deepEqual(
        [(await decide('a')).status, (await decide('a')).status, (await decide('a')).status],
        [200, 200, 429],
      );
    });

    it('Redis killed → /json still answers 200 (fail-open), /healthcheck 500, errors counted; restarted → recovers', async () => {
      await redis.kill();
      await waitFor('/healthcheck to fail', async () => (await healthStatus()) === 500);
      const during = await decide('b');
      assert.equal(during.status, 200);
      assert.equal(during.body.overallCode, 'OK');
      assert.ok(stats.get(STORE_ERROR_STAT) >= 1);
      await redis.restart();
      await waitFor('/healthcheck to pass', async () => (await healthStatus()) === 200);
      // The restarted Redis is empty: counting starts over there.
      assert.equal((await decide('b')).body.statuses[0]!.limitRemaining, 1);
      assert.equal((await decide('b')).status, 200);
      assert.equal((await decide('b')).status, 429);
    });
  },
);
