// The helper for nats-server clusters in tests: a 3-node JetStream cluster keeps a replicated
// stream writable after one node is killed.
import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { natsAvailable, startNatsCluster, type NatsCluster } from '../helpers/nats.js';
import { waitUntil } from '../helpers/wait.js';

describe('nats test cluster', { skip: !natsAvailable && 'nats-server not installed' }, () => {
  let c: NatsCluster;
  before(async () => {
    c = await startNatsCluster(3);
  });
  after(async () => {
    await c?.stop();
  });
  it('stores a replicated stream and survives one node', async () => {
    const nc = await connect({ servers: c.urls });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'T', subjects: ['t'], num_replicas: 3 });
    const js = jetstream(nc);
    const ack = await js.publish('t', 'x');
    assert.equal(ack.seq, 1);
    await c.nodes[0]!.kill();
    await c.ready();
    // The client may still be reconnecting, or the stream electing a new leader: retry until the
    // publish is acknowledged; the message id makes a retried publish count once.
    const ack2 = await waitUntil('a publish after losing one node', async () => {
      try {
        return await js.publish('t', 'y', { msgID: 'second' });
      } catch {
        return undefined;
      }
    });
    assert.equal(ack2.seq, 2);
    await nc.close();
  });
});
