// The connection pool's empty behaviours against a real redis-server. A lane is made busy with
// a blocking BLPOP (Redis itself stays responsive), so "pool empty" is real, not simulated.
// The BLPOP blocks until the test pushes to its list, so the lane is busy for exactly as long
// as each test needs, however slowly the machine runs.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { EnvReader } from '../../../src/core/settings/index.js';
import { RedisPipeliner, RedisStoreError } from '../../../src/ratelimit/store/redis-pool.js';
import { waitReady } from '../../../src/ratelimit/store/redis-client.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';
import { redisAvailable, redisCli, startRedis, type RedisProcess } from '../../helpers/redis.js';
import { HANG_MS } from '../../helpers/wait.js';

describe(
  'Redis pool when every connection is busy',
  { skip: redisAvailable ? false : 'redis-server is not installed' },
  () => {
    let redis: RedisProcess;
    before(async () => {
      redis = await startRedis();
    });
    after(async () => {
      await redis?.stop();
    });

    async function pool(behavior: string): Promise<RedisPipeliner> {
      const settings = loadStoreSettings(
        new EnvReader({
          KVSTORE_URL: `127.0.0.1:${redis.port}`,
          KVSTORE_POOL_SIZE: '1',
          KVSTORE_POOL_ON_EMPTY_BEHAVIOR: behavior,
          KVSTORE_POOL_ON_EMPTY_WAIT_DURATION: '50ms',
        }),
      );
      const p = new RedisPipeliner(settings.redis!);
      assert.ok(await waitReady(p.clients()[0]!, HANG_MS));
      return p;
    }

    it('ERROR: queued commands fail with "pool empty" after the wait; the busy batch still completes', async () => {
      const p = await pool('ERROR');
      const blocking = p.submit([['blpop', 'pool_err_list', 0]]);
      await new Promise((r) => setImmediate(r));
      await assert.rejects(
        p.submit([['incrby', 'pool_err', 1]]),
        (e: unknown) => e instanceof RedisStoreError && /connection pool empty after 50 ms/.test(e.message),
      );
      redisCli(redis.port, ['LPUSH', 'pool_err_list', 'go']);
      assert.deepEqual(await blocking, [['pool_err_list', 'go']]);
      // With the lane free again, commands flow.
      assert.deepEqual(await p.submit([['incrby', 'pool_err', 1]]), [1]);
      await p.close();
    });

    it('CREATE: an overflow connection serves the queued commands while the pool is busy, then closes', async () => {
      const p = await pool('CREATE');
      const order: string[] = [];
      const blocking = p.submit([['blpop', 'pool_create_list', 0]]).then(() => order.push('blpop'));
      await new Promise((r) => setImmediate(r));
      const queued = p.submit([['incrby', 'pool_create', 5]]).then((r) => {
        order.push('incrby');
        return r;
      });
      assert.deepEqual(await queued, [5]);
      redisCli(redis.port, ['LPUSH', 'pool_create_list', 'go']);
      await blocking;
      assert.deepEqual(order, ['incrby', 'blpop']);
      assert.equal(p.stats().overflowCreated, 1);
      assert.equal(p.stats().localClose, 1);
      assert.equal(p.stats().total, 1);
      await p.close();
    });

    it('WAIT: queued commands wait for the busy connection and then succeed', async () => {
      const p = await pool('WAIT');
      const order: string[] = [];
      const blocking = p.submit([['blpop', 'pool_wait_list', 0]]).then(() => order.push('blpop'));
      await new Promise((r) => setImmediate(r));
      const queued = p.submit([['incrby', 'pool_wait', 2]]).then((r) => {
        order.push('incrby');
        return r;
      });
      redisCli(redis.port, ['LPUSH', 'pool_wait_list', 'go']);
      assert.deepEqual(await queued, [2]);
      await blocking;
      assert.deepEqual(order, ['blpop', 'incrby']);
      assert.equal(p.stats().overflowCreated, 0);
      await p.close();
    });

    it('commands queued in one turn share one batch (one round trip) and each caller gets its own replies', async () => {
      const p = await pool('WAIT');
      const calls = Array.from({ length: 50 }, (_, i) =>
        p.submit([
          ['incrby', `batch_${i % 5}`, 1],
          ['get', `batch_${i % 5}`],
        ]),
      );
      const replies = await Promise.all(calls);
      for (let k = 0; k < 5; k++) {
        const mine = replies.filter((_, i) => i % 5 === k).map((r) => r[0]);
        assert.deepEqual(mine, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      }
      await p.close();
    });

    it('a failing command rejects only the caller whose command it was', async () => {
      const p = await pool('WAIT');
      await p.submit([['set', 'not_a_number', 'abc']]);
      const [good, bad] = await Promise.allSettled([
        p.submit([['incrby', 'fine_key', 1]]),
        p.submit([['incrby', 'not_a_number', 1]]),
      ]);
      assert.equal(good.status, 'fulfilled');
      assert.equal(bad.status, 'rejected');
      await p.close();
    });
  },
);
