// The group-state port's contract: every GroupStore gives the same answers to the same calls.
// Run against LMDB (group-store-lmdb.test.ts) and a 3-node JetStream cluster
// (group-store-jetstream.test.ts). A partition hand-over may complete later on a networked
// store, so claims are waited for (on state, with the hang deadline only).
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import type { GroupStore, InstanceRecord } from '../../src/streams/groups/store.js';
import { waitUntil } from '../helpers/wait.js';

export interface StoreFixture {
  /** Opens the store (again) on the same stored state, as node `nodeId`. */
  open(nodeId: string): Promise<GroupStore>;
  /** Closes a store opened by `open` (as a shutdown would). */
  close(store: GroupStore): Promise<void>;
  cleanup(): Promise<void>;
}

let counter = 0;
/** A group name of its own for each test, so tests sharing one backend do not meet. */
const uniqueGroup = (name: string): string => `${name}.${process.pid}.${++counter}`;

const instance = (
  group: string,
  id: string,
  node: string,
  extra: Partial<InstanceRecord> = {},
): InstanceRecord => ({
  group,
  id,
  seq: 1,
  createdAt: 1_700_000_000_000,
  config: { offsetReset: 'earliest', autoCommit: true, requestTimeoutMs: undefined },
  topics: ['orders'],
  positions: {},
  node,
  baseUri: `http://${node}.example/streams/consumers/${group}/instances/${id}`,
  ...extra,
});

/** Claims until the store says the instance holds the partition. */
export const holdPartition = (store: GroupStore, group: string, topic: string, p: number, id: string) =>
  waitUntil(`${id} to hold ${topic}/${p}`, () => store.claim(group, topic, p, id));

