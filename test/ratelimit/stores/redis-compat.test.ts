// Fixed mode must leave Redis exactly as the upstream service would: same keys, same commands
// (INCRBY then EXPIRE per descriptor, in one pipeline), same TTLs. Checked with MONITOR and
// KEYS/TTL on a real redis-server. Also the local over-limit cache and the per-second split.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { EnvReader } from '../../../src/core/settings/index.js';
import { ManualClock } from '../../../src/ratelimit/engine/clock.js';
import { RateLimitEngine } from '../../../src/ratelimit/engine/engine.js';
import { createStatsBuffer, SharedStatsTable } from '../../../src/ratelimit/stats/shared-table.js';
import { createConfiguredStores, type ConfiguredStores } from '../../../src/ratelimit/store/factory.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';
import { Code, type RateLimitRequest } from '../../../src/ratelimit/types.js';
import { redisAvailable, startRedis, type RedisProcess } from '../../helpers/redis.js';
import { rulesFrom } from '../helpers.js';
import { waitUntil } from '../../helpers/wait.js';

const CONFIG = `
domain: compat
descriptors:
  - key: k1
    value: v1
    descriptors:
      - key: k2
        rate_limit: { unit: minute, requests_per_unit: 3 }
  - key: hourly
    rate_limit: { unit: hour, requests_per_unit: 100 }
  - key: persec
    rate_limit: { unit: second, requests_per_unit: 5 }
`;

interface Harness {
  engine: RateLimitEngine;
  clock: ManualClock;
  stores: ConfiguredStores;
}

async function harness(env: Record<string, string>, prefix = ''): Promise<Harness> {
  const stores = (await createConfiguredStores(loadStoreSettings(new EnvReader(env)), {
    algorithm: 'fixed',
  }))!;
  const clock = new ManualClock(Date.now());
  const engine = new RateLimitEngine({
    store: stores.store,
    stats: new SharedStatsTable(createStatsBuffer(256)),
    clock,
    settings: {
      shadowMode: false,
      quotaMode: false,
      nearLimitRatio: 0.8,
      stopCacheKeyIncrementWhenOverlimit: false,
      cacheKeyPrefix: prefix,
      responseHeaders: { enabled: false, limit: 'a', remaining: 'b', reset: 'c' },
    },
  });
  engine.setRules(rulesFrom({ 'compat.yaml': CONFIG }));
  return { engine, clock, stores };
}

/** Commands Redis received while `work` ran (MONITOR on a separate connection). */
async function monitored(port: number, work: () => Promise<void>): Promise<string[][]> {
  const client = new Redis({ host: '127.0.0.1', port });
  const monitor = await client.monitor();
  const seen: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[]) => seen.push(args));
  await work();
  // MONITOR output trails the replies slightly; a PING through the monitored server marks the end.
  const marker = new Redis({ host: '127.0.0.1', port });
  await marker.echo('monitor-end');
  await waitUntil('the MONITOR end marker', () => seen.some((a) => a[0]?.toLowerCase() === 'echo'), {
    intervalMs: 10,
  });
  monitor.disconnect();
  client.disconnect();
  marker.disconnect();
  return seen.filter(
    (a) => !['echo', 'info', 'select', 'client', 'hello', 'ping'].includes(a[0]!.toLowerCase()),
  );
}

