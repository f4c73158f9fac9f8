import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { createTopic, fetchAll, newConsumer, produce, startHarness, VND, type Harness } from './harness.js';
import { connectWebSocket } from './ws-client.js';

const values = (records: Array<{ value: { n: number } }>): number[] =>
  records.map((r) => r.value.n).sort((a, b) => a - b);
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('state across a restart', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  test('topics, offsets, instances, subscriptions and positions survive; offsets continue', async () => {
    await createTopic(h, 'durable', 2);
    await produce(
      h,
      'durable',
      range(0, 10).map((n) => ({ key: `k${n}`, value: { n } })),
    );
    const instance = await newConsumer(h, 'survivors', ['durable'], { 'auto.offset.reset': 'earliest' });
    assert.deepEqual(values(await fetchAll(h, instance, 10)), range(0, 10));
    const endsBefore = (await h.call('GET', '/streams/topics/durable')).body.partitions;

    await h.restart();

    const meta = await h.call('GET', '/streams/topics/durable');
    assert.equal(meta.status, 200);
    assert.deepEqual(meta.body.partitions, endsBefore);
    // The same instance still exists, still subscribed, and continues after what it read.
    assert.deepEqual((await h.call('GET', `${instance}/subscription`)).body, { topics: ['durable'] });
    const more = await produce(
      h,
      'durable',
      range(10, 14).map((n) => ({ key: `k${n}`, value: { n } })),
    );
    for (const o of more) {
      const before = endsBefore.find((p: { partition: number }) => p.partition === o.partition);
      assert.ok(o.offset >= before.end_offset, 'offsets continue after the stored log, no reuse');
    }
    assert.deepEqual(values(await fetchAll(h, instance, 4)), range(10, 14));
  });

  test('a new instance of the group resumes from the committed offsets after a restart', async () => {
    await createTopic(h, 'handover', 1);
    await produce(
      h,
      'handover',
      range(0, 6).map((n) => ({ value: { n } })),
    );
    const first = await newConsumer(h, 'handover-group', ['handover'], { 'auto.offset.reset': 'earliest' });
    assert.deepEqual(values(await fetchAll(h, first, 6)), range(0, 6));
    assert.equal((await h.call('DELETE', first)).status, 204);
    await h.restart();
    await produce(
      h,
      'handover',
      range(6, 8).map((n) => ({ value: { n } })),
    );
    const second = await newConsumer(h, 'handover-group', ['handover'], { 'auto.offset.reset': 'earliest' });
    assert.deepEqual(values(await fetchAll(h, second, 2)), range(6, 8));
    const gone = await h.call('GET', `${first}/records`, { accept: VND });
    assert.equal(gone.status, 404);
  });

  test('a restart ends pending long polls and push streams instead of hanging', async () => {
    await createTopic(h, 'quiet', 1);
    const polling = await newConsumer(h, 'quiet-poll', ['quiet']);
    const pushing = await newConsumer(h, 'quiet-push', ['quiet']);
    const ws = await connectWebSocket(`${h.url}${pushing}/ws`, { authorization: `Bearer ${h.token}` });
    assert.ok('send' in ws);
    ws.send(JSON.stringify({ credits: 10 }));
    const pending = h
      .call('GET', `${polling}/records?timeout=30000`, { accept: VND })
      .catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await h.restart();
    const reply = await pending;
    if (!(reply instanceof Error)) {
      assert.equal((reply as { status: number }).status, 200);
      assert.deepEqual((reply as { body: unknown }).body, []);
    }
    const closed = await ws.closed;
    assert.ok([1001, 1006].includes(closed.code), `push stream closed (${closed.code})`);
    // And after the restart the instances are still there.
    assert.equal((await h.call('GET', `${polling}/subscription`)).status, 200);
  });
});