export function groupStoreContract(
  name: string,
  makeFixture: () => Promise<StoreFixture>,
  skip?: string | false,
): void {
  describe(`group store contract: ${name}`, { skip }, () => {
    let fixture: StoreFixture;
    let store: GroupStore;
    before(async () => {
      fixture = await makeFixture();
      store = await fixture.open('node-a');
    });
    after(async () => {
      if (store) await fixture.close(store);
      await fixture?.cleanup();
    });

    test('commits are read back, overwritten, kept per group, topic and partition, and survive a reopen', async () => {
      const g = uniqueGroup('offsets');
      assert.equal(store.committedOffset(g, 'orders', 0), undefined);
      store.commit(g, 'orders', 0, 5);
      store.commit(g, 'orders', 1, 7);
      store.commit(g, 'orders.v2', 0, 9);
      await store.flush();
      assert.equal(store.committedOffset(g, 'orders', 0), 5);
      store.commit(g, 'orders', 0, 3); // explicit commits may move back
      await store.flush();
      assert.equal(store.committedOffset(g, 'orders', 0), 3);
      assert.equal(store.committedOffset(g, 'orders', 1), 7);
      assert.equal(store.committedOffset(g, 'orders.v2', 0), 9);
      assert.equal(store.committedOffset(`${g}-other`, 'orders', 0), undefined);
      await fixture.close(store);
      store = await fixture.open('node-a');
      assert.equal(store.committedOffset(g, 'orders', 0), 3);
      assert.equal(store.committedOffset(g, 'orders.v2', 0), 9);
    });

    test("forgetTopic removes every group's offsets for that topic only, for good", async () => {
      const g1 = uniqueGroup('forget');
      const g2 = uniqueGroup('forget');
      const gone = `gone.${process.pid}.${++counter}`;
      const kept = `${gone}-kept`;
      for (const g of [g1, g2]) {
        store.commit(g, gone, 0, 4);
        store.commit(g, gone, 1, 6);
        store.commit(g, kept, 0, 8);
      }
      await store.flush();
      store.forgetTopic(gone);
      await store.flush();
      for (const g of [g1, g2]) {
        assert.equal(store.committedOffset(g, gone, 0), undefined);
        assert.equal(store.committedOffset(g, gone, 1), undefined);
        assert.equal(store.committedOffset(g, kept, 0), 8);
      }
      await fixture.close(store);
      store = await fixture.open('node-a');
      assert.equal(store.committedOffset(g1, gone, 0), undefined);
      assert.equal(store.committedOffset(g2, kept, 0), 8);
      // A topic created again under the name starts with nothing committed, and commits anew.
      store.commit(g1, gone, 0, 1);
      await store.flush();
      assert.equal(store.committedOffset(g1, gone, 0), 1);
    });

    test("a group's committed offsets are listed, and forgetGroup removes that group's only, for good", async () => {
      const g = uniqueGroup('whole');
      const other = uniqueGroup('whole');
      store.commit(g, 'orders', 0, 5);
      store.commit(g, 'orders', 1, 6);
      store.commit(g, 'orders.v2', 0, 2);
      store.commit(other, 'orders', 0, 9);
      await store.flush();
      const sorted = (list: readonly { topic: string; partition: number; offset: number }[]) =>
        [...list].sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);
      assert.deepEqual(sorted(store.groupOffsets(g)), [
        { topic: 'orders', partition: 0, offset: 5 },
        { topic: 'orders', partition: 1, offset: 6 },
        { topic: 'orders.v2', partition: 0, offset: 2 },
      ]);
      assert.ok(store.committedGroups().includes(g));
      assert.ok(store.committedGroups().includes(other));
      assert.deepEqual(store.groupOffsets(`${g}-none`), []);

      store.forgetGroup(g);
      await store.flush();
      assert.deepEqual(store.groupOffsets(g), []);
      assert.equal(store.committedOffset(g, 'orders', 0), undefined);
      assert.ok(!store.committedGroups().includes(g));
      assert.equal(store.committedOffset(other, 'orders', 0), 9);
      await fixture.close(store);
      store = await fixture.open('node-a');
      assert.deepEqual(store.groupOffsets(g), []);
      assert.deepEqual(store.groupOffsets(other), [{ topic: 'orders', partition: 0, offset: 9 }]);
      // A group created again under the name starts with nothing committed.
      store.commit(g, 'orders', 0, 1);
      await store.flush();
      assert.deepEqual(store.groupOffsets(g), [{ topic: 'orders', partition: 0, offset: 1 }]);
    });

    test('instances are members of their group, reload with their positions after a reopen, and leave when deleted', async () => {
      const g = uniqueGroup('members');
      store.saveInstance(instance(g, 'one', store.nodeId, { seq: 1 }));
      store.saveInstance(instance(g, 'two', store.nodeId, { seq: 2, topics: ['a', 'b'] }));
      store.saveInstance(instance(g, 'one', store.nodeId, { seq: 1, positions: { 'orders/0': 4 } }));
      await store.flush();
      const ids = (list: readonly { id: string }[]) => list.map((m) => m.id).sort();
      assert.deepEqual(ids(store.members(g)), ['one', 'two']);
      const two = store.members(g).find((m) => m.id === 'two')!;
      assert.deepEqual([two.seq, two.topics, two.node], [2, ['a', 'b'], store.nodeId]);
      assert.match(two.baseUri ?? '', /instances\/two$/);
      store.deleteInstance(g, 'two');
      await store.flush();
      assert.deepEqual(ids(store.members(g)), ['one']);
      assert.deepEqual(store.members(`${g}-other`), []);

      await fixture.close(store);
      store = await fixture.open('node-a');
      const loaded = store.loadInstances().filter((r) => r.group === g);
      assert.equal(loaded.length, 1);
      assert.deepEqual(loaded[0]!.positions, { 'orders/0': 4 });
      assert.deepEqual(loaded[0]!.config, instance(g, 'one', 'x').config);
      assert.deepEqual(ids(store.members(g)), ['one']);
      store.deleteInstance(g, 'one');
      await store.flush();
    });

    test('a deleted instance is never taken over again, even before its delete is stored', async () => {
      // An idle sweep deletes an instance; a request for it that arrives before the delete is
      // durable must get 404, not bring the expired instance back from the stored copy.
      const g = uniqueGroup('gone');
      store.saveInstance(instance(g, 'old', store.nodeId));
      await store.flush();
      store.deleteInstance(g, 'old');
      assert.equal(await store.adopt(g, 'old'), undefined);
      await store.flush();
      assert.equal(await store.adopt(g, 'old'), undefined);
      assert.deepEqual(store.members(g), []);
    });

    test('a partition has one holder: a live member keeps it until it lets go; a departed member loses it', async () => {
      const g = uniqueGroup('holders');
      store.saveInstance(instance(g, 'a', store.nodeId, { seq: 1 }));
      store.saveInstance(instance(g, 'b', store.nodeId, { seq: 2 }));
      await store.flush();
      await holdPartition(store, g, 'orders', 0, 'a');
      assert.equal(store.claim(g, 'orders', 0, 'b'), false, 'a live holder keeps its partition');
      assert.deepEqual(store.holders(g), [{ topic: 'orders', partition: 0, instance: 'a' }]);
      // Letting go of a partition one does not hold changes nothing.
      store.release(g, 'orders', 0, 'b');
      assert.equal(store.claim(g, 'orders', 0, 'a'), true);

      store.release(g, 'orders', 0, 'a');
      await holdPartition(store, g, 'orders', 0, 'b');
      assert.deepEqual(store.holders(g), [{ topic: 'orders', partition: 0, instance: 'b' }]);

      // b leaves without letting go (an expiry): a may take the partition.
      store.deleteInstance(g, 'b');
      await store.flush();
      await holdPartition(store, g, 'orders', 0, 'a');
      store.deleteInstance(g, 'a');
      await store.flush();
    });

    test('the next holder sees the offset its predecessor committed before letting go', async () => {
      const g = uniqueGroup('handover');
      store.saveInstance(instance(g, 'first', store.nodeId, { seq: 1 }));
      store.saveInstance(instance(g, 'second', store.nodeId, { seq: 2 }));
      await store.flush();
      await holdPartition(store, g, 'orders', 2, 'first');
      store.commit(g, 'orders', 2, 41);
      store.release(g, 'orders', 2, 'first'); // not awaited: the store orders the two
      await holdPartition(store, g, 'orders', 2, 'second');
      assert.equal(store.committedOffset(g, 'orders', 2), 41);
    });
  });
}
