// The TopicLog contract on NATS JetStream: a 3-node cluster of real nats-server processes with
// streams and buckets at 3 replicas; the peer is a second log on the same cluster, as a second
// Sluice node would be.
import { describe } from 'node:test';
import { JetStreamTopicLog } from '../../src/streams/log/jetstream.js';
import { natsAvailable, startNatsCluster } from '../helpers/nats.js';
import { runTopicLogContract } from './log-contract.js';
import { natsSettings } from './nats-settings.js';

if (!natsAvailable) {
  describe(
    'TopicLog contract: jetstream',
    { skip: 'nats-server is not installed (apt-get install nats-server)' },
    () => {},
  );
} else {
  runTopicLogContract('jetstream (3 nodes, R3)', async () => {
    const cluster = await startNatsCluster(3);
    const settings = natsSettings(cluster.urls);
    return {
      open: () => JetStreamTopicLog.open(settings),
      openPeer: () => JetStreamTopicLog.open(settings),
      destroy: () => cluster.stop(),
    };
  });
}
