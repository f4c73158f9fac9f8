import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { request } from 'node:http';
import { createTopic, fetchAll, newConsumer, produce, startHarness, VND, type Harness } from './harness.js';
import { waitUntil } from '../helpers/wait.js';

const values = (records: Array<{ value: { n: number } }>): number[] =>
  records.map((r) => r.value.n).sort((a, b) => a - b);
const range = (from: number, to: number): number[] => Array.from({ length: to - from }, (_, i) => from + i);

describe('consumer groups', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  test('two instances of a group split the partitions; nothing lost or duplicated', async () => {
    await createTopic(h, 'split', 4);
    const a = await newConsumer(h, 'splitters', ['split'], { 'auto.offset.reset': 'earliest' });
    const b = await newConsumer(h, 'splitters', ['split'], { 'auto.offset.reset': 'earliest' });
    const sent = range(0, 200);
    await produce(
      h,
      'split',
      sent.map((n) => ({ key: `k${n}`, value: { n } })),
    );
    // Both read until the group has delivered all 200, then neither has anything left.
    const fromA: any[] = [];
    const fromB: any[] = [];
    await waitUntil('the group to deliver every record', async () => {
      for (const [path, into] of [
        [a, fromA],
        [b, fromB],
      ] as const) {
        const reply = await h.call('GET', `${path}/records?timeout=0`, { accept: VND });
        assert.equal(reply.status, 200, reply.text);
        into.push(...reply.body);
      }
      return fromA.length + fromB.length >= sent.length;
    });
    for (const path of [a, b])
      assert.deepEqual((await h.call('GET', `${path}/records?timeout=0`, { accept: VND })).body, []);
    assert.ok(fromA.length > 0 && fromB.length > 0, 'both instances received records');
    const partitionsA = new Set(fromA.map((r) => r.partition));
    for (const r of fromB) assert.ok(!partitionsA.has(r.partition), 'a partition has one owner');
    assert.deepEqual(values([...fromA, ...fromB]), sent);
    // Within a partition, offsets come in increasing order.
    for (const list of [fromA, fromB]) {
      const last = new Map<number, number>();
      for (const r of list) {
        assert.ok((last.get(r.partition) ?? -1) < r.offset);
        last.set(r.partition, r.offset);
      }
    }
    // A separate group reads everything again.
    const other = await newConsumer(h, 'auditors', ['split'], { 'auto.offset.reset': 'earliest' });
    assert.deepEqual(values(await fetchAll(h, other, 200)), sent);
  });

  test('after an instance is deleted, a new instance resumes where the group left off', async () => {
    await createTopic(h, 'resume', 2);
    await produce(
      h,
      'resume',
      range(0, 10).map((n) => ({ key: `k${n}`, value: { n } })),
    );
    const first = await newConsumer(h, 'resumers', ['resume'], { 'auto.offset.reset': 'earliest' });
    const got = await fetchAll(h, first, 10);
    assert.deepEqual(values(got), range(0, 10));
    assert.equal((await h.call('DELETE', first)).status, 204);
    assert.equal((await h.call('GET', `${first}/records`, { accept: VND })).body.error_code, 40403);
    await produce(
      h,
      'resume',
      range(10, 15).map((n) => ({ key: `k${n}`, value: { n } })),
    );
    const second = await newConsumer(h, 'resumers', ['resume'], { 'auto.offset.reset': 'earliest' });
    assert.deepEqual(values(await fetchAll(h, second, 5)), range(10, 15));
  });

  test('earliest replays the log, latest only sees what comes after subscribing', async () => {
    await createTopic(h, 'resets', 1);
    await produce(h, 'resets', [{ value: { n: 1 } }, { value: { n: 2 } }]);
    const early = await newConsumer(h, 'early', ['resets'], { 'auto.offset.reset': 'earliest' });
    const late = await newConsumer(h, 'late', ['resets'], { 'auto.offset.reset': 'latest' });
    const byDefault = await newConsumer(h, 'default-reset', ['resets']);
    await produce(h, 'resets', [{ value: { n: 3 } }]);
    assert.deepEqual(values(await fetchAll(h, early, 3)), [1, 2, 3]);
    assert.deepEqual(values(await fetchAll(h, late, 1)), [3]);
    assert.deepEqual(values(await fetchAll(h, byDefault, 1)), [3]);
  });

  test('auto.offset.reset none: fetching without a committed offset is a 409 until a position is set', async () => {
    await createTopic(h, 'strict', 1);
    await produce(h, 'strict', [{ value: { n: 1 } }]);
    const path = await newConsumer(h, 'strict-group', ['strict'], { 'auto.offset.reset': 'none' });
    const refused = await h.call('GET', `${path}/records?timeout=0`, { accept: VND });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error_code, 40903);
    const seek = await h.call('POST', `${path}/positions/beginning`, {
      body: { partitions: [{ topic: 'strict', partition: 0 }] },
    });
    assert.equal(seek.status, 204);
    assert.deepEqual(values(await fetchAll(h, path, 1)), [1]);
  });

  test('long poll returns as soon as a record arrives', async () => {
    await createTopic(h, 'waiting', 1);
    const path = await newConsumer(h, 'waiters', ['waiting']);
    const pending = h.call('GET', `${path}/records?timeout=30000`, { accept: VND });
    let settled = false;
    void pending.then(() => (settled = true));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.equal(settled, false, 'nothing to read yet: the request is still waiting');
    await produce(h, 'waiting', [{ value: { n: 7 } }]);
    const reply = await pending;
    assert.equal(reply.status, 200);
    assert.deepEqual(values(reply.body), [7]);
  });

  test('explicit commits, committed offsets, positions and seeking', async () => {
    await createTopic(h, 'manual', 1);
    await produce(
      h,
      'manual',
      range(0, 5).map((n) => ({ value: { n } })),
    );
    const path = await newConsumer(h, 'manual-group', ['manual'], {
      'auto.offset.reset': 'earliest',
      'auto.commit.enable': 'false',
    });
    assert.equal((await fetchAll(h, path, 5)).length, 5);
    let committed = await h.call('GET', `${path}/offsets`);
    assert.deepEqual(committed.body.offsets, [{ topic: 'manual', partition: 0, offset: -1, metadata: '' }]);
    const commit = await h.call('POST', `${path}/offsets`, {
      body: { offsets: [{ topic: 'manual', partition: 0, offset: 2 }] },
    });
    assert.equal(commit.status, 204);
    committed = await h.call('GET', `${path}/offsets`);
    assert.equal(
      committed.body.offsets[0].offset,
      3,
      'the stored offset is the next to read: last consumed + 1',
    );
    // Confluent's GET-with-a-body form, naming the partitions (fetch() cannot send a GET body).
    const named = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(`${h.url}${path}/offsets`, {
        method: 'GET',
        headers: { authorization: `Bearer ${h.token}`, 'content-type': VND },
      });
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end(JSON.stringify({ partitions: [{ topic: 'manual', partition: 0 }] }));
    });
    assert.equal(named.status, 200);
    assert.deepEqual(JSON.parse(named.body), {
      offsets: [{ topic: 'manual', partition: 0, offset: 3, metadata: '' }],
    });
    const positions = await h.call('GET', `${path}/positions`);
    assert.deepEqual(positions.body.offsets, [{ topic: 'manual', partition: 0, offset: 5 }]);
    assert.equal(
      (
        await h.call('POST', `${path}/positions`, {
          body: { offsets: [{ topic: 'manual', partition: 0, offset: 1 }] },
        })
      ).status,
      204,
    );
    assert.deepEqual(values(await fetchAll(h, path, 4)), [1, 2, 3, 4]);
    assert.equal(
      (
        await h.call('POST', `${path}/positions/end`, {
          body: { partitions: [{ topic: 'manual', partition: 0 }] },
        })
      ).status,
      204,
    );
    const none = await h.call('GET', `${path}/records?timeout=0`, { accept: VND });
    assert.deepEqual(none.body, []);
    // Empty body: commit everything delivered.
    assert.equal((await h.call('POST', `${path}/offsets`)).status, 204);
    committed = await h.call('GET', `${path}/offsets`);
    assert.equal(committed.body.offsets[0].offset, 5);
    // Unsubscribe.
    assert.equal((await h.call('DELETE', `${path}/subscription`)).status, 204);
    assert.deepEqual((await h.call('GET', `${path}/subscription`)).body, { topics: [] });
  });

  test('an idle instance expires and its partitions go to the rest of the group', async () => {
    // Idle time is measured on a clock the test moves forward, so which instance is idle
    // "long enough" is decided by the test, not by how fast the machine answers b's polls.
    let skew = 0;
    const timeoutMs = 60_000;
    const short = await startHarness(
      { STREAMS_INSTANCE_TIMEOUT: `${timeoutMs}ms` },
      { now: () => Date.now() + skew },
    );
    try {
      await createTopic(short, 'expiring', 2);
      const a = await newConsumer(short, 'exp', ['expiring'], { 'auto.offset.reset': 'earliest' });
      const b = await newConsumer(short, 'exp', ['expiring'], { 'auto.offset.reset': 'earliest' });
      await produce(
        short,
        'expiring',
        range(0, 20).map((n) => ({ key: `k${n}`, value: { n } })),
      );
      // Half the timeout on, b polls (which keeps it alive) while a stays silent.
      skew += timeoutMs / 2;
      const all: Array<{ value: { n: number } }> = [];
      const poll = async (): Promise<void> => {
        const reply = await short.call('GET', `${b}/records?timeout=0`, { accept: VND });
        assert.equal(reply.status, 200, reply.text);
        all.push(...reply.body);
      };
      await poll();
      // Now a has been idle for longer than the timeout and b for half of it: the idle sweep
      // drops a, b then owns both partitions and gets every record. Asking about a would
      // renew it, so only after.
      skew += timeoutMs / 2 + 1;
      await waitUntil('b to get every record', async () => {
        await poll();
        return all.length >= 20;
      });
      assert.deepEqual(values(all), range(0, 20));
      const gone = await short.call('GET', `${a}/subscription`);
      assert.equal(gone.status, 404);
      assert.equal(gone.body.error_code, 40403);
    } finally {
      await short.close();
    }
  });
});
