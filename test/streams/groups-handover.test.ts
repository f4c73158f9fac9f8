// A member joining on another node in the middle of consumption (JetStream backend, two nodes in
// this process): with auto-commit, the partitions that move are committed by their old owner
// before it lets go, and the new owner starts after them — no record is read twice or skipped,
// although the two nodes learn of the join at different moments.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { natsAvailable, startNatsCluster, type NatsCluster } from '../helpers/nats.js';
import { waitUntil } from '../helpers/wait.js';
import { createTopic, newConsumer, produce, startHarness, VND, type Harness } from './harness.js';

describe('partition hand-over between nodes', { skip: !natsAvailable && 'nats-server not installed' }, () => {
  let cluster: NatsCluster;
  let one: Harness;
  let two: Harness;
  before(async () => {
    cluster = await startNatsCluster(3);
    const env = (node: string): Record<string, string> => ({
      STREAMS_BACKEND: 'jetstream',
      STREAMS_NATS_SERVERS: cluster.urls.join(','),
      STREAMS_REPLICAS: '3',
      STREAMS_NODE_ID: node,
      STREAMS_NODE_HEARTBEAT: '100ms',
      STREAMS_NODE_TIMEOUT: '5s',
    });
    one = await startHarness(env('one'));
    two = await startHarness(env('two'));
  });
  after(async () => {
    await one?.close();
    await two?.close();
    await cluster?.stop();
  });

  test('with auto-commit, a join mid-stream moves partitions without a duplicate or a gap', async () => {
    await createTopic(one, 'moving', 3);
    await waitUntil(
      'node two to know the topic',
      async () => (await two.call('GET', '/streams/topics/moving')).status === 200,
    );
    const sent = Array.from({ length: 120 }, (_, n) => ({ key: `k${n}`, value: { n } }));
    const acked = await produce(one, 'moving', sent);
    const first = await newConsumer(one, 'movers', ['moving'], { 'auto.offset.reset': 'earliest' });
    const read: Array<{ partition: number; offset: number; by: string }> = [];
    const fetchOnce = async (h: Harness, path: string, by: string, max?: number): Promise<number> => {
      const reply = await h.call('GET', `${path}/records?timeout=100${max ? `&max_bytes=${max}` : ''}`, {
        accept: VND,
      });
      assert.equal(reply.status, 200, reply.text);
      for (const r of reply.body) read.push({ partition: r.partition, offset: r.offset, by });
      return reply.body.length as number;
    };
    // The first member reads part of the topic (small fetches), then a second joins on node two.
    await waitUntil('the first member to read some records', async () => {
      await fetchOnce(one, first, 'first', 1);
      return read.length >= 10;
    });
    // The first member keeps reading without pause (one record per fetch) while the second
    // joins on node two, so it races the hand-over; then both read until the group has all 120.
    const done = (): boolean => read.length >= acked.length;
    const firstLoop = waitUntil(
      'the group to read every record',
      async () => {
        await fetchOnce(one, first, 'first', 1);
        return done();
      },
      { intervalMs: 0 },
    );
    const second = await newConsumer(two, 'movers', ['moving'], { 'auto.offset.reset': 'earliest' });
    await waitUntil(
      'the group to read every record',
      async () => {
        await fetchOnce(two, second, 'second');
        return done();
      },
      { intervalMs: 0 },
    );
    await firstLoop;
    for (const [h, path] of [
      [one, first],
      [two, second],
    ] as const) {
      const rest = await h.call('GET', `${path}/records?timeout=0`, { accept: VND });
      assert.deepEqual(rest.body, []);
    }
    const keys = read.map((r) => `${r.partition}/${r.offset}`);
    assert.equal(new Set(keys).size, keys.length, 'no record read twice');
    assert.deepEqual(
      [...keys].sort(),
      acked.map((o) => `${o.partition}/${o.offset}`).sort(),
      'every record read',
    );
    assert.ok(
      read.some((r) => r.by === 'second'),
      'the member on node two took partitions',
    );
  });
});
