import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { openKeyStore } from '../../src/core/auth/index.js';
import { createTopic, newConsumer, produce, startHarness, VND, type Harness, type Reply } from './harness.js';

function expectError(reply: Reply, status: number, code: number, message?: RegExp): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.body?.error_code, code, reply.text);
  assert.equal(typeof reply.body.message, 'string');
  if (message) assert.match(reply.body.message, message);
}

describe('bad input gets the right 4xx and the server keeps serving', () => {
  let h: Harness;
  let instance: string;
  before(async () => {
    h = await startHarness({
      STREAMS_MAX_RECORDS_PER_BATCH: '5',
      STREAMS_MAX_RECORD_BYTES: '200',
      STREAMS_MAX_BODY_BYTES: '4096',
      STREAMS_MAX_INSTANCES_PER_GROUP: '2',
      STREAMS_MAX_PARTITIONS: '8',
    });
    await createTopic(h, 'good', 2);
    instance = await newConsumer(h, 'g', ['good'], { 'auto.offset.reset': 'earliest' });
  });
  after(async () => {
    // Still serving after everything below.
    const offsets = await produce(h, 'good', [{ value: { still: 'alive' } }]);
    assert.equal(offsets.length, 1);
    await h.close();
  });

  test('authentication and scopes', async () => {
    expectError(await h.call('GET', '/streams/topics', { token: null }), 401, 40101);
    expectError(
      await h.call('POST', '/streams/topic/good', { token: 'nope', body: { records: [{ value: {} }] } }),
      401,
      40101,
    );
    const keys = openKeyStore(h.test.dataDir);
    try {
      const reader = await keys.create({ name: 'reader', scopes: ['streams:read'] });
      const read = await h.call('GET', '/streams/topics', { token: reader.token });
      assert.equal(read.status, 200, read.text);
      expectError(
        await h.call('POST', '/streams/topic/good', {
          token: reader.token,
          body: { records: [{ value: {} }] },
        }),
        403,
        40301,
      );
      expectError(
        await h.call('POST', '/streams/topics/topic', {
          token: reader.token,
          body: { topic_name: 'x' },
          type: 'application/json',
        }),
        403,
        40301,
      );
    } finally {
      await keys.close();
    }
  });

  test('topic creation', async () => {
    const post = (body: unknown, type = 'application/json') =>
      h.call('POST', '/streams/topics/topic', { body, type });
    expectError(await post({ topic_name: 'x' }, 'text/plain'), 415, 415);
    expectError(
      await h.call('POST', '/streams/topics/topic', { raw: '{"topic_name":', type: 'application/json' }),
      400,
      400,
    );
    expectError(await post({}), 400, 40002, /topic_name/);
    expectError(await post({ topic_name: 'has space' }), 400, 40002, /invalid topic name/);
    expectError(await post({ topic_name: 'good' }), 400, 40002, /exists/);
    expectError(await post({ topic_name: 'p0', partitions: 0 }), 400, 40002, /partitions/);
    expectError(await post({ topic_name: 'p9', partitions: 9 }), 400, 40002, /STREAMS_MAX_PARTITIONS/);
    expectError(await post({ topic_name: 'ps', partitions: '3' }), 400, 40002);
    expectError(await post({ topic_name: 'x', replication_factor: 3 }), 400, 40002, /unknown field/);
    expectError(await post([1, 2]), 400, 40002);
  });

  test('produce', async () => {
    const send = (body: unknown, topic = 'good') => h.call('POST', `/streams/topic/${topic}`, { body });
    expectError(await send({ records: [{ value: {} }] }, 'missing'), 404, 40401);
    expectError(
      await h.call('POST', '/streams/topic/good', { body: { records: [{ value: {} }] }, type: 'text/plain' }),
      415,
      415,
    );
    expectError(await h.call('POST', '/streams/topic/good', { raw: 'not json' }), 400, 400);
    expectError(await send({}), 422, 42203, /records/);
    expectError(await send({ records: [] }), 422, 42203, /at least one/);
    expectError(await send({ records: {} }), 422, 42203);
    expectError(await send({ records: [{ key: 'k' }] }), 422, 42203, /value/);
    expectError(await send({ records: [{ value: [1] }] }), 422, 42203, /array/);
    expectError(await send({ records: [{ value: null }] }), 422, 42203, /null/);
    expectError(await send({ records: [{ value: 5 }] }), 422, 42203);
    expectError(await send({ records: [{ key: 5, value: {} }] }), 422, 42203, /key/);
    expectError(await send({ records: [{ value: {}, partition: 2 }] }), 404, 40402);
    expectError(await send({ records: [{ value: {}, partition: -1 }] }), 422, 42203);
    expectError(await send({ records: [{ value: {}, timestamp: 'now' }] }), 422, 42203, /timestamp/);
    expectError(await send({ records: [{ value: {}, headers: { a: 'b' } }] }), 422, 42203, /headers/);
    expectError(
      await send({ records: [{ value: {}, headers: [{ key: 1, value: 'x' }] }] }),
      422,
      42203,
      /headers\[0\]/,
    );
    expectError(await send({ records: [{ value: {}, values: {} }] }), 422, 42203, /unknown field/);
    expectError(await send({ records: [{ value: {} }], value_schema: '{}' }), 422, 42203, /schema/);
    expectError(
      await send({ records: Array.from({ length: 6 }, () => ({ value: {} })) }),
      413,
      413,
      /STREAMS_MAX_RECORDS_PER_BATCH/,
    );
    expectError(
      await send({ records: [{ value: { big: 'x'.repeat(300) } }] }),
      413,
      413,
      /STREAMS_MAX_RECORD_BYTES/,
    );
    const huge = await h.call('POST', '/streams/topic/good', {
      raw: JSON.stringify({ records: [{ value: { big: 'x'.repeat(5000) } }] }),
    });
    assert.equal(huge.status, 413);
    const meta = await h.call('GET', '/streams/topics/good');
    assert.equal(
      meta.body.partitions[0].end_offset + meta.body.partitions[1].end_offset,
      0,
      'no rejected batch stored anything',
    );
  });

  test('a produce body sent to the consumer path explains the produce path', async () => {
    const reply = await h.call('POST', '/streams/consumers/g', {
      body: { records: [{ key: 'k', value: {} }] },
    });
    expectError(reply, 422, 42204, /\/streams\/topic\/<topic_name>/);
  });

  test('consumer creation', async () => {
    const create = (body: unknown, accept: string | null = VND, group = 'g2') =>
      h.call('POST', `/streams/consumers/${group}`, { body, accept });
    expectError(await create({}, 'text/html'), 406, 40601);
    expectError(await create({}, 'application/vnd.kafka.json.v2+json'), 406, 40601);
    expectError(await create({ 'auto.offset.reset': 'smallest' }), 422, 42204, /earliest, latest or none/);
    expectError(await create({ auto_offset_reset: 'earliest' }), 422, 42204, /unknown consumer setting/);
    expectError(await create({ name: 'not/ok' }), 422, 42204, /instance name/);
    expectError(await create({ name: 'a', id: 'b' }), 422, 42204, /name and id/);
    expectError(await create({ format: 'binary' }), 422, 42204, /Confluent paths/);
    expectError(await create({ format: 'avro' }), 422, 42204, /format/);
    expectError(await create({ 'auto.commit.enable': 'maybe' }), 422, 42204);
    expectError(await create({ 'consumer.request.timeout.ms': -1 }), 422, 42204);
    expectError(await create({}, VND, 'bad%20group'), 422, 42204, /group name/);
    expectError(await create('text'), 422, 42204);
    // No body and no Accept header is fine (RFC 9110: no Accept = anything).
    assert.equal((await h.call('POST', '/streams/consumers/g2')).status, 200);
    assert.equal((await create({})).status, 200);
    expectError(await create({}), 422, 422, /STREAMS_MAX_INSTANCES_PER_GROUP/);
  });

  test('fetch, subscription, offsets and positions', async () => {
    expectError(
      await h.call('GET', '/streams/consumers/g/instances/00000000-0000-4000-8000-000000000000/records', {
        accept: VND,
      }),
      404,
      40403,
    );
    // Names longer than any that can be created name no instance (and never reach the store's
    // bounded keys), on both path families.
    const long = 'x'.repeat(5000);
    expectError(await h.call('GET', `/streams/consumers/g/instances/${long}/positions`), 404, 40403);
    expectError(await h.call('GET', `/consumers/g/instances/${long}/positions`), 404, 40403);
    expectError(await h.call('GET', `/consumers/${long}/instances/i/positions`), 404, 40403);
    expectError(await h.call('GET', `${instance}/records`, { accept: 'text/plain' }), 406, 40601);
    expectError(
      await h.call('GET', `${instance}/records?timeout=soon`, { accept: VND }),
      422,
      422,
      /timeout/,
    );
    expectError(
      await h.call('GET', `${instance}/records?max_bytes=1e3`, { accept: VND }),
      422,
      422,
      /max_bytes/,
    );

    const fresh = await newConsumer(h, 'g3', []);
    expectError(await h.call('GET', `${fresh}/records`, { accept: VND }), 409, 40903, /not subscribed/);
    expectError(await h.call('POST', `${fresh}/subscription`, { body: { topics: ['missing'] } }), 404, 40401);
    expectError(await h.call('POST', `${fresh}/subscription`, { body: { topics: 'good' } }), 422, 422);
    expectError(
      await h.call('POST', `${fresh}/subscription`, { body: { topic_pattern: 'g.*' } }),
      422,
      422,
      /topic_pattern/,
    );
    expectError(await h.call('POST', `${fresh}/subscription`, { body: { topics: [''] } }), 422, 422);
    // The list is required and must not be empty; an empty one leaves the subscription as it was.
    expectError(
      await h.call('POST', `${fresh}/subscription`, { body: { topics: [] } }),
      422,
      422,
      /must not be empty/,
    );
    expectError(await h.call('POST', `${fresh}/subscription`, { body: {} }), 422, 422, /topics is required/);
    expectError(await h.call('POST', `${instance}/subscription`, { body: { topics: [] } }), 422, 422);
    assert.deepEqual((await h.call('GET', `${instance}/subscription`)).body, { topics: ['good'] });

    // Concurrent fetches on one instance queue: each gets different records, none twice.
    await produce(
      h,
      'good',
      Array.from({ length: 4 }, (_, n) => ({ value: { n }, partition: 0 })),
    );
    const both = await Promise.all([
      h.call('GET', `${instance}/records?timeout=200&max_bytes=1`, { accept: VND }),
      h.call('GET', `${instance}/records?timeout=200&max_bytes=1`, { accept: VND }),
    ]);
    for (const reply of both) assert.equal(reply.status, 200);
    const offsets = both.flatMap((r) =>
      r.body.map((rec: { partition: number; offset: number }) => `${rec.partition}/${rec.offset}`),
    );
    assert.equal(offsets.length, 2, 'max_bytes=1 still returns one record per fetch');
    assert.equal(new Set(offsets).size, 2);

    const commit = (body: unknown) => h.call('POST', `${instance}/offsets`, { body });
    expectError(await commit({ offsets: [{ topic: 'missing', partition: 0, offset: 0 }] }), 404, 40401);
    expectError(await commit({ offsets: [{ topic: 'good', partition: 5, offset: 0 }] }), 404, 40402);
    expectError(await commit({ offsets: [{ topic: 'good', partition: 0, offset: 99 }] }), 422, 422);
    expectError(await commit({ offsets: [{ topic: 'good', partition: 0 }] }), 422, 422);
    expectError(await commit({ partitions: [] }), 422, 422);

    const other = await newConsumer(h, 'g', ['good']);
    // With two members, each owns one partition; seeking the other's partition is a conflict.
    const mine = (await h.call('GET', `${other}/positions`)).body.offsets[0].partition as number;
    const theirs = 1 - mine;
    expectError(
      await h.call('POST', `${other}/positions`, {
        body: { offsets: [{ topic: 'good', partition: theirs, offset: 0 }] },
      }),
      409,
      40903,
      /not assigned/,
    );
    expectError(
      await h.call('POST', `${other}/positions`, {
        body: { offsets: [{ topic: 'good', partition: mine, offset: 50 }] },
      }),
      422,
      422,
      /out of range/,
    );
    expectError(await h.call('POST', `${other}/positions/beginning`, { body: { offsets: [] } }), 422, 422);
    assert.equal((await h.call('DELETE', other)).status, 204);
    expectError(await h.call('DELETE', other), 404, 40403);
  });

  test('unknown routes and methods', async () => {
    expectError(await h.call('GET', '/streams/nothing-here'), 404, 404);
    const wrong = await h.call('PUT', '/streams/topics/topic', { body: {} });
    expectError(wrong, 405, 405);
    assert.match(wrong.headers.get('allow') ?? '', /POST/);
  });
});
