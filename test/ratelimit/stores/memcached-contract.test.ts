// The store contract on a real memcached (BACKEND_TYPE=objcache): answers come from the read
// before the background increment, so only eventual counts are exact under concurrency.
import { after, before } from 'node:test';
import { EnvReader } from '../../../src/core/settings/index.js';
import { createConfiguredStores } from '../../../src/ratelimit/store/factory.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';
import { memcachedAvailable, startMemcached, type MemcachedProcess } from '../../helpers/memcached.js';
import { storeContract } from './contract.js';

let mc: MemcachedProcess | undefined;
before(async () => {
  if (memcachedAvailable) mc = await startMemcached();
});
after(async () => {
  await mc?.stop();
});

storeContract(
  'memcached',
  async (algorithm) => {
    const settings = loadStoreSettings(
      new EnvReader({
        BACKEND_TYPE: 'objcache',
        OBJCACHE_HOST_PORT: `127.0.0.1:${mc!.port}`,
        KVSTORE_FAILURE_MODE: 'closed',
      }),
    );
    const stores = (await createConfiguredStores(settings, { algorithm }))!;
    return { store: stores.store, settle: () => stores.objcache!.settled(), close: () => stores.close() };
  },
  { exact: false, skip: memcachedAvailable ? false : 'memcached is not installed' },
);
