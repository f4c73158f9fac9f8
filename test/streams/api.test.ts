import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { connect } from 'node:net';
import { createTopic, fetchAll, newConsumer, produce, startHarness, VND, type Harness } from './harness.js';

describe('streams API: the documented call order', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h.close();
  });

  test('create topic → produce → create consumer → subscribe → fetch', async () => {
    const created = await h.call('POST', '/streams/topics/topic', {
      body: { topic_name: 'orders' },
      type: 'application/json',
    });
    assert.equal(created.status, 200);
    assert.equal(typeof created.body.message, 'string');

    const consumer = await h.call('POST', '/streams/consumers/billing', {
      body: { 'auto.offset.reset': 'earliest' },
      accept: VND,
    });
    assert.equal(consumer.status, 200);
    assert.match(consumer.headers.get('content-type') ?? '', /application\/vnd\.streams\.json\.v2\+json/);
    const { instance_id: id, base_uri: baseUri } = consumer.body;
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.ok(baseUri.startsWith('http://'), baseUri);
    assert.ok(baseUri.endsWith(`/streams/consumers/billing/instances/${id}`), baseUri);
    const path = new URL(baseUri).pathname;

    const produced = await h.call('POST', '/streams/topic/orders', {
      body: { records: [{ key: 'a', value: { n: 1 } }, { key: 'b', value: { n: 2 } }, { value: { n: 3 } }] },
    });
    assert.equal(produced.status, 200);
    assert.deepEqual(produced.body, {
      offsets: [
        { partition: 0, offset: 0 },
        { partition: 0, offset: 1 },
        { partition: 0, offset: 2 },
      ],
    });

    const sub = await h.call('POST', `${path}/subscription`, { body: { topics: ['orders'] } });
    assert.equal(sub.status, 200);
    assert.equal(sub.text, '');

    const records = await fetchAll(h, path, 3);
    assert.deepEqual(
      records.map((r) => ({
        topic: r.topic,
        key: r.key,
        value: r.value,
        partition: r.partition,
        offset: r.offset,
      })),
      [
        { topic: 'orders', key: 'a', value: { n: 1 }, partition: 0, offset: 0 },
        { topic: 'orders', key: 'b', value: { n: 2 }, partition: 0, offset: 1 },
        { topic: 'orders', key: null, value: { n: 3 }, partition: 0, offset: 2 },
      ],
    );
    for (const r of records) assert.equal(typeof r.timestamp, 'number');

    const subscription = await h.call('GET', `${path}/subscription`);
    assert.deepEqual(subscription.body, { topics: ['orders'] });
  });

  test('topic creation also answers without the /streams prefix; listing and metadata', async () => {
    const reply = await h.call('POST', '/topics/topic', {
      body: { topic_name: 'prefixless', partitions: 3 },
      type: 'application/json',
    });
    assert.equal(reply.status, 200);
    const list = await h.call('GET', '/streams/topics');
    assert.ok(list.body.includes('prefixless'));
    const meta = await h.call('GET', '/streams/topics/prefixless');
    assert.equal(meta.status, 200);
    assert.equal(meta.body.partitions_count, 3);
    assert.deepEqual(
      meta.body.partitions.map((p: { partition: number }) => p.partition),
      [0, 1, 2],
    );
  });

  test('timestamps and headers given by the producer reach the consumer', async () => {
    await createTopic(h, 'stamped');
    const path = await newConsumer(h, 'stamps', ['stamped'], { 'auto.offset.reset': 'earliest' });
    await produce(h, 'stamped', [
      {
        value: { a: 1 },
        timestamp: 1_700_000_000_000,
        headers: [
          { key: 'trace', value: 'abc' },
          { key: 'nil', value: null },
        ],
      },
    ]);
    const [record] = await fetchAll(h, path, 1);
    assert.equal(record.timestamp, 1_700_000_000_000);
    assert.deepEqual(record.headers, [
      { key: 'trace', value: 'abc' },
      { key: 'nil', value: null },
    ]);
  });

  test('direct partition read: stateless, from an offset, bounded by count', async () => {
    await createTopic(h, 'direct', 2);
    await produce(
      h,
      'direct',
      [0, 1, 2, 3].map((n) => ({ value: { n }, partition: 1 })),
    );
    const read = await h.call('GET', '/streams/topics/direct/partitions/1/records?offset=1&count=2', {
      accept: VND,
    });
    assert.equal(read.status, 200);
    assert.deepEqual(
      read.body.map((r: { offset: number; value: { n: number } }) => [r.offset, r.value.n]),
      [
        [1, 1],
        [2, 2],
      ],
    );
    const again = await h.call('GET', '/streams/topics/direct/partitions/1/records?offset=1&count=2', {
      accept: VND,
    });
    assert.deepEqual(again.body, read.body, 'reading does not move anything');
    assert.deepEqual((await h.call('GET', '/streams/topics/direct/partitions/0/records')).body, []);
    assert.equal((await h.call('GET', '/streams/topics/direct/partitions/2/records')).body.error_code, 40402);
    assert.equal((await h.call('GET', '/streams/topics/direct/partitions/x/records')).body.error_code, 40402);
    assert.equal((await h.call('GET', '/streams/topics/nope/partitions/0/records')).body.error_code, 40401);
    assert.equal((await h.call('GET', '/streams/topics/direct/partitions/1/records?offset=-1')).status, 422);
    assert.equal(
      (await h.call('GET', '/streams/topics/direct/partitions/1/records', { accept: 'text/html' })).status,
      406,
    );
  });

  test('base_uri uses STREAMS_PUBLIC_URL when set', async () => {
    const proxied = await startHarness({ STREAMS_PUBLIC_URL: 'https://streams.example.com/' });
    try {
      const reply = await proxied.call('POST', '/streams/consumers/behind-proxy', { accept: VND });
      assert.equal(
        reply.body.base_uri,
        `https://streams.example.com/streams/consumers/behind-proxy/instances/${reply.body.instance_id}`,
      );
    } finally {
      await proxied.close();
    }
  });

  test('base_uri never carries a Host header that is not a plain host[:port]', async () => {
    // Raw HTTP/1.1 over a socket: fetch would not send these Host values.
    const listener = new URL(h.url);
    const createWithHost = (host: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = connect(Number(listener.port), listener.hostname);
        let text = '';
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('end', () => resolve(text));
        socket.on('error', reject);
        socket.write(
          `POST /streams/consumers/hosts HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${h.token}\r\n` +
            'Content-Length: 0\r\nConnection: close\r\n\r\n',
        );
      });
    const baseUriFor = async (host: string): Promise<string> => {
      const response = await createWithHost(host);
      assert.match(response, /^HTTP\/1\.1 200 /, `status for Host ${JSON.stringify(host)}`);
      return (JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4)) as { base_uri: string }).base_uri;
    };
    const own = `${listener.origin}/streams/consumers/hosts/instances/`;
    for (const host of [
      'evil.example/x?',
      'evil.example#x',
      'user@evil.example',
      'streams.example:80@evil.example',
      'evil.example\\x',
      'evil.example:99999',
      'evil.example:80:81',
      '-evil.example',
      'evil..example',
      'ev\u00e9l.example',
      '[::1',
    ]) {
      const baseUri = await baseUriFor(host);
      assert.ok(baseUri.startsWith(own), `Host ${JSON.stringify(host)} gave ${baseUri}`);
    }
    // CR or LF inside the header never reaches a handler: the HTTP parser drops the connection.
    for (const host of ['evil.example\rX-Injected: 1', 'evil.example\nX-Injected: 1']) {
      assert.doesNotMatch(await createWithHost(host), /base_uri/);
    }
    // A plain host[:port] is what the client used to reach us (a proxy's name, say): kept.
    assert.match(await baseUriFor('streams.internal:8082'), /^http:\/\/streams\.internal:8082\/streams\//);
    assert.match(await baseUriFor('[::1]:8082'), /^http:\/\/\[::1\]:8082\/streams\//);
    assert.match(await baseUriFor('localhost'), /^http:\/\/localhost\/streams\//);
  });

  test('plain application/json is accepted for bodies and Accept', async () => {
    await createTopic(h, 'plainjson');
    const produced = await h.call('POST', '/streams/topic/plainjson', {
      body: { records: [{ value: { x: 1 } }] },
      type: 'application/json',
    });
    assert.equal(produced.status, 200);
    const consumer = await h.call('POST', '/streams/consumers/plain', {
      body: {},
      type: 'application/json',
      accept: 'application/json',
    });
    assert.equal(consumer.status, 200);
    assert.match(consumer.headers.get('content-type') ?? '', /^application\/json/);
  });
});
