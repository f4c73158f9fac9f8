// Every Confluent REST Proxy v2 endpoint Sluice serves, one test each, checked against
// Confluent's own sources: status, error_code, media type, body shape and offset semantics.
// Each test names the files it follows, in github.com/confluentinc/kafka-rest (paths under
// kafka-rest/src/main/java/io/confluent/kafkarest/) and github.com/confluentinc/rest-utils
// (paths under core/src/main/java/io/confluent/rest/). Where Sluice differs on purpose the test
// says so and docs/streams.md ("Coming from Confluent REST Proxy") lists it.

import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { partitionForKey } from '../../src/streams/log/murmur2.js';
import {
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
import { createTopic, type Harness } from './harness.js';

const HTML = 'text/html';

export function endpointTests(harness: () => Harness): void {
  // resources/v2/TopicsResource.java list(): @Produces application/vnd.kafka.v2+json. An Accept
  // no method produces is Jersey's NotAcceptableException, which rest-utils'
  // exceptions/WebApplicationExceptionMapper.java answers with the status as error_code.
  test('endpoint GET /topics (TopicsResource.list)', async () => {
    const h = harness();
    await createTopic(h, 'ep-list');
    const list = await h.call('GET', '/topics', { accept: V2 });
    assert.equal(list.status, 200);
    assert.equal(list.headers.get('content-type'), V2);
    assert.ok(Array.isArray(list.body) && list.body.includes('ep-list'), list.text);
    expectError(await h.call('GET', '/topics', { accept: HTML }), 406, 406);
  });

  // resources/v2/TopicsResource.java getTopic(), entities/v2/GetTopicResponse.java;
  // Errors.java topicNotFoundException (404 / 40401).
  test('endpoint GET /topics/<topic> (TopicsResource.getTopic)', async () => {
    const h = harness();
    await createTopic(h, 'ep-topic', 2);
    const one = await h.call('GET', '/topics/ep-topic', { accept: V2 });
    assert.equal(one.status, 200);
    assert.equal(one.headers.get('content-type'), V2);
    assert.deepEqual(Object.keys(one.body), ['name', 'configs', 'partitions']);
    assert.equal(one.body.partitions.length, 2);
    const missing = await h.call('GET', '/topics/ep-nope');
    expectError(missing, 404, 40401);
    // Errors are written in the v2 type too (rest-utils' mappers answer in the negotiated type).
    assert.equal(missing.headers.get('content-type'), V2);
    expectError(await h.call('GET', '/topics/ep-topic', { accept: HTML }), 406, 406);
  });

  // resources/v2/PartitionsResource.java list(), getPartition(), getOffsets();
  // entities/v2/GetPartitionResponse.java, entities/v2/TopicPartitionOffsetResponse.java.
  // {partition} is a Java int: a segment that is none does not match (JAX-RS 404, error_code 404
  // through WebApplicationExceptionMapper); an int naming no partition is 404 / 40402.
  test('endpoint GET /topics/<topic>/partitions[/<p>[/offsets]] (PartitionsResource)', async () => {
    const h = harness();
    await createTopic(h, 'ep-parts', 2);
    const list = await h.call('GET', '/topics/ep-parts/partitions', { accept: V2 });
    assert.equal(list.headers.get('content-type'), V2);
    assert.deepEqual(
      list.body.map((p: any) => p.partition),
      [0, 1],
    );
    const one = await h.call('GET', '/topics/ep-parts/partitions/1');
    assert.deepEqual(one.body, {
      partition: 1,
      leader: 0,
      replicas: [{ broker: 0, leader: true, in_sync: true }],
    });
    await h.call('POST', '/topics/ep-parts/partitions/1', {
      body: { records: [{ value: 1 }, { value: 2 }] },
      type: JSON_V2,
    });
    const offsets = await h.call('GET', '/topics/ep-parts/partitions/1/offsets');
    assert.equal(offsets.headers.get('content-type'), V2);
    assert.deepEqual(offsets.body, { beginning_offset: 0, end_offset: 2 });
    expectError(await h.call('GET', '/topics/ep-parts/partitions/x'), 404, 404);
    expectError(await h.call('GET', '/topics/ep-parts/partitions/x/offsets'), 404, 404);
    expectError(await h.call('GET', '/topics/ep-parts/partitions/-1'), 404, 40402);
    expectError(await h.call('GET', '/topics/ep-parts/partitions/2/offsets'), 404, 40402);
    expectError(await h.call('GET', '/topics/ep-nope/partitions'), 404, 40401);
    expectError(await h.call('GET', '/topics/ep-parts/partitions', { accept: HTML }), 406, 406);
  });

  // resources/v2/BrokersResource.java, entities/v2/BrokerList.java.
  test('endpoint GET /brokers (BrokersResource.list)', async () => {
    const h = harness();
    const brokers = await h.call('GET', '/brokers', { accept: V2 });
    assert.equal(brokers.headers.get('content-type'), V2);
    assert.deepEqual(brokers.body, { brokers: [0] });
    expectError(await h.call('GET', '/brokers', { accept: HTML }), 406, 406);
  });

  // resources/v2/ProduceToTopicAction.java, resources/v2/AbstractProduceAction.java,
  // entities/v2/ProduceRequest.java (key and value are JsonNodes, @NotEmpty records),
  // entities/v2/ProduceResponse.java, entities/v2/PartitionOffset.java,
  // controllers/NoSchemaRecordSerializer.java (json: the JSON text; binary: base64 or
  // exceptions/BadRequestException.java through exceptions/v2/V2ExceptionMapper.java, 400 / 400);
  // rest-utils exceptions/ConstraintViolationExceptionMapper.java and
  // validation/JacksonMessageBodyProvider.java (constraint violations and unknown fields: 422 / 422).
  test('endpoint POST /topics/<topic> (ProduceToTopicAction)', async () => {
    const h = harness();
    await createTopic(h, 'ep-produce', 3);
    const post = (body: unknown, type = JSON_V2, accept?: string) =>
      h.call('POST', '/topics/ep-produce', { body, type, ...(accept ? { accept } : {}) });

    // json: the key is any JSON value; a non-string key is placed by the bytes of its JSON text,
    // which is what Kafka's JSON serialiser writes for it.
    const keys = [{ a: 1 }, 7, [1, 'x'], true, 'plain'];
    const produced = await post({ records: keys.map((key, i) => ({ key, value: { i } })) }, JSON_V2, V2);
    assert.equal(produced.status, 200, produced.text);
    assert.equal(produced.headers.get('content-type'), V2);
    assert.deepEqual(Object.keys(produced.body), ['offsets', 'key_schema_id', 'value_schema_id']);
    assert.deepEqual(
      produced.body.offsets.map((o: any) => o.partition),
      [
        partitionForKey('{"a":1}', 3),
        partitionForKey('7', 3),
        partitionForKey('[1,"x"]', 3),
        partitionForKey('true', 3),
        partitionForKey('plain', 3),
      ],
    );
    for (const o of produced.body.offsets) assert.deepEqual([o.error_code, o.error], [null, null]);

    const json = await createConsumer(h, 'ep-produce-j', { format: 'json', 'auto.offset.reset': 'earliest' });
    await h.call('POST', `${json}/subscription`, { body: { topics: ['ep-produce'] }, type: V2 });
    const read = await fetchCount(h, json, keys.length, JSON_V2);
    const byI = new Map(read.map((r) => [r.value.i as number, r]));
    keys.forEach((key, i) => {
      assert.deepEqual(byI.get(i).key, key, `key ${i} comes back as the same JSON`);
      assert.equal(byI.get(i).headers, undefined, 'the key marker is not shown to Confluent readers');
    });
    const bin = await createConsumer(h, 'ep-produce-b', {
      format: 'binary',
      'auto.offset.reset': 'earliest',
    });
    await h.call('POST', `${bin}/subscription`, { body: { topics: ['ep-produce'] }, type: V2 });
    const bytes = await fetchCount(h, bin, keys.length, BINARY_V2);
    assert.deepEqual(
      bytes.map((r) => r.key).sort(),
      [b64('{"a":1}'), b64('7'), b64('[1,"x"]'), b64('true'), b64('plain')].sort(),
    );

    // The schema fields are read and dropped by the json and binary formats.
    const schemas = await post({ key_schema: '"string"', value_schema_id: 3, records: [{ value: 1 }] });
    assert.equal(schemas.status, 200, schemas.text);

    expectError(await post({ records: [] }), 422, 422);
    expectError(await post({}), 422, 422);
    expectError(await post(null), 422, 422);
    expectError(await post({ records: [{ value: 1, colour: 'red' }] }), 422, 422, /colour/);
    expectError(
      await post({ records: [{ value: 'not base64!' }] }, BINARY_V2),
      400,
      400,
      /not a valid base64/,
    );
    expectError(
      await post({ records: [{ key: 12, value: 'AA==' }] }, BINARY_V2),
      400,
      400,
      /not a base64 string/,
    );
    // Guava's decoder, which kafka-rest uses, takes base64 without its padding.
    const unpadded = await post({ records: [{ key: 'YQ', value: 'YWI' }] }, BINARY_V2);
    assert.equal(unpadded.status, 200, unpadded.text);
    assert.equal(unpadded.body.offsets[0].partition, partitionForKey('a', 3));

    const before = await h.call('GET', '/topics/ep-produce/partitions/0/offsets');
    expectError(await post({ records: [{ value: 1, partition: 0 }] }, JSON_V2, HTML), 406, 406);
    const after = await h.call('GET', '/topics/ep-produce/partitions/0/offsets');
    assert.deepEqual(after.body, before.body, 'a refused Accept stores nothing');
    expectError(await post({ records: [{ value: 1 }] }, V2), 415, 415);
    expectError(
      await h.call('POST', '/topics/ep-nope', { body: { records: [{ value: 1 }] }, type: JSON_V2 }),
      404,
      40401,
    );
  });

  // resources/v2/ProduceToPartitionAction.java ({partition} a Java int, as for PartitionsResource).
  test('endpoint POST /topics/<topic>/partitions/<p> (ProduceToPartitionAction)', async () => {
    const h = harness();
    await createTopic(h, 'ep-produce-p', 2);
    const reply = await h.call('POST', '/topics/ep-produce-p/partitions/1', {
      body: { records: [{ key: { id: 1 }, value: 'a' }, { value: 'b' }] },
      type: JSON_V2,
      accept: V2,
    });
    assert.equal(reply.status, 200, reply.text);
    assert.equal(reply.headers.get('content-type'), V2);
    assert.deepEqual(reply.body.offsets, [
      { partition: 1, offset: 0, error_code: null, error: null },
      { partition: 1, offset: 1, error_code: null, error: null },
    ]);
    const body = { records: [{ value: 1 }] };
    expectError(await h.call('POST', '/topics/ep-produce-p/partitions/x', { body, type: JSON_V2 }), 404, 404);
    expectError(
      await h.call('POST', '/topics/ep-produce-p/partitions/2', { body, type: JSON_V2 }),
      404,
      40402,
    );
    expectError(
      await h.call('POST', '/topics/ep-produce-p/partitions/0', { body, type: JSON_V2, accept: HTML }),
      406,
      406,
    );
  });

  // resources/v2/ConsumersResource.java createGroup(), entities/v2/CreateConsumerInstanceRequest.java
  // (format in any case, default binary; an unknown one "Invalid format type." 422 / 422;
  // fetch.min.bytes below -1 → Errors.invalidConsumerConfigConstraintException, 422 / 40001),
  // entities/v2/CreateConsumerInstanceResponse.java, v2/KafkaConsumerManager.java createConsumer()
  // (a used name → Errors.consumerAlreadyExistsException 409 / 40902; a setting Kafka refuses →
  // Errors.invalidConsumerConfigException 422 / 42204).
  test('endpoint POST /consumers/<group> (ConsumersResource.createGroup)', async () => {
    const h = harness();
    const bare = await h.call('POST', '/consumers/ep-create', { type: V2, accept: V2 });
    assert.equal(bare.status, 200, bare.text);
    assert.equal(bare.headers.get('content-type'), V2);
    assert.deepEqual(Object.keys(bare.body), ['instance_id', 'base_uri']);
    const nullBody = await h.call('POST', '/consumers/ep-create', { raw: 'null', type: V2 });
    assert.equal(nullBody.status, 200, nullBody.text);
    const upper = await h.call('POST', '/consumers/ep-create', {
      body: { name: 'up', format: 'JSON' },
      type: V2,
    });
    assert.equal(upper.status, 200, upper.text);
    const json = await h.call('GET', '/consumers/ep-create/instances/up/records?timeout=0', {
      accept: JSON_V2,
    });
    assert.equal(json.status, 409, 'a json instance (not subscribed yet) takes the json Accept');
    expectError(
      await h.call('POST', '/consumers/ep-create', { body: { format: 'xml' }, type: V2 }),
      422,
      422,
    );
    expectError(
      await h.call('POST', '/consumers/ep-create', { body: { colour: 'red' }, type: V2 }),
      422,
      422,
    );
    expectError(
      await h.call('POST', '/consumers/ep-create', { body: { 'fetch.min.bytes': -5 }, type: V2 }),
      422,
      40001,
    );
    expectError(
      await h.call('POST', '/consumers/ep-create', { body: { 'auto.offset.reset': 'bogus' }, type: V2 }),
      422,
      42204,
    );
    expectError(await h.call('POST', '/consumers/ep-create', { body: { name: 'up' }, type: V2 }), 409, 40902);
    expectError(await h.call('POST', '/consumers/ep-create', { type: V2, accept: HTML }), 406, 406);
  });

  // resources/v2/ConsumersResource.java deleteGroup() (void: 204), Errors.java
  // consumerInstanceNotFoundException (404 / 40403).
  test('endpoint DELETE /consumers/<group>/instances/<instance> (ConsumersResource.deleteGroup)', async () => {
    const h = harness();
    const path = await createConsumer(h, 'ep-delete', { format: 'json' });
    const deleted = await h.call('DELETE', path);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.text, '');
    expectError(await h.call('DELETE', path), 404, 40403);
  });

  // resources/v2/ConsumersResource.java subscribe(), subscription(), unsubscribe();
  // v2/KafkaConsumerState.java subscribe() (neither topics nor topic_pattern changes nothing),
  // entities/v2/ConsumerSubscriptionRecord.java, entities/v2/ConsumerSubscriptionResponse.java.
  test('endpoint POST, GET, DELETE …/subscription (ConsumersResource.subscribe)', async () => {
    const h = harness();
    await createTopic(h, 'ep-sub');
    const path = await createConsumer(h, 'ep-sub', { format: 'json' });
    const sub = await h.call('POST', `${path}/subscription`, { body: { topics: ['ep-sub'] }, type: V2 });
    assert.equal(sub.status, 204, sub.text);
    assert.equal(sub.text, '');
    const none = await h.call('POST', `${path}/subscription`, { body: {}, type: V2 });
    assert.equal(none.status, 204, none.text);
    const got = await h.call('GET', `${path}/subscription`, { accept: V2 });
    assert.equal(got.headers.get('content-type'), V2);
    assert.deepEqual(got.body, { topics: ['ep-sub'] });
    const unsub = await h.call('DELETE', `${path}/subscription`);
    assert.equal(unsub.status, 204);
    assert.deepEqual((await h.call('GET', `${path}/subscription`)).body, { topics: [] });
    expectError(
      await h.call('POST', `${path}/subscription`, { body: { topics: 'ep-sub' }, type: V2 }),
      422,
      422,
    );
    expectError(await h.call('GET', `${path}/subscription`, { accept: HTML }), 406, 406);
    expectError(await h.call('GET', '/consumers/ep-sub/instances/nobody/subscription'), 404, 40403);
  });

  // resources/v2/ConsumersResource.java readRecordBinary() / readRecordJson() (chosen by Accept;
  // an instance of the other format → Errors.consumerFormatMismatch 406 / 40601; an Accept no
  // method produces → 406 / 406), entities/v2/BinaryConsumerRecord.java, JsonConsumerRecord.java.
  test('endpoint GET …/records (ConsumersResource.readRecord*)', async () => {
    const h = harness();
    await createTopic(h, 'ep-records');
    await h.call('POST', '/topics/ep-records', {
      body: { records: [{ key: b64('k'), value: b64('v') }] },
      type: BINARY_V2,
    });
    const path = await createConsumer(h, 'ep-records', { 'auto.offset.reset': 'earliest' });
    await h.call('POST', `${path}/subscription`, { body: { topics: ['ep-records'] }, type: V2 });
    const got = await fetchCount(h, path, 1, BINARY_V2);
    assert.deepEqual(got.map(confluentView), [
      { topic: 'ep-records', key: b64('k'), value: b64('v'), partition: 0, offset: 0 },
    ]);
    const empty = await h.call('GET', `${path}/records?timeout=0`, { accept: BINARY_V2 });
    assert.equal(empty.headers.get('content-type'), BINARY_V2);
    assert.deepEqual(empty.body, []);
    // ConsumersResource.readRecords(): max_bytes <= 0 is no limit of the request's own;
    // KafkaConsumerReadTask: a timeout <= 0 is the instance's default wait. Both default to -1.
    for (const query of ['timeout=-1&max_bytes=-1', 'timeout=-1&max_bytes=0']) {
      await h.call('POST', '/topics/ep-records', {
        body: { records: [{ value: b64('a') }, { value: b64('b') }] },
        type: BINARY_V2,
      });
      const both = await h.call('GET', `${path}/records?${query}`, { accept: BINARY_V2 });
      assert.equal(both.status, 200, both.text);
      assert.deepEqual(both.body.map((r: { value: string }) => r.value).sort(), [b64('a'), b64('b')], query);
    }
    expectError(await h.call('GET', `${path}/records`, { accept: JSON_V2 }), 406, 40601);
    expectError(await h.call('GET', `${path}/records`, { accept: HTML }), 406, 406);
    const nobody = await h.call('GET', '/consumers/ep-records/instances/nobody/records', {
      accept: BINARY_V2,
    });
    expectError(nobody, 404, 40403);
    assert.equal(nobody.headers.get('content-type'), V2);
  });

  // The JSON-key marker is only written by the Confluent produce; a /streams producer may name it
  // with a key that is no JSON, and a json reader still gets valid JSON (the key as a string).
  test('a /streams record naming the JSON-key marker reads as valid JSON', async () => {
    const h = harness();
    await createTopic(h, 'ep-marker');
    const produced = await h.call('POST', '/streams/topic/ep-marker', {
      body: {
        records: [
          { key: 'not json', value: { a: 1 }, headers: [{ key: 'sluice.key', value: 'json' }] },
          { key: '[2]', value: { a: 2 }, headers: [{ key: 'sluice.key', value: 'json' }] },
        ],
      },
    });
    assert.equal(produced.status, 200, produced.text);
    const path = await createConsumer(h, 'ep-marker', { format: 'json', 'auto.offset.reset': 'earliest' });
    await h.call('POST', `${path}/subscription`, { body: { topics: ['ep-marker'] }, type: V2 });
    const read = await fetchCount(h, path, 2, JSON_V2);
    assert.deepEqual(
      read.map((r) => r.key),
      ['not json', [2]],
    );
    assert.deepEqual(read[0].headers, [{ key: 'sluice.key', value: 'json' }]);
  });

  // resources/v2/ConsumersResource.java commitOffsets() answers CommitOffsetsResponse.fromOffsets
  // (entities/v2/CommitOffsetsResponse.java, a @JsonValue list), which v2/KafkaConsumerState.java
  // commitOffsets() leaves empty: 200 with `[]`. A committed offset is the given one + 1
  // (entities/v2/TopicPartitionOffsetMetadata.java; KafkaConsumerState.commitOffsets).
  test('endpoint POST …/offsets (ConsumersResource.commitOffsets)', async () => {
    const h = harness();
    await createTopic(h, 'ep-commit', 2);
    const records = Array.from({ length: 5 }, (_, i) => ({ value: { i }, partition: 1 }));
    await h.call('POST', '/topics/ep-commit', { body: { records }, type: JSON_V2 });
    const path = await createConsumer(h, 'ep-commit', { format: 'json', 'auto.commit.enable': 'false' });
    await h.call('POST', `${path}/subscription`, { body: { topics: ['ep-commit'] }, type: V2 });
    const commit = await h.call('POST', `${path}/offsets`, {
      body: { offsets: [{ topic: 'ep-commit', partition: 1, offset: 4, metadata: 'm' }] },
      type: V2,
      accept: V2,
    });
    assert.equal(commit.status, 200, commit.text);
    assert.equal(commit.headers.get('content-type'), V2);
    assert.deepEqual(commit.body, []);
    const all = await h.call('POST', `${path}/offsets`, { type: V2 });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.body, []);
    const committed = await getWithBody(h, `${path}/offsets`, {
      partitions: [{ topic: 'ep-commit', partition: 1 }],
    });
    assert.deepEqual(committed.body.offsets, [{ topic: 'ep-commit', partition: 1, offset: 5, metadata: '' }]);
    const bad = await h.call('POST', `${path}/offsets`, { body: { offsets: 3 }, type: V2 });
    expectError(bad, 422, 422);
    assert.equal(bad.headers.get('content-type'), V2);
  });

  // resources/v2/ConsumersResource.java committedOffsets(), v2/KafkaConsumerState.java
  // committed() (a partition without a committed offset is left out),
  // entities/v2/ConsumerCommittedRequest.java, entities/v2/ConsumerCommittedResponse.java.
  test('endpoint GET …/offsets (ConsumersResource.committedOffsets)', async () => {
    const h = harness();
    await createTopic(h, 'ep-committed', 2);
    await h.call('POST', '/topics/ep-committed', {
      body: { records: [{ value: 1, partition: 0 }] },
      type: JSON_V2,
    });
    const path = await createConsumer(h, 'ep-committed', { format: 'json' });
    await h.call('POST', `${path}/subscription`, { body: { topics: ['ep-committed'] }, type: V2 });
    await h.call('POST', `${path}/offsets`, {
      body: { offsets: [{ topic: 'ep-committed', partition: 0, offset: 0 }] },
      type: V2,
    });
    const both = await getWithBody(h, `${path}/offsets`, {
      partitions: [
        { topic: 'ep-committed', partition: 0 },
        { topic: 'ep-committed', partition: 1 },
      ],
    });
    assert.equal(both.status, 200);
    assert.deepEqual(both.body, {
      offsets: [{ topic: 'ep-committed', partition: 0, offset: 1, metadata: '' }],
    });
  });

  // resources/v2/ConsumersResource.java seekToOffset(), seekToBeginning(), seekToEnd() (void: 204;
  // an IllegalStateException, e.g. a partition not assigned → Errors.illegalStateException 409 / 40903),
  // entities/v2/ConsumerSeekRequest.java, entities/v2/ConsumerSeekToRequest.java.
  test('endpoint POST …/positions[/beginning|/end] (ConsumersResource.seek*)', async () => {
    const h = harness();
    await createTopic(h, 'ep-seek', 2);
    const records = Array.from({ length: 6 }, (_, i) => ({ value: { i }, partition: 0 }));
    await h.call('POST', '/topics/ep-seek', { body: { records }, type: JSON_V2 });
    const path = await createConsumer(h, 'ep-seek', { format: 'json', 'auto.offset.reset': 'earliest' });
    const assign = await h.call('POST', `${path}/assignments`, {
      body: { partitions: [{ topic: 'ep-seek', partition: 0 }] },
      type: V2,
    });
    assert.equal(assign.status, 204, assign.text);
    const seek = await h.call('POST', `${path}/positions`, {
      body: { offsets: [{ topic: 'ep-seek', partition: 0, offset: 4 }] },
      type: V2,
    });
    assert.equal(seek.status, 204, seek.text);
    assert.equal(seek.text, '');
    assert.deepEqual(
      (await fetchCount(h, path, 2, JSON_V2)).map((r) => r.offset),
      [4, 5],
    );
    const begin = await h.call('POST', `${path}/positions/beginning`, {
      body: { partitions: [{ topic: 'ep-seek', partition: 0 }] },
      type: V2,
    });
    assert.equal(begin.status, 204, begin.text);
    assert.equal((await fetchCount(h, path, 1, JSON_V2))[0].offset, 0);
    const end = await h.call('POST', `${path}/positions/end`, {
      body: { partitions: [{ topic: 'ep-seek', partition: 0 }] },
      type: V2,
    });
    assert.equal(end.status, 204, end.text);
    assert.deepEqual((await h.call('GET', `${path}/records?timeout=0`, { accept: JSON_V2 })).body, []);
    expectError(
      await h.call('POST', `${path}/positions`, {
        body: { offsets: [{ topic: 'ep-seek', partition: 1, offset: 0 }] },
        type: V2,
      }),
      409,
      40903,
    );
  });

  // resources/v2/ConsumersResource.java assign(), assignment(),
  // entities/v2/ConsumerAssignmentRequest.java, entities/v2/ConsumerAssignmentResponse.java.
  test('endpoint POST, GET …/assignments (ConsumersResource.assign)', async () => {
    const h = harness();
    await createTopic(h, 'ep-assign', 2);
    const path = await createConsumer(h, 'ep-assign', { format: 'json' });
    const assign = await h.call('POST', `${path}/assignments`, {
      body: { partitions: [{ topic: 'ep-assign', partition: 1 }] },
      type: V2,
    });
    assert.equal(assign.status, 204, assign.text);
    assert.equal(assign.text, '');
    const got = await h.call('GET', `${path}/assignments`, { accept: V2 });
    assert.equal(got.headers.get('content-type'), V2);
    assert.deepEqual(got.body, { partitions: [{ topic: 'ep-assign', partition: 1 }] });
    expectError(await h.call('GET', `${path}/assignments`, { accept: HTML }), 406, 406);
    expectError(
      await h.call('POST', `${path}/assignments`, {
        body: { partitions: [{ topic: 'ep-assign' }] },
        type: V2,
      }),
      422,
      422,
    );
  });
}
