import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { partitionForKey } from '../../src/streams/log/murmur2.js';
import { createTopic, fetchAll, newConsumer, produce, startHarness, type Harness } from './harness.js';

describe('produce', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness({ STREAMS_DEFAULT_PARTITIONS: '6' });
  });
  after(async () => {
    await h.close();
  });

  test('keyed records go to the Java client partition; the default partition count applies', async () => {
    await createTopic(h, 'keyed');
    const meta = await h.call('GET', '/streams/topics/keyed');
    assert.equal(meta.body.partitions_count, 6);
    const keys = ['abc', 'user-42', '"user-42"', 'foobar', '21', 'ключ'];
    const offsets = await produce(
      h,
      'keyed',
      keys.map((key) => ({ key, value: { key } })),
    );
    assert.deepEqual(
      offsets.map((o) => o.partition),
      keys.map((k) => partitionForKey(k, 6)),
    );
    // Published expectations (Kafka's partitioner with 6 partitions).
    assert.equal(offsets[0]!.partition, 3);
    assert.equal(offsets[1]!.partition, 4);
    assert.equal(offsets[2]!.partition, 1);
    // Same key again → same partition, next offset there.
    const again = await produce(h, 'keyed', [{ key: 'abc', value: {} }]);
    assert.deepEqual(again, [{ partition: 3, offset: 1 }]);
  });

  test('an explicit partition wins; unkeyed records of one request share a partition', async () => {
    await createTopic(h, 'spread', 3);
    const explicit = await produce(h, 'spread', [{ key: 'abc', value: {}, partition: 2 }]);
    assert.equal(explicit[0]!.partition, 2);
    const seen = new Set<number>();
    for (let i = 0; i < 3; i++) {
      const batch = await produce(h, 'spread', [{ value: { i } }, { value: { i } }, { value: { i } }]);
      assert.equal(new Set(batch.map((o) => o.partition)).size, 1, 'one request stays on one partition');
      assert.deepEqual(
        batch.map((o) => o.offset),
        [batch[0]!.offset, batch[0]!.offset + 1, batch[0]!.offset + 2],
      );
      seen.add(batch[0]!.partition);
    }
    assert.equal(seen.size, 3, 'successive unkeyed requests rotate over the partitions');
  });

  test('20 concurrent producers to one partition get contiguous unique offsets', async () => {
    await createTopic(h, 'contended', 1);
    const producers = Array.from({ length: 20 }, (_, p) =>
      (async () => {
        const mine: number[] = [];
        for (let round = 0; round < 5; round++) {
          const batch = await produce(
            h,
            'contended',
            Array.from({ length: 3 }, (_, i) => ({ value: { p, round, i } })),
          );
          mine.push(...batch.map((o) => o.offset));
        }
        return mine;
      })(),
    );
    const all = (await Promise.all(producers)).flat().sort((a, b) => a - b);
    assert.equal(all.length, 300);
    assert.deepEqual(
      all,
      Array.from({ length: 300 }, (_, i) => i),
    );
    // And what was stored at each offset is what its producer sent there.
    const path = await newConsumer(h, 'contended-check', ['contended'], { 'auto.offset.reset': 'earliest' });
    const records = await fetchAll(h, path, 300);
    assert.deepEqual(
      records.map((r) => r.offset),
      all,
    );
  });

  test('a batch with one invalid record stores nothing', async () => {
    await createTopic(h, 'atomic', 1);
    const bad = await h.call('POST', '/streams/topic/atomic', {
      body: { records: [{ value: { ok: 1 } }, { value: { ok: 2 } }, { value: 'not an object' }] },
    });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.error_code, 42203);
    assert.match(bad.body.message, /records\[2\]\.value/);
    const meta = await h.call('GET', '/streams/topics/atomic');
    assert.equal(meta.body.partitions[0].end_offset, 0);
    const good = await produce(h, 'atomic', [{ value: { ok: 1 } }]);
    assert.deepEqual(good, [{ partition: 0, offset: 0 }]);
  });

  test('a value is stored as the client wrote it, less the white space outside strings', async () => {
    await createTopic(h, 'verbatim', 1);
    const raw =
      '{ "records" : [\n  {"value" : { "n" : 1.0 , "big" : 12345678901234567890, "s" : "a  \\u0041 } ]" } },\n' +
      '  {"val\\u0075e": {"escaped": "name"}, "key": "k"} ] }';
    const reply = await h.call('POST', '/streams/topic/verbatim', {
      raw,
      type: 'application/vnd.streams.json.v2+json',
    });
    assert.equal(reply.status, 200, reply.text);
    const path = await newConsumer(h, 'verbatim-readers', ['verbatim'], { 'auto.offset.reset': 'earliest' });
    const fetched = await h.call('GET', `${path}/records?timeout=0`, {
      accept: 'application/vnd.streams.json.v2+json',
    });
    assert.equal(fetched.status, 200, fetched.text);
    // The answer splices each stored value in as it is: the digits and the escape as sent.
    assert.match(fetched.text, /"value":\{"n":1\.0,"big":12345678901234567890,"s":"a  \\u0041 \} \]"\}/);
    // A name written with escapes is read by JSON.parse, and its parsed value serialised.
    assert.match(fetched.text, /"value":\{"escaped":"name"\}/);
  });
});
