// Consumer groups across Sluice nodes on one JetStream cluster, with real processes: a 3-node
// nats-server cluster and two Sluice streams nodes (test/streams/node-child.ts), each its own
// process with its own STREAMS_NODE_ID, port and STREAMS_PUBLIC_URL. The steps build on each
// other: (a) one instance per node splits a 3-partition topic while a third client produces,
// together reading every record once; (b) one node is SIGKILLed and the survivor takes over its
// partitions from the committed offsets; (c) everything (both Sluice nodes and all NATS nodes)
// is killed and restarted, and the group resumes at its committed offsets.
// Heartbeat and node timeout are set small (settings, not margins): the test waits for the
// states it needs — assignments, expiry — however long they take, up to the hang deadline.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/context.js';
import { natsAvailable, startNatsCluster, type NatsCluster } from '../helpers/nats.js';
import { waitUntil } from '../helpers/wait.js';
import {
  callNode,
  clusterToken,
  startableNode,
  VND,
  type CallOptions,
  type Reply,
  type SluiceNode,
} from './cluster-nodes.js';

const TOPIC = 'orders';

interface Rec {
  partition: number;
  offset: number;
  n: number;
}
const at = (r: { partition: number; offset: number }): string => `${r.partition}/${r.offset}`;

const token = clusterToken('multi-node');
const call = (base: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> =>
  callNode(token, base, method, path, options);
const sluiceNode = (name: string, port: number, nats: string[], dir: string): SluiceNode =>
  startableNode({ name, port, nats, dir, token });

interface Consumer {
  readonly node: SluiceNode;
  readonly path: string;
  readonly baseUri: string;
}

async function newConsumer(node: SluiceNode, group: string): Promise<Consumer> {
  const created = await call(node.url, 'POST', `/streams/consumers/${group}`, {
    body: { 'auto.offset.reset': 'earliest', 'auto.commit.enable': 'false' },
    accept: VND,
  });
  assert.equal(created.status, 200, created.text);
  const baseUri = created.body.base_uri as string;
  const path = new URL(baseUri).pathname;
  const sub = await call(node.url, 'POST', `${path}/subscription`, { body: { topics: [TOPIC] } });
  assert.equal(sub.status, 200, sub.text);
  return { node, path, baseUri };
}

/** One fetch; what it returned is committed at once (last offset per partition). */
async function consumeOnce(c: Consumer, into: Rec[]): Promise<Rec[]> {
  const reply = await call(c.node.url, 'GET', `${c.path}/records?timeout=200`, { accept: VND });
  assert.equal(reply.status, 200, reply.text);
  const got: Rec[] = (reply.body as Array<{ partition: number; offset: number; value: { n: number } }>).map(
    (r) => ({ partition: r.partition, offset: r.offset, n: r.value.n }),
  );
  into.push(...got);
  if (got.length > 0) {
    const last = new Map<number, number>();
    for (const r of got) last.set(r.partition, Math.max(last.get(r.partition) ?? -1, r.offset));
    const offsets = [...last].map(([partition, offset]) => ({ topic: TOPIC, partition, offset }));
    const commit = await call(c.node.url, 'POST', `${c.path}/offsets`, { body: { offsets } });
    assert.equal(commit.status, 204, commit.text);
  }
  return got;
}

async function ownedPartitions(c: Consumer): Promise<number[]> {
  const reply = await call(c.node.url, 'GET', `${c.path}/positions`);
  assert.equal(reply.status, 200, reply.text);
  return (reply.body.offsets as Array<{ partition: number }>).map((o) => o.partition).sort();
}

/** Waits until the consumers hold disjoint partition sets covering the topic's 3 partitions. */
async function waitForSplit(consumers: Consumer[]): Promise<number[][]> {
  return waitUntil('the group to hold every partition once, each member some', async () => {
    const owned = await Promise.all(consumers.map(ownedPartitions));
    const all = owned.flat().sort();
    // Every partition held once, and by a member each: right after a join the first member can
    // still hold all three for a moment, before the new member's arrival reaches it.
    return all.join() === '0,1,2' && owned.every((o) => o.length > 0) ? owned : false;
  });
}

async function committed(c: Consumer): Promise<Map<number, number>> {
  const reply = await call(c.node.url, 'GET', `${c.path}/offsets`);
  assert.equal(reply.status, 200, reply.text);
  return new Map(
    (reply.body.offsets as Array<{ partition: number; offset: number }>).map((o) => [o.partition, o.offset]),
  );
}

let produced = 0;
/** Values of batches answered 503: maybe stored (the ack may have been lost), never acknowledged. */
const unacknowledged = new Set<number>();

/**
 * Produces `count` new records. With `retry`, a 503 (JetStream still electing leaders after a
 * restart) is retried with new records, as a client would; the refused batch's values go to
 * `unacknowledged`, since a time-out cannot tell whether JetStream stored it.
 */
async function produce(node: SluiceNode, count: number, into: Rec[], retry = false): Promise<void> {
  const batch = () =>
    Array.from({ length: count }, () => {
      const n = produced++;
      return { key: `k${n}`, value: { n } };
    });
  let records = batch();
  const reply = await waitUntil(`a produce through ${node.name} to be acknowledged`, async () => {
    const r = await call(node.url, 'POST', `/streams/topic/${TOPIC}`, { body: { records } });
    if (!retry || r.status !== 503) return r;
    for (const rec of records) unacknowledged.add(rec.value.n);
    records = batch();
    return false;
  });
  assert.equal(reply.status, 200, reply.text);
  (reply.body.offsets as Array<{ partition: number; offset: number }>).forEach((o, i) =>
    into.push({ partition: o.partition, offset: o.offset, n: records[i]!.value.n }),
  );
}

/**
 * Every acknowledged record is read exactly once (by partition and offset). Records of
 * unacknowledged batches may be read too (once), nothing else.
 */
function assertExactlyOnce(reads: Rec[], expected: Rec[], what: string): void {
  const seen = new Set<string>();
  for (const r of reads) {
    assert.ok(!seen.has(at(r)), `${what}: ${at(r)} read twice`);
    seen.add(at(r));
  }
  const want = new Map(expected.map((r) => [at(r), r.n]));
  const missing = [...want.keys()].filter((k) => !seen.has(k));
  assert.deepEqual(missing, [], `${what}: records not read`);
  for (const r of reads) {
    if (want.has(at(r)))
      assert.equal(want.get(at(r)), r.n, `${what}: ${at(r)} holds what was produced there`);
    else assert.ok(unacknowledged.has(r.n), `${what}: ${at(r)} (n=${r.n}) was never produced`);
  }
}

/** The first offset read per partition. */
function firstOffsets(reads: Rec[]): Map<number, number> {
  const first = new Map<number, number>();
  for (const r of reads) if (!first.has(r.partition)) first.set(r.partition, r.offset);
  return first;
}

describe(
  'consumer groups across Sluice nodes (JetStream)',
  { skip: !natsAvailable && 'nats-server not installed' },
  () => {
    let cluster: NatsCluster;
    let root: string;
    let a: SluiceNode;
    let b: SluiceNode;
    let ia: Consumer;
    let ib: Consumer;
    const acked: Rec[] = [];
    const readsA: Rec[] = [];
    const readsB: Rec[] = [];

    before(async () => {
      cluster = await startNatsCluster(3);
      root = mkdtempSync(join(tmpdir(), 'sluice-multi-'));
      a = sluiceNode('node-a', await freePort(), cluster.urls, join(root, 'a'));
      b = sluiceNode('node-b', await freePort(), cluster.urls, join(root, 'b'));
      await Promise.all([a.start(), b.start()]);
    });
    after(async () => {
      await a?.kill();
      await b?.kill();
      await cluster?.stop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    test('(a) one instance per node: they split the partitions and read every record once while a third client produces', async () => {
      const created = await call(a.url, 'POST', '/streams/topics/topic', {
        body: { topic_name: TOPIC, partitions: 3 },
        type: 'application/json',
      });
      assert.equal(created.status, 200, created.text);
      await waitUntil(
        'node b to know the topic',
        async () => (await call(b.url, 'GET', `/streams/topics/${TOPIC}`)).status === 200,
      );

      ia = await newConsumer(a, 'billing');
      ib = await newConsumer(b, 'billing');
      assert.ok(ia.baseUri.startsWith(`${a.url}/`), 'base_uri points at the node that created it');
      assert.ok(ib.baseUri.startsWith(`${b.url}/`));
      const [ownedA, ownedB] = await waitForSplit([ia, ib]);
      assert.ok(ownedA!.length > 0 && ownedB!.length > 0, 'each instance holds a partition');

      const N = 300;
      let producing = true;
      const producer = (async () => {
        for (let batch = 0; batch < N / 10; batch++) await produce(batch % 2 === 0 ? a : b, 10, acked);
      })().finally(() => (producing = false));
      const done = (): boolean => !producing && readsA.length + readsB.length >= N;
      const loop = (c: Consumer, into: Rec[]) =>
        waitUntil(
          `the group to read ${N} records`,
          async () => {
            await consumeOnce(c, into);
            return done();
          },
          { intervalMs: 0 },
        );
      await Promise.all([producer, loop(ia, readsA), loop(ib, readsB)]);
      assert.equal(acked.length, N);
      assertExactlyOnce([...readsA, ...readsB], acked, 'two nodes');
      assert.ok(readsA.length > 0 && readsB.length > 0, 'both instances read records');
      const partitionsA = new Set(readsA.map((r) => r.partition));
      for (const r of readsB) assert.ok(!partitionsA.has(r.partition), 'a partition is read by one instance');
      for (const c of [ia, ib]) {
        const rest = await call(c.node.url, 'GET', `${c.path}/records?timeout=0`, { accept: VND });
        assert.deepEqual(rest.body, [], 'nothing left to read');
      }
    });

    test('(b) SIGKILL one node: the survivor takes over its partitions from the committed offsets', async () => {
      assert.ok(ia && ib, 'step (a) ran');
      const M = 150;
      const before = acked.length;
      for (let i = 0; i < M / 10; i++) await produce(b, 10, acked);
      const phase = acked.slice(before);

      // Node a reads a batch and commits only its first record per partition, then dies: the
      // rest of that batch was delivered but not committed, so it is read again after the kill.
      const partial = await waitUntil('node a to read a batch', async () => {
        const reply = await call(a.url, 'GET', `${ia.path}/records?timeout=200`, { accept: VND });
        assert.equal(reply.status, 200, reply.text);
        return (reply.body as Rec[]).length > 0
          ? (reply.body as Array<{ partition: number; offset: number }>)
          : false;
      });
      const firstPer = new Map<number, number>();
      for (const r of partial) if (!firstPer.has(r.partition)) firstPer.set(r.partition, r.offset);
      const commit = await call(a.url, 'POST', `${ia.path}/offsets`, {
        body: { offsets: [...firstPer].map(([partition, offset]) => ({ topic: TOPIC, partition, offset })) },
      });
      assert.equal(commit.status, 204, commit.text);
      const atKill = new Map([...(await committed(ia)), ...(await committed(ib))]);
      assert.equal(atKill.size, 3);

      await a.kill();
      await waitUntil(
        'node b to hold all three partitions',
        async () => (await ownedPartitions(ib)).join() === '0,1,2',
      );

      const after: Rec[] = [];
      const expected = acked.filter((r) => r.offset >= atKill.get(r.partition)!);
      await waitUntil(
        `node b to read the ${expected.length} records after the committed offsets`,
        async () => {
          await consumeOnce(ib, after);
          return after.length >= expected.length;
        },
        { intervalMs: 0 },
      );
      assertExactlyOnce(after, expected, 'after the kill');
      assert.deepEqual(
        [...firstOffsets(after)].sort(),
        [...atKill].filter(([p, o]) => acked.some((r) => r.partition === p && r.offset >= o)).sort(),
        'reads after the kill start exactly at the committed offsets',
      );
      // Every record of the step was read, by a before it died or by b.
      const all = new Set([...readsA, ...readsB, ...after, ...partial].map(at));
      for (const r of phase) assert.ok(all.has(at(r)), `${at(r)} was read`);
      readsB.push(...after);
      // The dead node's instance is gone from the group.
      const gone = await call(b.url, 'GET', `${ia.path}/positions`);
      assert.equal(gone.status, 404);
    });

    test('(c) restart everything: the group resumes at its committed offsets', async () => {
      assert.ok(ib, 'step (b) ran');
      const before = await committed(ib);
      assert.equal(before.size, 3);
      await b.kill();
      await a.kill();
      for (const n of cluster.nodes) await n.kill();
      for (const n of cluster.nodes) await n.restart();
      await cluster.ready();
      await Promise.all([a.start(), b.start()]);

      // b's instance was resumed by b (same STREAMS_NODE_ID); a new instance joins on a.
      await waitUntil(
        'node b to resume its instance',
        async () => (await call(b.url, 'GET', `${ib.path}/subscription`)).status === 200,
      );
      const fresh: Rec[] = [];
      const K = 90;
      for (let i = 0; i < K / 10; i++) await produce(i % 2 === 0 ? a : b, 10, fresh, true);
      const ia2 = await newConsumer(a, 'billing');
      await waitForSplit([ia2, ib]);
      const readsA2: Rec[] = [];
      const readsB2: Rec[] = [];
      const done = (): boolean => {
        const seen = new Set([...readsA2, ...readsB2].map(at));
        return fresh.every((r) => seen.has(at(r)));
      };
      const loop = (c: Consumer, into: Rec[]) =>
        waitUntil(
          `the group to read the ${K} records produced after the restart`,
          async () => {
            await consumeOnce(c, into);
            return done();
          },
          { intervalMs: 0 },
        );
      await Promise.all([loop(ia2, readsA2), loop(ib, readsB2)]);
      const reads = [...readsA2, ...readsB2];
      assertExactlyOnce(reads, fresh, 'after the restart');
      for (const [p, first] of firstOffsets(reads))
        assert.equal(first, before.get(p), `partition ${p} resumed at its committed offset`);
    });
  },
);
