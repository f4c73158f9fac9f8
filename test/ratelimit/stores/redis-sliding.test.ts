// Sliding windows on Redis cost one command per counted descriptor: a script that increments
// the current window's key, renews its expiry and reads the previous window's key. Checked with
// MONITOR on a real redis-server: the keys, the expiry, the weighted count, and recovery when the
// server has forgotten the script.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { EnvReader } from '../../../src/core/settings/index.js';
import { ManualClock } from '../../../src/ratelimit/engine/clock.js';
import { RateLimitEngine } from '../../../src/ratelimit/engine/engine.js';
import { createStatsBuffer, SharedStatsTable } from '../../../src/ratelimit/stats/shared-table.js';
import { createConfiguredStores } from '../../../src/ratelimit/store/factory.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';
import type { RateLimitRequest } from '../../../src/ratelimit/types.js';
import { redisAvailable, startRedis, type RedisProcess } from '../../helpers/redis.js';
import { waitUntil } from '../../helpers/wait.js';
import { rulesFrom } from '../helpers.js';

const CONFIG = `
domain: sl
descriptors:
  - key: user
    rate_limit: { unit: minute, requests_per_unit: 10 }
  - key: ip
    rate_limit: { unit: hour, requests_per_unit: 100 }
`;

/** Client commands Redis received while `work` ran (commands run inside scripts left out). */
async function monitored(port: number, work: () => Promise<void>): Promise<string[][]> {
  const client = new Redis({ host: '127.0.0.1', port });
  const monitor = await client.monitor();
  const seen: string[][] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (!source.startsWith('lua')) seen.push(args.map((a) => a.toLowerCase()));
  });
  await work();
  const marker = new Redis({ host: '127.0.0.1', port });
  await marker.echo('monitor-end');
  await waitUntil('the MONITOR end marker', () => seen.some((a) => a[0] === 'echo'), { intervalMs: 10 });
  monitor.disconnect();
  client.disconnect();
  marker.disconnect();
  return seen.filter((a) => !['echo', 'info', 'select', 'client', 'hello', 'ping'].includes(a[0]!));
}

describe(
  'Redis sliding windows: one command per descriptor',
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

    it('increments, renews and reads the previous window in one script call per descriptor', async () => {
      await admin.flushall();
      const stores = (await createConfiguredStores(
        loadStoreSettings(
          new EnvReader({
            KVSTORE_URL: `127.0.0.1:${redis.port}`,
            EXPIRATION_JITTER_MAX_SECONDS: '0',
            KVSTORE_POOL_SIZE: '1',
          }),
        ),
        { algorithm: 'sliding' },
      ))!;
      // 45 s into a minute: a quarter of the previous minute still weighs in.
      const minute = Math.floor(Date.now() / 60_000) * 60;
      const clock = new ManualClock((minute + 45) * 1000);
      const engine = new RateLimitEngine({
        store: stores.store,
        stats: new SharedStatsTable(createStatsBuffer(64)),
        clock,
        settings: {
          shadowMode: false,
          quotaMode: false,
          nearLimitRatio: 0.8,
          stopCacheKeyIncrementWhenOverlimit: false,
          cacheKeyPrefix: '',
          responseHeaders: { enabled: false, limit: 'a', remaining: 'b', reset: 'c' },
        },
      });
      engine.setRules(rulesFrom({ 'sl.yaml': CONFIG }));
      const request: RateLimitRequest = {
        domain: 'sl',
        descriptors: [{ entries: [{ key: 'user', value: 'u' }] }, { entries: [{ key: 'ip', value: 'i' }] }],
      };
      const hourStart = minute + 45 - ((minute + 45) % 3600);
      const current = `sl_user_u_${minute}_s60`;
      const previous = `sl_user_u_${minute - 60}_s60`;
      const hourKey = `sl_ip_i_${hourStart}_s3600`;
      // 8 hits in the previous minute: a quarter of them (2) still count.
      await admin.set(previous, '8');

      const commands = await monitored(redis.port, async () => {
        const r = await engine.shouldRateLimit(request);
        assert.equal(r.statuses[0]!.limitRemaining, 10 - (1 + 2));
        assert.equal(r.statuses[1]!.limitRemaining, 99);
      });
      assert.equal(commands.length, 2, JSON.stringify(commands));
      for (const [c, keys, ttl] of [
        [commands[0]!, [current, previous], '120'],
        [commands[1]!, [hourKey, `sl_ip_i_${hourStart - 3600}_s3600`], '7200'],
      ] as const) {
        assert.ok(c[0] === 'eval' || c[0] === 'evalsha', c[0]);
        assert.deepEqual(c.slice(2), ['2', keys[0].toLowerCase(), keys[1].toLowerCase(), '1', ttl]);
      }
      assert.equal(await admin.get(current), '1');
      assert.ok((await admin.ttl(current)) > 60);
      assert.equal(await admin.exists(hourKey), 1);

      // The server forgets its scripts (restart, failover, SCRIPT FLUSH): the next call loads it again.
      await admin.script('FLUSH');
      const again = await engine.shouldRateLimit(request);
      assert.equal(again.statuses[0]!.limitRemaining, 10 - (2 + 2));
      assert.equal(await admin.get(current), '2');
      await stores.close();
    });
  },
);
