// The group-state contract on a 3-node JetStream cluster (bucket with 3 replicas).
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import { JetStreamGroupStore } from '../../src/streams/groups/jetstream-store.js';
import { memberKey } from '../../src/streams/groups/kv-keys.js';
import type { GroupStore, GroupStoreEvent, InstanceRecord } from '../../src/streams/groups/store.js';
import { natsAvailable, startNatsCluster, type NatsCluster } from '../helpers/nats.js';
import { waitUntil } from '../helpers/wait.js';
import { natsOptions } from '../../src/streams/nats/connection.js';
import { natsSettings } from './nats-settings.js';
import { groupStoreContract, holdPartition } from './group-store-contract.js';

groupStoreContract(
  'JetStream (3 nodes, R3)',
  async () => {
    const cluster = await startNatsCluster(3);
    const connections = new Map<GroupStore, NatsConnection>();
    return {
      async open(nodeId) {
        const nc = await connect(natsOptions(natsSettings(cluster.urls), nodeId));
        const store = await JetStreamGroupStore.open({
          nc,
          nodeId,
          replicas: 3,
          heartbeatMs: 1_000,
          nodeTimeoutMs: 10_000,
          bucket: 'contract_groups',
        });
        connections.set(store, nc);
        return store;
      },
      async close(store) {
        await store.close();
        await connections.get(store)?.close();
        connections.delete(store);
      },
      async cleanup() {
        await cluster.stop();
      },
    };
  },
  !natsAvailable && 'nats-server not installed',
);

describe(
  'JetStream group store across nodes',
  { skip: !natsAvailable && 'nats-server not installed' },
  () => {
    let cluster: NatsCluster;
    const opened: Array<{ store: JetStreamGroupStore; nc: NatsConnection }> = [];
    const openNode = async (nodeId: string, now?: () => number): Promise<JetStreamGroupStore> => {
      // The service's own connection options: reconnect for ever (the client's default gives up
      // after 10 attempts, which a restart of every server can outlast on a loaded machine).
      const nc = await connect(natsOptions(natsSettings(cluster.urls), nodeId));
      const store = await JetStreamGroupStore.open({
        nc,
        nodeId,
        replicas: 3,
        heartbeatMs: 50,
        nodeTimeoutMs: 60_000,
        bucket: 'nodes_groups',
        ...(now ? { now } : {}),
      });
      opened.push({ store, nc });
      return store;
    };
    const closeNode = async (store: JetStreamGroupStore): Promise<void> => {
      const at = opened.findIndex((o) => o.store === store);
      const [node] = opened.splice(at, 1);
      await store.close();
      await node!.nc.close();
    };
    before(async () => {
      cluster = await startNatsCluster(3);
    });
    after(async () => {
      for (const { store, nc } of opened.splice(0)) {
        await store.close();
        await nc.close();
      }
      await cluster?.stop();
    });

    const member = (group: string, id: string, node: string, seq: number): InstanceRecord => ({
      group,
      id,
      seq,
      createdAt: 0,
      config: { offsetReset: 'earliest', autoCommit: true, requestTimeoutMs: undefined },
      topics: ['t'],
      positions: {},
      node,
      baseUri: `http://${node}/x/${id}`,
    });

    test('members of two nodes form one group; a partition moves between nodes with its commit', async () => {
      const a = await openNode('a');
      const b = await openNode('b');
      const changes: GroupStoreEvent[] = [];
      b.onChange((e) => changes.push(e));
      a.saveInstance(member('shared', 'a1', 'a', 1));
      await a.flush();
      await waitUntil('b to see a1', () => b.members('shared').some((m) => m.id === 'a1'));
      assert.ok(
        changes.some((e) => e.type === 'changed' && e.group === 'shared'),
        'b was told',
      );
      assert.equal(b.members('shared')[0]!.baseUri, 'http://a/x/a1');
      b.saveInstance(member('shared', 'b1', 'b', 2));
      await b.flush();
      await waitUntil('a to see b1', () => a.members('shared').length === 2);

      await holdPartition(a, 'shared', 't', 0, 'a1');
      await waitUntil('b to see a1 hold t/0', () => b.holders('shared').some((h) => h.instance === 'a1'));
      assert.equal(b.claim('shared', 't', 0, 'b1'), false, 'a live member on another node keeps it');
      a.commit('shared', 't', 0, 17);
      a.release('shared', 't', 0, 'a1');
      await holdPartition(b, 'shared', 't', 0, 'b1');
      assert.equal(b.committedOffset('shared', 't', 0), 17, 'the commit made before letting go is seen');
      await closeNode(a);
      await closeNode(b);
    });

    test('a node whose heartbeat stops is expired by a survivor: its members leave, its partitions can be taken', async () => {
      let skew = 0;
      const a = await openNode('dying');
      const b = await openNode('survivor', () => performance.now() + skew);
      a.saveInstance(member('exp', 'd1', 'dying', 1));
      await a.flush();
      await holdPartition(a, 'exp', 't', 0, 'd1');
      b.saveInstance(member('exp', 's1', 'survivor', 2));
      await b.flush();
      await waitUntil('b to see d1 hold t/0', () => b.holders('exp').some((h) => h.instance === 'd1'));
      assert.equal(b.claim('exp', 't', 0, 's1'), false);
      await closeNode(a); // heartbeats stop
      // b's clock moves on at every look: a last heartbeat of a that was still on its way when a
      // closed (seen by b after the first jump) is outlived by the next one.
      await waitUntil('d1 to be expired', () => {
        skew += 120_000;
        return !b.members('exp').some((m) => m.id === 'd1');
      });
      await holdPartition(b, 'exp', 't', 0, 's1');
      await closeNode(b);
    });

    test('a node is told when another node removed one of its instances', async () => {
      const a = await openNode('told');
      const events: GroupStoreEvent[] = [];
      a.onChange((e) => events.push(e));
      a.saveInstance(member('rm', 'x1', 'told', 1));
      await a.flush();
      const nc = await connect({ servers: cluster.urls });
      try {
        const kv = await new Kvm(nc).open('nodes_groups');
        await kv.delete(memberKey('rm', 'x1'));
      } finally {
        await nc.close();
      }
      await waitUntil('the removal event', () => events.some((e) => e.type === 'removed' && e.id === 'x1'));
      assert.deepEqual(a.members('rm'), []);
      await closeNode(a);
    });

    test('after every NATS node restarts, the nodes go on following and writing the shared state', async () => {
      const a = await openNode('steady-a');
      const b = await openNode('steady-b');
      a.saveInstance(member('steady', 'a1', 'steady-a', 1));
      a.commit('steady', 't', 0, 3);
      await a.flush();
      await waitUntil('b to see a1', () => b.members('steady').length === 1);
      for (const n of cluster.nodes) await n.kill();
      for (const n of cluster.nodes) await n.restart();
      await cluster.ready();
      // Writes may fail while the cluster elects leaders; the test retries until one is durable.
      await waitUntil('b to store a member after the restart', async () => {
        b.saveInstance(member('steady', 'b1', 'steady-b', 2));
        b.commit('steady', 't', 1, 8);
        return b.flush().then(
          () => true,
          () => false,
        );
      });
      await waitUntil(
        'a to see b1 and its commit',
        () => a.members('steady').some((m) => m.id === 'b1') && a.committedOffset('steady', 't', 1) === 8,
      );
      assert.equal(a.committedOffset('steady', 't', 0), 3);
      await closeNode(a);
      await closeNode(b);
    });
  },
);
