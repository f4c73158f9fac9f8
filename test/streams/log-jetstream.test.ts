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
      // This node sends every append as its own message (several in flight per partition); the
      // peer merges queued appends into one message, as by default.
      open: () => JetStreamTopicLog.open(settings, { mergeBytes: 1 }),
      openPeer: () => JetStreamTopicLog.open(settings),
      destroy: () => cluster.stop(),
    };
  });
}
