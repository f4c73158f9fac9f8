// The rate limit service's readiness checks (GET /readyz): each configured shared store answers
// one cheap command. The memory store has no check, since it is this process's shared memory.

import type { ReadinessRegistry } from '../../core/observe/index.js';
import type { ConfiguredStores } from './factory.js';

/** A key no rate limit counter uses: EXISTS on it is a round trip that changes nothing. */
const PROBE_KEY = 'sluice:readyz';

export function registerStoreReadiness(
  readiness: ReadinessRegistry,
  stores: ConfiguredStores | undefined,
): void {
  if (!stores) return;
  if (stores.redis) {
    const pool = stores.redis.pool;
    readiness.register('redis', async () => {
      await pool.submit([['exists', PROBE_KEY]]);
    });
  }
  if (stores.redisPerSecond) {
    const pool = stores.redisPerSecond.pool;
    readiness.register('redis_per_second', async () => {
      await pool.submit([['exists', PROBE_KEY]]);
    });
  }
  if (stores.objcache) {
    const client = stores.objcache.client;
    readiness.register('memcached', async () => {
      await client.getMulti([PROBE_KEY]);
    });
  }
}