describe(
  'Redis fixed mode matches the upstream service',
  { skip: redisAvailable ? false : 'redis-server is not installed' },
  () => {
    let redis: RedisProcess;
    let admin: Redis;
    before(async () => {
      redis = await startRedis();
      admin = new Redis({ host: '127.0.0.1', port: redis.port });
    });
    after(async () => {
      admin?.disconnect();
      await redis?.stop();
    });

    it('sends INCRBY + EXPIRE per descriptor in one pipeline with the upstream key format and TTL', async () => {
      await admin.flushall();
      const h = await harness(
        {
          KVSTORE_URL: `127.0.0.1:${redis.port}`,
          EXPIRATION_JITTER_MAX_SECONDS: '0',
          KVSTORE_POOL_SIZE: '1',
        },
        'pfx_',
      );
      const nowS = Math.floor(h.clock.nowMs() / 1000);
      const minuteStart = nowS - (nowS % 60);
      const hourStart = nowS - (nowS % 3600);
      const request: RateLimitRequest = {
        domain: 'compat',
        descriptors: [
          {
            entries: [
              { key: 'k1', value: 'v1' },
              { key: 'k2', value: 'x' },
            ],
          },
          { entries: [{ key: 'hourly', value: 'h' }] },
          { entries: [{ key: 'unknown', value: 'z' }] },
        ],
        hitsAddend: 2,
      };
      const sentAt = Date.now();
      const commands = await monitored(redis.port, async () => {
        const r = await h.engine.shouldRateLimit(request);
        assert.equal(r.overallCode, Code.OK);
        assert.equal(r.statuses[0]!.limitRemaining, 1);
      });
      const k1 = `pfx_compat_k1_v1_k2_x_${minuteStart}`;
      const k2 = `pfx_compat_hourly_h_${hourStart}`;
      assert.deepEqual(
        commands.map((c) => c.map((x) => x.toLowerCase())),
        [
          ['incrby', k1.toLowerCase(), '2'],
          ['expire', k1.toLowerCase(), '60'],
          ['incrby', k2.toLowerCase(), '2'],
          ['expire', k2.toLowerCase(), '3600'],
        ],
      );
      assert.deepEqual((await admin.keys('*')).sort(), [k1, k2].sort());
      assert.equal(await admin.get(k1), '2');
      // A TTL falls as real time passes: it may be lower by the seconds this test has waited
      // since the EXPIRE, however many that were, and one more for Redis rounding it.
      const [ttl1, ttl2] = [await admin.ttl(k1), await admin.ttl(k2)];
      const waited = Math.ceil((Date.now() - sentAt) / 1000) + 1;
      assert.ok(ttl1 >= 60 - waited && ttl1 <= 60, `ttl ${ttl1}, ${waited} s after the EXPIRE`);
      assert.ok(ttl2 >= 3600 - waited && ttl2 <= 3600, `ttl ${ttl2}, ${waited} s after the EXPIRE`);
      await h.stores.close();
    });

    it('adds the expiration jitter in [0, EXPIRATION_JITTER_MAX_SECONDS) on every hit', async () => {
      await admin.flushall();
      const h = await harness({
        KVSTORE_URL: `127.0.0.1:${redis.port}`,
        EXPIRATION_JITTER_MAX_SECONDS: '300',
      });
      const ttls = new Set<string>();
      const commands = await monitored(redis.port, async () => {
        for (let i = 0; i < 20; i++)
          await h.engine.shouldRateLimit({
            domain: 'compat',
            descriptors: [{ entries: [{ key: 'hourly', value: `v${i}` }] }],
          });
      });
      for (const c of commands) {
        if (c[0]!.toLowerCase() !== 'expire') continue;
        const ttl = Number(c[2]);
        assert.ok(ttl >= 3600 && ttl < 3900, `ttl ${ttl} within [3600, 3900)`);
        ttls.add(c[2]!);
      }
      assert.equal(commands.filter((c) => c[0]!.toLowerCase() === 'expire').length, 20);
      // 20 draws from 300 values all equal would mean no jitter at all.
      assert.ok(ttls.size > 1);
      await h.stores.close();
    });

    it('the local over-limit cache answers known-over keys without Redis until the window ends', async () => {
      await admin.flushall();
      const h = await harness({ KVSTORE_URL: `127.0.0.1:${redis.port}`, LocalCacheSizeInBytes: '100000' });
      const request = {
        domain: 'compat',
        descriptors: [
          {
            entries: [
              { key: 'k1', value: 'v1' },
              { key: 'k2', value: 'y' },
            ],
          },
        ],
      };
      for (let i = 0; i < 3; i++)
        assert.equal((await h.engine.shouldRateLimit(request)).overallCode, Code.OK);
      assert.equal((await h.engine.shouldRateLimit(request)).overallCode, Code.OVER_LIMIT);
      const commands = await monitored(redis.port, async () => {
        for (let i = 0; i < 5; i++)
          assert.equal((await h.engine.shouldRateLimit(request)).overallCode, Code.OVER_LIMIT);
      });
      assert.deepEqual(commands, []);
      assert.equal(h.stores.localCache!.stats().hitCount, 5);
      const gauges = h.stores.gauges();
      assert.equal(gauges['ratelimit.localcache.hitCount'], 5);
      assert.equal(gauges['ratelimit.localcache.entryCount'], 1);
      assert.equal(gauges['ratelimit.redis_pool.cx_total'], 10);
      assert.equal(gauges['ratelimit.redis_pool.cx_active'], 10);
      // The next window is a new key: Redis is asked again.
      h.clock.advance(60_000);
      const next = await monitored(redis.port, async () => {
        assert.equal((await h.engine.shouldRateLimit(request)).overallCode, Code.OK);
      });
      assert.equal(next.filter((c) => c[0]!.toLowerCase() === 'incrby').length, 1);
      await h.stores.close();
    });

    it('KVSTORE_PERSECOND sends per-second limits to the second Redis and the rest to the main one', async () => {
      const second = await startRedis();
      const secondAdmin = new Redis({ host: '127.0.0.1', port: second.port });
      try {
        await admin.flushall();
        const h = await harness({
          KVSTORE_URL: `127.0.0.1:${redis.port}`,
          KVSTORE_PERSECOND: 'true',
          KVSTORE_PERSECOND_URL: `127.0.0.1:${second.port}`,
          KVSTORE_PERSECOND_POOL_SIZE: '2',
        });
        const r = await h.engine.shouldRateLimit({
          domain: 'compat',
          descriptors: [
            { entries: [{ key: 'persec', value: 'a' }] },
            { entries: [{ key: 'hourly', value: 'b' }] },
            { entries: [{ key: 'persec', value: 'c' }] },
          ],
        });
        assert.deepEqual(
          r.statuses.map((s) => s.limitRemaining),
          [4, 99, 4],
        );
        const mainKeys = await admin.keys('*');
        const secondKeys = await secondAdmin.keys('*');
        assert.equal(mainKeys.length, 1);
        assert.match(mainKeys[0]!, /^compat_hourly_b_\d+$/);
        assert.deepEqual(secondKeys.map((k) => k.replace(/\d+$/, '')).sort(), [
          'compat_persec_a_',
          'compat_persec_c_',
        ]);
        await h.stores.close();
      } finally {
        secondAdmin.disconnect();
        await second.stop();
      }
    });
  },
);
