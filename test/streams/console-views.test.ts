// The read endpoints the console uses: consumer groups with members, assignments, committed
// offsets and lag; a partition read from a time; and a push stream authenticated the way a
// browser must (the key as a WebSocket subprotocol).
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { bearerFromSubprotocols } from '../../src/core/auth/credentials.js';
import { startHarness, type Harness } from './harness.js';
import { connectWebSocket } from './ws-client.js';
import { waitUntil } from '../helpers/wait.js';

describe('streams console views', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ STREAMS_DEFAULT_PARTITIONS: '2' });
    assert.equal(
      (
        await h.call('POST', '/streams/topics/topic', {
          body: { topic_name: 'orders', partitions: 2 },
          type: 'application/json',
        })
      ).status,
      200,
    );
  });
  after(async () => {
    await h.close();
  });

  const produce = async (n: number, partition: number, timestamp?: number) => {
    const records = Array.from({ length: n }, (_, i) => ({
      value: { i },
      partition,
      ...(timestamp ? { timestamp: timestamp + i } : {}),
    }));
    const res = await h.call('POST', '/streams/topic/orders', { body: { records } });
    assert.equal(res.status, 200, res.text);
  };

  it('lists groups and shows members, assignments, committed offsets and lag', async () => {
    assert.deepEqual((await h.call('GET', '/streams/consumer-groups')).body, { consumer_groups: [] });
    const created = await h.call('POST', '/streams/consumers/billing', {
      body: { 'auto.offset.reset': 'earliest', name: 'c1' },
    });
    assert.equal(created.status, 200, created.text);
    const instance = '/streams/consumers/billing/instances/c1';
    assert.equal(
      (await h.call('POST', `${instance}/subscription`, { body: { topics: ['orders'] } })).status,
      200,
    );
    await produce(3, 0);

    const list = await h.call('GET', '/streams/consumer-groups');
    assert.deepEqual(list.body, {
      consumer_groups: [{ group: 'billing', members: 1, topics: ['orders'], lag: null }],
    });
    let view = await h.call('GET', '/streams/consumer-groups/billing');
    assert.equal(view.status, 200);
    assert.equal(view.body.members[0].instance_id, 'c1');
    assert.deepEqual(view.body.members[0].subscription, ['orders']);
    assert.deepEqual(view.body.members[0].assignments.map((a: any) => `${a.topic}/${a.partition}`).sort(), [
      'orders/0',
      'orders/1',
    ]);
    const p0 = () => view.body.partitions.find((p: any) => p.partition === 0);
    assert.equal(p0().committed_offset, null, 'nothing committed yet');
    assert.equal(p0().lag, null);
    assert.equal(p0().end_offset, 3);
    assert.equal(p0().owner, 'c1');

    // Consume everything and commit: lag 0; three more records: lag 3.
    await waitUntil('the three records fetched', async () => {
      const got = await h.call('GET', `${instance}/records?timeout=100`);
      return Array.isArray(got.body) && got.body.length > 0;
    });
    assert.equal((await h.call('POST', `${instance}/offsets`)).status, 204);
    view = await h.call('GET', '/streams/consumer-groups/billing');
    assert.equal(p0().committed_offset, 3);
    assert.equal(p0().lag, 0);
    await produce(3, 0);
    view = await h.call('GET', '/streams/consumer-groups/billing');
    assert.equal(p0().lag, 3);
    // The list sums the lags of the partitions the group committed on.
    const listed = (await h.call('GET', '/streams/consumer-groups')).body.consumer_groups[0];
    assert.equal(
      listed.lag,
      view.body.partitions.reduce((n: number, p: any) => n + (p.lag ?? 0), 0),
    );
    assert.equal(listed.lag, 3);

    const missing = await h.call('GET', '/streams/consumer-groups/nobody');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error_code, 40403);
    assert.equal((await h.call('GET', '/streams/consumer-groups/billing', { token: null })).status, 401);
  });

  it('reads a partition from a time', async () => {
    const t0 = 1_900_000_000_000;
    await produce(5, 1, t0); // stamped t0 … t0+4
    const base = '/streams/topics/orders/partitions/1/records';
    const from = await h.call('GET', `${base}?timestamp=${t0 + 2}`);
    assert.equal(from.status, 200);
    assert.deepEqual(
      from.body.map((r: any) => r.timestamp),
      [t0 + 2, t0 + 3, t0 + 4],
    );
    const later = await h.call('GET', `${base}?timestamp=${t0 + 100}`);
    assert.deepEqual(later.body, []);
    const both = await h.call('GET', `${base}?timestamp=${t0}&offset=0`);
    assert.equal(both.status, 422);
  });

  it('takes the key of a push stream from the sluice.bearer subprotocol', async () => {
    assert.deepEqual(bearerFromSubprotocols('sluice, sluice.bearer.sk_abc'), {
      key: 'sk_abc',
      reply: 'sluice',
    });
    assert.equal(bearerFromSubprotocols('chat'), undefined);
    assert.equal(bearerFromSubprotocols(undefined), undefined);

    await h.call('POST', '/streams/consumers/live', { body: { name: 'w1' } });
    await h.call('POST', '/streams/consumers/live/instances/w1/subscription', {
      body: { topics: ['orders'] },
    });
    const url = `${h.url}/streams/consumers/live/instances/w1/ws`;
    const refused = await connectWebSocket(url, { 'sec-websocket-protocol': 'sluice, sluice.bearer.wrong' });
    assert.ok('status' in refused && refused.status === 401);
    const socket = await connectWebSocket(url, {
      'sec-websocket-protocol': `sluice, sluice.bearer.${h.token}`,
    });
    assert.ok(!('status' in socket), JSON.stringify(socket));
    socket.send(JSON.stringify({ credits: 10 }));
    await produce(1, 0);
    const message = JSON.parse(await socket.next()) as { records: unknown[] };
    assert.equal(message.records.length, 1);
    // Deleting the instance ends the stream from the server's side (4404).
    assert.equal((await h.call('DELETE', '/streams/consumers/live/instances/w1')).status, 204);
    assert.equal((await socket.closed).code, 4404);
    socket.close();
  });
});
