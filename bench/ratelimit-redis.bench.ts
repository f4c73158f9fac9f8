// The Redis counter store against the client-library ceiling measured in the same run: ioredis
// with auto-pipelining sending exactly the commands of a two-descriptor decision (2 × INCRBY +
// EXPIRE), 100 decisions in flight, no HTTP. ioredis, not Redis, is the limit there (about 5 µs
// per command object); the store's batching should reach or pass it. A redis-server of its own
// is started on a free port in setup and killed by pid in teardown.

import { Redis } from 'ioredis';
import { EnvReader } from '../src/core/settings/index.js';
import { createConfiguredStores, type ConfiguredStores } from '../src/ratelimit/store/factory.js';
import { loadStoreSettings } from '../src/ratelimit/settings/store.js';
import type { CounterOp } from '../src/ratelimit/store/types.js';
import { redisAvailable, startRedis, type RedisProcess } from '../test/helpers/redis.js';
import type { BenchFile } from './types.js';

const IN_FLIGHT = 100;

const bench: BenchFile = () => {
  if (!redisAvailable) return [];
  let redis: RedisProcess | undefined;
  let auto: Redis | undefined;
  let fixed: ConfiguredStores | undefined;
  let sliding: ConfiguredStores | undefined;
  let windowed: ConfiguredStores | undefined;
  let n = 0;
  const keys = Array.from({ length: 1000 }, (_, i) => `bench_user_u${i}_`);
  const decision = (): CounterOp[] => {
    const i = n++;
    return [
      { key: keys[i % 1000]!, divider: 60, hits: 1, limit: 1_000_000 },
      { key: keys[(i * 7) % 1000]! + 'path_/x_', divider: 3600, hits: 1, limit: 1_000_000 },
    ];
  };
  const open = (env: Record<string, string>, algorithm: 'fixed' | 'sliding') =>
    createConfiguredStores(
      loadStoreSettings(
        new EnvReader({ KVSTORE_URL: `127.0.0.1:${redis!.port}`, KVSTORE_POOL_SIZE: '4', ...env }),
      ),
      { algorithm },
    );
  const storeTask = (get: () => ConfiguredStores | undefined) => ({
    opsPerCall: IN_FLIGHT,
    fn: async () => {
      const store = get()!.store;
      const now = Date.now();
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, () => Promise.resolve(store.increment(decision(), now))),
      );
    },
  });
  return [
    {
      name: 'ratelimit redis store',
      description: `${IN_FLIGHT} two-descriptor decisions in flight (INCRBY+EXPIRE ×2 each); ceiling = ioredis auto-pipelining the same commands, no HTTP`,
      ceiling: 'ioredis auto-pipelining (decision mix)',
      setup: async () => {
        redis = await startRedis();
        auto = new Redis({ host: '127.0.0.1', port: redis.port, enableAutoPipelining: true });
        fixed = await open({}, 'fixed');
        sliding = await open({}, 'sliding');
        windowed = await open({ KVSTORE_PIPELINE_WINDOW: '200us' }, 'fixed');
      },
      teardown: async () => {
        auto?.disconnect();
        await fixed?.close();
        await sliding?.close();
        await windowed?.close();
        await redis?.stop();
      },
      tasks: {
        'ioredis auto-pipelining (decision mix)': {
          opsPerCall: IN_FLIGHT,
          fn: async () => {
            const r = auto!;
            await Promise.all(
              Array.from({ length: IN_FLIGHT }, async () => {
                const [a, b] = decision();
                await Promise.all([
                  r.incrby(a!.key, 1),
                  r.expire(a!.key, 60),
                  r.incrby(b!.key, 1),
                  r.expire(b!.key, 3600),
                ]);
              }),
            );
          },
        },
        'RedisCounterStore fixed, window 0': storeTask(() => fixed),
        'RedisCounterStore sliding, window 0': storeTask(() => sliding),
        'RedisCounterStore fixed, window 200us': storeTask(() => windowed),
      },
    },
  ];
};

export default bench;
