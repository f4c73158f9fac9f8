// Confluent REST Proxy v2 compatibility, as a suite any backend can run: `confluentSuite(name,
// makeHarness)`. It replays the requests and answers of Confluent's documentation (the REST
// Proxy quick start and API reference: JSON and binary produce, consumer create / subscribe /
// fetch / commit / delete, topic and partition metadata, error cases) against the service.
// Topics are created first through /streams (Confluent's v2 has no topic creation).

import { strict as assert } from 'node:assert';
import { after, before, describe, test } from 'node:test';
import { partitionForKey } from '../../src/streams/log/murmur2.js';
import {
  AVRO_V2,
  BINARY_V2,
  JSON_V2,
  V2,
  b64,
  confluentView,
  createConsumer,
  expectError,
  fetchCount,
  getWithBody,
} from './confluent-helpers.js';
import { endpointTests } from './confluent-endpoints.js';
import { createTopic, type Harness, type Reply } from './harness.js';

export function confluentSuite(name: string, makeHarness: () => Promise<Harness>): void {
  describe(`Confluent REST Proxy v2 compatibility (${name})`, () => {
    let h: Harness;
    before(async () => {
      h = await makeHarness();
      await createTopic(h, 'jsontest');
      await createTopic(h, 'binarytest');
      await createTopic(h, 'test', 2);
      await createTopic(h, 'three', 3);
      await createTopic(h, 'six', 6);
    });
    after(async () => {
      await h.close();
    });
    endpointTests(() => h);

    test('topic and partition metadata', async () => {
      const list = await h.call('GET', '/topics', { accept: V2 });
      assert.equal(list.status, 200);
      assert.equal(list.headers.get('content-type'), V2);
      for (const t of ['jsontest', 'binarytest', 'test']) assert.ok(list.body.includes(t), list.text);

      const one = await h.call('GET', '/topics/test', { accept: V2 });
      assert.equal(one.status, 200);
      assert.deepEqual(one.body, {
        name: 'test',
        // The topic's retention configs (the service's defaults: Kafka's 7 days, no size bound).
        configs: { 'retention.ms': '604800000', 'retention.bytes': '-1' },
        partitions: [0, 1].map((partition) => ({
          partition,
          leader: 0,
          replicas: [{ broker: 0, leader: true, in_sync: true }],
        })),
      });
      const partitions = await h.call('GET', '/topics/test/partitions');
      assert.deepEqual(partitions.body, one.body.partitions);
      const p1 = await h.call('GET', '/topics/test/partitions/1');
      assert.deepEqual(p1.body, one.body.partitions[1]);
      const offsets = await h.call('GET', '/topics/test/partitions/1/offsets');
      assert.deepEqual(offsets.body, { beginning_offset: 0, end_offset: 0 });
      assert.deepEqual((await h.call('GET', '/brokers')).body, { brokers: [0] });

      expectError(await h.call('GET', '/topics/nope'), 404, 40401);
      expectError(await h.call('GET', '/topics/nope/partitions'), 404, 40401);
      expectError(await h.call('GET', '/topics/test/partitions/2'), 404, 40402);
      expectError(await h.call('GET', '/topics/test/partitions/x'), 404, 404);
      // "topic" shares its path with topic creation; it still describes as a topic.
      expectError(await h.call('GET', '/topics/topic'), 404, 40401);
    });

    test('JSON quick start: produce, named consumer, subscribe, fetch, delete', async () => {
      const produced = await h.call('POST', '/topics/jsontest', {
        raw: '{"records":[{"value":{"foo":"bar"}}]}',
        type: JSON_V2,
        accept: V2,
      });
      assert.equal(produced.status, 200, produced.text);
      assert.equal(produced.headers.get('content-type'), V2);
      assert.deepEqual(produced.body, {
        offsets: [{ partition: 0, offset: 0, error_code: null, error: null }],
        key_schema_id: null,
        value_schema_id: null,
      });

      const created = await h.call('POST', '/consumers/my_json_consumer', {
        raw: '{"name": "my_consumer_instance", "format": "json", "auto.offset.reset": "earliest"}',
        type: V2,
        accept: V2,
      });
      assert.equal(created.status, 200, created.text);
      assert.equal(created.body.instance_id, 'my_consumer_instance');
      const base = new URL(created.body.base_uri);
      assert.equal(base.pathname, '/consumers/my_json_consumer/instances/my_consumer_instance');
      assert.equal(base.origin, new URL(h.url).origin);

      const sub = await h.call('POST', `${base.pathname}/subscription`, {
        raw: '{"topics":["jsontest"]}',
        type: V2,
      });
      assert.equal(sub.status, 204, sub.text);
      assert.equal(sub.text, '');
      assert.deepEqual((await h.call('GET', `${base.pathname}/subscription`)).body, { topics: ['jsontest'] });

      const records = await fetchCount(h, base.pathname, 1, JSON_V2);
      assert.deepEqual(records.map(confluentView), [
        { topic: 'jsontest', key: null, value: { foo: 'bar' }, partition: 0, offset: 0 },
      ]);
      const again = await h.call('GET', `${base.pathname}/records?timeout=0`, { accept: JSON_V2 });
      assert.equal(again.headers.get('content-type'), JSON_V2);
      assert.deepEqual(again.body, []);

      // Same name again in the group: Confluent's 409 / 40902.
      expectError(
        await h.call('POST', '/consumers/my_json_consumer', {
          body: { name: 'my_consumer_instance', format: 'json' },
          type: V2,
        }),
        409,
        40902,
      );

      const deleted = await h.call('DELETE', base.pathname, { type: V2 });
      assert.equal(deleted.status, 204);
      expectError(await h.call('DELETE', base.pathname), 404, 40403);
      expectError(await h.call('GET', `${base.pathname}/records`, { accept: JSON_V2 }), 404, 40403);
      // After the delete the name is free again.
      assert.equal((await createConsumerStatus(h, 'my_json_consumer', 'my_consumer_instance')).status, 200);
    });

    test('binary quick start and the API reference produce example', async () => {
      const produced = await h.call('POST', '/topics/binarytest', {
        raw: '{"records":[{"value":"S2Fma2E="}]}',
        type: BINARY_V2,
        accept: V2,
      });
      assert.deepEqual(produced.body, {
        offsets: [{ partition: 0, offset: 0, error_code: null, error: null }],
        key_schema_id: null,
        value_schema_id: null,
      });
      const path = await createConsumer(h, 'my_binary_consumer', {
        name: 'my_consumer_instance',
        format: 'binary',
        'auto.offset.reset': 'earliest',
      });
      assert.equal(
        (await h.call('POST', `${path}/subscription`, { body: { topics: ['binarytest'] }, type: V2 })).status,
        204,
      );
      const records = await fetchCount(h, path, 1, BINARY_V2);
      assert.deepEqual(records.map(confluentView), [
        { topic: 'binarytest', key: null, value: 'S2Fma2E=', partition: 0, offset: 0 },
      ]);
      assert.equal(records[0].headers, undefined, 'the format marker is not shown to binary readers');

      // The reference's example: a keyed record, one with a partition, one with neither.
      const reference = await h.call('POST', '/topics/three', {
        body: {
          records: [
            { key: 'a2V5', value: 'Y29uZmx1ZW50' },
            { value: 'a2Fma2E=', partition: 1 },
            { value: 'bG9ncw==' },
          ],
        },
        type: BINARY_V2,
      });
      assert.equal(reference.status, 200, reference.text);
      const offsets = reference.body.offsets as any[];
      assert.equal(
        offsets[0].partition,
        partitionForKey('key', 3),
        'the key bytes are hashed as the Java client does',
      );
      assert.equal(offsets[1].partition, 1);
      for (const o of offsets) assert.deepEqual([o.error_code, o.error], [null, null]);

      const reader = await createConsumer(h, 'ref-reader', {
        format: 'binary',
        'auto.offset.reset': 'earliest',
      });
      await h.call('POST', `${reader}/subscription`, { body: { topics: ['three'] }, type: V2 });
      const read = await fetchCount(h, reader, 3, BINARY_V2);
      const byValue = new Map(read.map((r) => [r.value, r]));
      assert.equal(byValue.get('Y29uZmx1ZW50').key, 'a2V5');
      assert.equal(byValue.get('a2Fma2E=').partition, 1);
      assert.equal(byValue.get('bG9ncw==').key, null);
    });

    test('keys are placed by murmur2 of their bytes in both formats', async () => {
      // Test vector from the notes: the UTF-8 bytes of "user-42" go to partition 4 of 6.
      assert.equal(partitionForKey('user-42', 6), 4);
      const binary = await h.call('POST', '/topics/six', {
        body: { records: [{ key: b64('user-42'), value: b64('x') }] },
        type: BINARY_V2,
      });
      assert.equal(binary.body.offsets[0].partition, 4, binary.text);
      const json = await h.call('POST', '/topics/six', {
        body: { records: [{ key: 'user-42', value: 1 }] },
        type: JSON_V2,
      });
      assert.equal(json.body.offsets[0].partition, 4, json.text);
    });

    test('each reader sees the other format in its own', async () => {
      await createTopic(h, 'mixed');
      const json = await h.call('POST', '/topics/mixed', {
        body: { records: [{ key: 'k', value: { a: 1 } }, { value: 'text' }, { value: null }] },
        type: JSON_V2,
      });
      assert.equal(json.status, 200, json.text);
      const bin = await h.call('POST', '/topics/mixed', {
        body: { records: [{ key: b64('bk'), value: b64('\u0000\u00ffraw') }] },
        type: BINARY_V2,
      });
      assert.equal(bin.status, 200, bin.text);

      const binaryReader = await createConsumer(h, 'mixed-b', {
        format: 'binary',
        'auto.offset.reset': 'earliest',
      });
      await h.call('POST', `${binaryReader}/subscription`, { body: { topics: ['mixed'] }, type: V2 });
      assert.deepEqual(
        (await fetchCount(h, binaryReader, 4, BINARY_V2)).map((r) => [r.key, r.value]),
        [
          [b64('k'), b64('{"a":1}')],
          [null, b64('"text"')],
          [null, null],
          [b64('bk'), b64('\u0000\u00ffraw')],
        ],
      );

      // JSON readers (and /streams) see what is stored: binary records as base64 with the marker.
      const jsonReader = await createConsumer(h, 'mixed-j', {
        format: 'json',
        'auto.offset.reset': 'earliest',
      });
      await h.call('POST', `${jsonReader}/subscription`, { body: { topics: ['mixed'] }, type: V2 });
      const seen = await fetchCount(h, jsonReader, 4, JSON_V2);
      assert.deepEqual(
        seen.map((r) => [r.key, r.value]),
        [
          ['k', { a: 1 }],
          [null, 'text'],
          [null, null],
          [b64('bk'), b64('\u0000\u00ffraw')],
        ],
      );
      assert.deepEqual(seen[3].headers, [{ key: 'sluice.format', value: 'binary' }]);
      const direct = await h.call('GET', '/streams/topics/mixed/partitions/0/records?offset=3');
      assert.deepEqual(direct.body[0].headers, [{ key: 'sluice.format', value: 'binary' }]);
    });

    test('produce to one partition', async () => {
      const reply = await h.call('POST', '/topics/test/partitions/1', {
        body: { records: [{ key: 'a', value: { n: 1 } }, { value: { n: 2 } }] },
        type: JSON_V2,
      });
      assert.equal(reply.status, 200, reply.text);
      assert.deepEqual(
        reply.body.offsets.map((o: any) => o.partition),
        [1, 1],
      );
      expectError(
        await h.call('POST', '/topics/test/partitions/1', {
          body: { records: [{ value: 1, partition: 0 }] },
          type: JSON_V2,
        }),
        422,
        422,
        /partition 1/,
      );
      expectError(
        await h.call('POST', '/topics/test/partitions/7', {
          body: { records: [{ value: 1 }] },
          type: JSON_V2,
        }),
        404,
        40402,
      );
      expectError(
        await h.call('POST', '/topics/nope/partitions/0', {
          body: { records: [{ value: 1 }] },
          type: JSON_V2,
        }),
        404,
        40401,
      );
    });

    test('commit, committed offsets and seeks, as in the API reference', async () => {
      await createTopic(h, 'commits', 2);
      const records = [];
      for (let i = 0; i < 40; i++) records.push({ value: { i }, partition: i % 2 });
      assert.equal(
        (await h.call('POST', '/topics/commits', { body: { records }, type: JSON_V2 })).status,
        200,
      );
      const path = await createConsumer(h, 'testgroup', {
        name: 'my_consumer',
        format: 'json',
        'auto.offset.reset': 'earliest',
        'auto.commit.enable': 'false',
        'fetch.min.bytes': '-1',
        'consumer.request.timeout.ms': 500,
      });
      await h.call('POST', `${path}/subscription`, { body: { topics: ['commits'] }, type: V2 });
      const assigned = await h.call('GET', `${path}/assignments`);
      assert.deepEqual(assigned.body, {
        partitions: [
          { topic: 'commits', partition: 0 },
          { topic: 'commits', partition: 1 },
        ],
      });

      const commit = await h.call('POST', `${path}/offsets`, {
        body: {
          offsets: [
            { topic: 'commits', partition: 0, offset: 10 },
            { topic: 'commits', partition: 1, offset: 15 },
          ],
        },
        type: V2,
      });
      assert.equal(commit.status, 200, commit.text);
      assert.deepEqual(commit.body, []);
      // Confluent's GET …/offsets takes a body, which fetch() cannot send.
      const committed = await getWithBody(h, `${path}/offsets`, {
        partitions: [
          { topic: 'commits', partition: 0 },
          { topic: 'commits', partition: 1 },
        ],
      });
      assert.equal(committed.status, 200);
      assert.deepEqual(committed.body, {
        offsets: [
          { topic: 'commits', partition: 0, offset: 11, metadata: '' },
          { topic: 'commits', partition: 1, offset: 16, metadata: '' },
        ],
      });

      const seek = await h.call('POST', `${path}/positions`, {
        body: { offsets: [{ topic: 'commits', partition: 0, offset: 18 }] },
        type: V2,
      });
      assert.equal(seek.status, 204, seek.text);
      const end = await h.call('POST', `${path}/positions/end`, {
        body: { partitions: [{ topic: 'commits', partition: 1 }] },
        type: V2,
      });
      assert.equal(end.status, 204, end.text);
      const got = await fetchCount(h, path, 2, JSON_V2);
      assert.deepEqual(
        got.map((r) => [r.partition, r.offset]),
        [
          [0, 18],
          [0, 19],
        ],
      );
      const begin = await h.call('POST', `${path}/positions/beginning`, {
        body: { partitions: [{ topic: 'commits', partition: 1 }] },
        type: V2,
      });
      assert.equal(begin.status, 204);
      const positions = await h.call('GET', `${path}/positions`);
      assert.deepEqual(positions.body.offsets, [
        { topic: 'commits', partition: 0, offset: 20 },
        { topic: 'commits', partition: 1, offset: 0 },
      ]);
      expectError(
        await h.call('POST', `${path}/positions`, {
          body: { offsets: [{ topic: 'nope', partition: 0, offset: 0 }] },
          type: V2,
        }),
        404,
        40401,
      );

      // An empty commit body commits every position delivered so far.
      assert.equal((await h.call('POST', `${path}/offsets`, { type: V2 })).status, 200);
      const after = await h.call('GET', `${path}/offsets`);
      assert.deepEqual(
        after.body.offsets.map((o: any) => o.offset),
        [20, 0],
      );
    });

    test('manual assignment: exactly the given partitions, outside the group balancing', async () => {
      await createTopic(h, 'assigned', 3);
      const records = [0, 1, 2].map((p) => ({ value: { p }, partition: p }));
      assert.equal(
        (await h.call('POST', '/topics/assigned', { body: { records }, type: JSON_V2 })).status,
        200,
      );
      const subscriber = await createConsumer(h, 'manual', {
        format: 'json',
        'auto.offset.reset': 'earliest',
      });
      await h.call('POST', `${subscriber}/subscription`, { body: { topics: ['assigned'] }, type: V2 });
      const manual = await createConsumer(h, 'manual', { format: 'json', 'auto.offset.reset': 'earliest' });
      const assign = await h.call('POST', `${manual}/assignments`, {
        body: { partitions: [{ topic: 'assigned', partition: 2 }] },
        type: V2,
      });
      assert.equal(assign.status, 204, assign.text);
      assert.deepEqual((await h.call('GET', `${manual}/assignments`)).body, {
        partitions: [{ topic: 'assigned', partition: 2 }],
      });
      // The subscribed member keeps all three partitions: an assigned instance is not a group member.
      assert.equal((await h.call('GET', `${subscriber}/assignments`)).body.partitions.length, 3);
      const got = await fetchCount(h, manual, 1, JSON_V2);
      assert.deepEqual(got.map(confluentView), [
        { topic: 'assigned', key: null, value: { p: 2 }, partition: 2, offset: 0 },
      ]);
      expectError(
        await h.call('POST', `${manual}/subscription`, { body: { topics: ['assigned'] }, type: V2 }),
        409,
        40903,
        /manual assignment/,
      );
      expectError(
        await h.call('POST', `${subscriber}/assignments`, {
          body: { partitions: [{ topic: 'assigned', partition: 0 }] },
          type: V2,
        }),
        409,
        40903,
        /subscribed/,
      );
      expectError(
        await h.call('POST', `${manual}/assignments`, {
          body: { partitions: [{ topic: 'assigned', partition: 3 }] },
          type: V2,
        }),
        404,
        40402,
      );
      // An empty list ends the assignment; then the instance may subscribe.
      assert.equal(
        (await h.call('POST', `${manual}/assignments`, { body: { partitions: [] }, type: V2 })).status,
        204,
      );
      assert.deepEqual((await h.call('GET', `${manual}/assignments`)).body, { partitions: [] });
      expectError(await h.call('GET', `${manual}/records`, { accept: JSON_V2 }), 409, 40903);
    });

    test('an empty topic list unsubscribes, as in Confluent', async () => {
      const path = await createConsumer(h, 'unsub', { format: 'json' });
      await h.call('POST', `${path}/subscription`, { body: { topics: ['jsontest'] }, type: V2 });
      const empty = await h.call('POST', `${path}/subscription`, { body: { topics: [] }, type: V2 });
      assert.equal(empty.status, 204, empty.text);
      assert.deepEqual((await h.call('GET', `${path}/subscription`)).body, { topics: [] });
      expectError(await h.call('GET', `${path}/records`, { accept: JSON_V2 }), 409, 40903);
      await h.call('POST', `${path}/subscription`, { body: { topics: ['jsontest'] }, type: V2 });
      assert.equal((await h.call('DELETE', `${path}/subscription`)).status, 204);
      expectError(
        await h.call('POST', `${path}/subscription`, { body: { topics: ['nope'] }, type: V2 }),
        404,
        40401,
      );
      expectError(
        await h.call('POST', `${path}/subscription`, { body: { topic_pattern: 'json.*' }, type: V2 }),
        422,
        422,
        /topic_pattern/,
      );
    });

    test('content negotiation and embedded formats', async () => {
      // Confluent's default format is binary: asking a default instance for JSON is 40601.
      const path = await createConsumer(h, 'neg', { 'auto.offset.reset': 'earliest' });
      await h.call('POST', `${path}/subscription`, { body: { topics: ['binarytest'] }, type: V2 });
      expectError(
        await h.call('GET', `${path}/records`, { accept: JSON_V2 }),
        406,
        40601,
        /format \(binary\)/,
      );
      expectError(
        await h.call('GET', `${path}/records`, { accept: AVRO_V2 }),
        406,
        40601,
        /avro.*not supported/,
      );
      expectError(await h.call('GET', `${path}/records`, { accept: 'text/html' }), 406, 406);
      // A generic type or none gets the instance's format.
      const generic = await h.call('GET', `${path}/records?timeout=0`, { accept: V2 });
      assert.equal(generic.status, 200, generic.text);
      assert.equal(generic.headers.get('content-type'), BINARY_V2);

      expectError(
        await h.call('POST', '/topics/jsontest', {
          body: { value_schema: '"int"', records: [{ value: 1 }] },
          type: AVRO_V2,
        }),
        415,
        41501,
        /avro.*schema registry/,
      );
      expectError(
        await h.call('POST', '/topics/jsontest', { raw: '{"records":[]}', type: 'text/plain' }),
        415,
        415,
      );
      expectError(
        await h.call('POST', '/topics/jsontest', { raw: '{"records":[{"value":1}]}', type: V2 }),
        415,
        415,
      );
      expectError(
        await h.call('POST', '/consumers/neg', { body: { format: 'avro' }, type: V2 }),
        422,
        42204,
        /schema registry/,
      );
      expectError(await h.call('POST', '/consumers/neg', { body: { format: 'xml' }, type: V2 }), 422, 422);
      expectError(
        await h.call('POST', '/consumers/neg', { body: {}, type: V2, accept: 'text/html' }),
        406,
        406,
      );
      // Plain application/json is taken for produce (as json) and for consumer bodies.
      const plain = await h.call('POST', '/topics/jsontest', {
        body: { records: [{ value: { plain: true } }] },
        type: 'application/json',
      });
      assert.equal(plain.status, 200, plain.text);
      assert.equal(
        (await h.call('POST', '/consumers/neg', { body: { format: 'json' }, type: 'application/json' }))
          .status,
        200,
      );
    });

    test('produce errors', async () => {
      const post = (body: unknown, type = JSON_V2, topic = 'jsontest') =>
        h.call('POST', `/topics/${topic}`, { body, type });
      expectError(await post({ records: [{ value: 1 }] }, JSON_V2, 'nope'), 404, 40401);
      expectError(await post({ records: [] }), 422, 422, /at least one/);
      expectError(await post({ records: [{ value: 'not base64!' }] }, BINARY_V2), 400, 400, /base64/);
      expectError(await post({ records: [{ key: 12, value: 'AA==' }] }, BINARY_V2), 400, 400, /base64/);
      expectError(
        await post({ records: [{ value: 1, headers: [{ key: 'sluice.format', value: 'binary' }] }] }),
        422,
        422,
        /reserved/,
      );
      expectError(await h.call('POST', '/topics/jsontest', { raw: '{"records":', type: JSON_V2 }), 400, 400);
      // Confluent clients send null schema fields; those are fine.
      const nulls = await post({ key_schema: null, value_schema_id: null, records: [{ value: 2 }] });
      assert.equal(nulls.status, 200, nulls.text);
    });

    test('POST /topics/topic produces when the body carries Kafka records, creates otherwise', async () => {
      const created = await h.call('POST', '/topics/topic', {
        body: { topic_name: 'topic' },
        type: 'application/json',
      });
      assert.equal(created.status, 200, created.text);
      const produced = await h.call('POST', '/topics/topic', {
        body: { records: [{ value: b64('x') }] },
        type: BINARY_V2,
      });
      assert.equal(produced.status, 200, produced.text);
      assert.deepEqual(produced.body.offsets, [{ partition: 0, offset: 0, error_code: null, error: null }]);
      assert.equal((await h.call('GET', '/topics/topic')).body.name, 'topic');
    });

    test('name is honoured on the /streams path too', async () => {
      const created = await h.call('POST', '/streams/consumers/named', { body: { name: 'n1' } });
      assert.equal(created.status, 200, created.text);
      assert.equal(created.body.instance_id, 'n1');
      assert.ok(
        created.body.base_uri.endsWith('/streams/consumers/named/instances/n1'),
        created.body.base_uri,
      );
      expectError(await h.call('POST', '/streams/consumers/named', { body: { name: 'n1' } }), 409, 40902);
      // The same instance answers on both path families.
      assert.equal((await h.call('GET', '/consumers/named/instances/n1/subscription')).status, 200);
    });

    test('HTTP Basic with the API key as the password', async () => {
      const basic = (credentials: string) =>
        fetch(`${h.url}/topics`, { headers: { authorization: `Basic ${credentials}` } });
      const ok = await basic(b64(`anyone:${h.token}`));
      assert.equal(ok.status, 200);
      assert.ok(((await ok.json()) as string[]).includes('jsontest'));
      const wrong = await basic(b64('anyone:sk_nope_nope'));
      assert.equal(wrong.status, 401);
      assert.equal(((await wrong.json()) as any).error_code, 40101);
      const malformed = await basic('%%%');
      assert.equal(malformed.status, 401);
      assert.match(malformed.headers.get('www-authenticate') ?? '', /Basic realm=/);
      assert.equal(((await malformed.json()) as any).error_code, 40101);
    });
  });
}

function createConsumerStatus(h: Harness, group: string, name: string): Promise<Reply> {
  return h.call('POST', `/consumers/${group}`, { body: { name, format: 'json' }, type: V2 });
}
