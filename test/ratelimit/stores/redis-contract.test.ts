// The store contract on a real redis-server (single), built through the settings and the factory.
import { after, before } from 'node:test';
import { EnvReader } from '../../../src/core/settings/index.js';
import { createConfiguredStores } from '../../../src/ratelimit/store/factory.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';
import { redisAvailable, startRedis, type RedisProcess } from '../../helpers/redis.js';
import { storeContract } from './contract.js';

let redis: RedisProcess | undefined;
before(async () => {
  if (redisAvailable) redis = await startRedis();
});
after(async () => {
  await redis?.stop();
});

for (const window of ['0', '2ms']) {
  storeContract(
    `redis single (pipeline window ${window})`,
    async (algorithm) => {
      const settings = loadStoreSettings(
        new EnvReader({
          KVSTORE_URL: `127.0.0.1:${redis!.port}`,
          KVSTORE_FAILURE_MODE: 'closed',
          KVSTORE_POOL_SIZE: '3',
          KVSTORE_PIPELINE_WINDOW: window,
        }),
      );
      const stores = (await createConfiguredStores(settings, { algorithm }))!;
      return { store: stores.store, close: () => stores.close() };
    },
    { exact: true, skip: redisAvailable ? false : 'redis-server is not installed' },
  );
}
