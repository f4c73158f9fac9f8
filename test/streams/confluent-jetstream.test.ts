// The Confluent REST Proxy v2 suite on the JetStream backend (a 3-node cluster, R3): the same
// requests and answers as on LMDB.

import { describe } from 'node:test';
import { natsAvailable, startNatsCluster } from '../helpers/nats.js';
import { confluentSuite } from './confluent-suite.js';
import { startHarness } from './harness.js';

if (natsAvailable) {
  confluentSuite('jetstream', async () => {
    const cluster = await startNatsCluster(3);
    try {
      const h = await startHarness({
        STREAMS_BACKEND: 'jetstream',
        STREAMS_NATS_SERVERS: cluster.urls.join(','),
        STREAMS_REPLICAS: '3',
      });
      const close = h.close.bind(h);
      h.close = async () => {
        await close();
        await cluster.stop();
      };
      return h;
    } catch (err) {
      await cluster.stop();
      throw err;
    }
  });
} else {
  describe(
    'Confluent REST Proxy v2 compatibility (jetstream)',
    { skip: 'nats-server not installed' },
    () => {},
  );
}
