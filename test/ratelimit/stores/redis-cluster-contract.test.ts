// The store contract on a real three-master Redis cluster: every batch is split per node.
import { after, before } from 'node:test';
import { EnvReader } from '../../../src/core/settings/index.js';
import { createConfiguredStores } from '../../../src/ratelimit/store/factory.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';
import { redisAvailable, startCluster, type ClusterSetup } from '../../helpers/redis.js';
import { storeContract } from './contract.js';

let cluster: ClusterSetup | undefined;
before(async () => {
  if (redisAvailable) cluster = await startCluster();
});
after(async () => {
  await cluster?.stop();
});

storeContract(
  'redis cluster',
  async (algorithm) => {
    const settings = loadStoreSettings(
      new EnvReader({
        KVSTORE_TYPE: 'cluster',
        KVSTORE_URL: cluster!.nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
        KVSTORE_PIPELINE_WINDOW: '100us',
        KVSTORE_CLUSTER_PIPELINE_PARALLELISM: '0',
        KVSTORE_POOL_SIZE: '2',
        KVSTORE_FAILURE_MODE: 'closed',
      }),
    );
    const stores = (await createConfiguredStores(settings, { algorithm }))!;
    return { store: stores.store, close: () => stores.close() };
  },
  { exact: true, skip: redisAvailable ? false : 'redis-server is not installed' },
);
