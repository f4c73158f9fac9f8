import { after, before, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { createTopic, fetchAll, newConsumer, produce, startHarness, VND, type Harness } from './harness.js';
import { waitUntil } from '../helpers/wait.js';
import { connectWebSocket, type TestSocket } from './ws-client.js';
import { describeEachTransport } from '../helpers/transports.js';

describeEachTransport('push consume over WebSocket', (transport) => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ SLUICE_HTTP_TRANSPORT: transport });
  });
  after(async () => {
    await h.close();
  });

  const open = async (
    path: string,
    token: string | null = h.token,
  ): Promise<TestSocket | { status: number; body: string }> =>
    connectWebSocket(`${h.url}${path}/ws`, token === null ? {} : { authorization: `Bearer ${token}` });

  test('records are pushed only against credits, as they arrive', async () => {
    await createTopic(h, 'pushed', 1);
    await produce(
      h,
      'pushed',
      [1, 2, 3, 4, 5].map((n) => ({ value: { n } })),
    );
    const path = await newConsumer(h, 'pushers', ['pushed'], { 'auto.offset.reset': 'earliest' });
    const ws = await open(path);
    assert.ok('send' in ws, 'upgraded');
    try {
      ws.send(JSON.stringify({ credits: 2 }));
      const first = JSON.parse(await ws.next()) as {
        records: Array<{ value: { n: number }; offset: number }>;
      };
      assert.deepEqual(
        first.records.map((r) => r.value.n),
        [1, 2],
      );
      // One reader at a time: HTTP fetches and a second stream are refused while this one is open.
      const fetchWhileStreaming = await h.call('GET', `${path}/records?timeout=0`, { accept: VND });
      assert.equal(fetchWhileStreaming.status, 409);
      assert.equal(fetchWhileStreaming.body.error_code, 40903);
      const second = await open(path);
      assert.ok('status' in second && second.status === 409);
      // Out of credits: nothing more is sent until the client grants more.
      ws.send(JSON.stringify({ credits: 10 }));
      const received: number[] = [];
      while (received.length < 3) {
        const msg = JSON.parse(await ws.next()) as { records: Array<{ value: { n: number } }> };
        received.push(...msg.records.map((r) => r.value.n));
      }
      assert.deepEqual(received, [3, 4, 5]);
      // A record produced now is pushed without any request from the client.
      await produce(h, 'pushed', [{ value: { n: 6 } }]);
      const later = JSON.parse(await ws.next()) as { records: Array<{ value: { n: number } }> };
      assert.deepEqual(
        later.records.map((r) => r.value.n),
        [6],
      );
      // Bad messages get an error frame and the stream stays open.
      ws.send('not json');
      assert.equal((JSON.parse(await ws.next()) as { error_code: number }).error_code, 400);
      ws.send(JSON.stringify({ credits: -1 }));
      assert.equal((JSON.parse(await ws.next()) as { error_code: number }).error_code, 422);
      ws.send(JSON.stringify({ commit: true }));
      // The frame and the DELETE below travel on different connections, so the commit is
      // awaited as state before the instance goes: record 6 (offset 5) is committed as 6.
      await waitUntil('the pushed records to be committed', async () => {
        const committed = await h.call('GET', `${path}/offsets`);
        assert.equal(committed.status, 200, committed.text);
        return committed.body.offsets[0]?.offset === 6;
      });
      // Deleting the instance closes the stream with 4404.
      assert.equal((await h.call('DELETE', path)).status, 204);
      assert.equal((await ws.closed).code, 4404);
    } finally {
      ws.close();
    }
    // What was pushed was committed: a new instance of the group starts after record 6.
    await produce(h, 'pushed', [{ value: { n: 7 } }]);
    const next = await newConsumer(h, 'pushers', ['pushed'], { 'auto.offset.reset': 'earliest' });
    assert.deepEqual(
      (await fetchAll(h, next, 1)).map((r: { value: { n: number } }) => r.value.n),
      [7],
    );
  });

  test('the upgrade is refused without a token, for an unknown instance and before subscribing', async () => {
    await createTopic(h, 'pushed2', 1);
    const path = await newConsumer(h, 'pushers2', []);
    const noToken = await open(path, null);
    assert.ok('status' in noToken);
    assert.equal(noToken.status, 401);
    const unknown = await open('/streams/consumers/pushers2/instances/00000000-0000-4000-8000-000000000000');
    assert.ok('status' in unknown);
    assert.equal(unknown.status, 404);
    assert.equal(JSON.parse(unknown.body).error_code, 40403);
    const unsubscribed = await open(path);
    assert.ok('status' in unsubscribed);
    assert.equal(unsubscribed.status, 409);
  });
});
