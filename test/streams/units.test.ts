import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { assignPartitions } from '../../src/streams/groups/assignment.js';
import {
  batchCount,
  decodeRecord,
  encodeBatch,
  encodeRecord,
  offsetOfKey,
  partitionEndKey,
  partitionStartKey,
  recordKey,
  visitBatch,
} from '../../src/streams/log/codec.js';
import { baseFromHost, isPlainHost } from '../../src/streams/http/host.js';
import { negotiate } from '../../src/streams/http/media.js';
import { StreamsError } from '../../src/streams/errors.js';
import { EnvReader, SettingsError } from '../../src/core/settings/index.js';
import { loadStreamsSettings } from '../../src/streams/settings.js';

test('a Host header is a base_uri only when it is a plain host[:port]', () => {
  for (const good of [
    'localhost',
    'streams.example.com',
    'streams.example.com.',
    'a-b.c:8082',
    '10.0.0.1:0',
    '[::1]',
    '[2001:db8::1]:65535',
  ]) {
    assert.equal(isPlainHost(good), true, good);
  }
  for (const bad of [
    '',
    'evil.example/x?',
    'evil.example?x',
    'evil.example#x',
    'user@evil.example',
    'a:1@evil.example',
    'evil.example\\x',
    'evil.example\r\nX: 1',
    'evil.example ',
    'evil.example:',
    'evil.example:65536',
    'evil.example:1:2',
    '-evil.example',
    'evil-.example',
    'evil..example',
    '.evil.example',
    'ev\u00e9l.example',
    '[::1',
    '[evil.example]',
    `${'a'.repeat(64)}.example`,
  ]) {
    assert.equal(isPlainHost(bad), false, JSON.stringify(bad));
  }
  assert.equal(
    baseFromHost('evil.example/x?', () => 'http://127.0.0.1:8082'),
    'http://127.0.0.1:8082',
  );
  assert.equal(
    baseFromHost(undefined, () => 'http://127.0.0.1:8082'),
    'http://127.0.0.1:8082',
  );
  assert.equal(
    baseFromHost('proxy.internal:80', () => 'unused'),
    'http://proxy.internal:80',
  );
});

test('record codec round-trips keys, headers, timestamps and the exact value text', () => {
  const cases = [
    { partition: 0, key: null, valueJson: '{"a":1}', timestamp: 0, headers: null },
    {
      partition: 1,
      key: '',
      valueJson: '{}',
      timestamp: 1_700_000_000_123,
      headers: [{ key: 'h', value: null }],
    },
    {
      partition: 2,
      key: 'ключ ✓',
      valueJson: '{"s":"ü","n":[1,2,{"x":null}]}',
      timestamp: 42,
      headers: [{ key: 'a', value: 'b' }],
    },
  ];
  for (const c of cases) {
    const decoded = decodeRecord(encodeRecord(c));
    assert.deepEqual(decoded, {
      key: c.key,
      value: Buffer.from(c.valueJson),
      timestamp: c.timestamp,
      headers: c.headers,
    });
    // The value as the client's bytes (a view into a request body) is stored the same way.
    const body = Buffer.from(`[${c.valueJson}]`);
    const view = body.subarray(1, body.length - 1);
    assert.deepEqual(encodeRecord({ ...c, valueJson: view }), encodeRecord(c));
  }
  assert.throws(() => decodeRecord(Buffer.from([9, 0, 0])), /unknown record encoding/);
});

test('batches keep their records in order and can be entered at any index', () => {
  const records = [0, 1, 2, 3].map((n) => ({
    partition: 0,
    key: n % 2 ? `k${n}` : null,
    valueJson: JSON.stringify({ n }),
    timestamp: n,
    headers: null,
  }));
  const batch = encodeBatch(records);
  assert.equal(batchCount(batch), 4);
  const seen: Array<[number, string]> = [];
  visitBatch(batch, 1, (i, record) => {
    seen.push([i, decodeRecord(record).value.toString()]);
    return i < 2;
  });
  assert.deepEqual(seen, [
    [1, '{"n":1}'],
    [2, '{"n":2}'],
  ]);
  assert.throws(() => batchCount(encodeRecord(records[0]!)), /unknown batch encoding/);
});

test('storage keys sort by topic, partition, offset', () => {
  const keys = [
    recordKey(1, 0, 2),
    recordKey(1, 0, 256),
    recordKey(1, 1, 0),
    recordKey(2, 0, 0),
    recordKey(1, 0, 2 ** 40),
  ];
  const sorted = [...keys].sort((a, b) => Buffer.compare(a, b));
  assert.deepEqual(sorted, [keys[0], keys[1], keys[4], keys[2], keys[3]]);
  assert.equal(offsetOfKey(recordKey(7, 3, 123456789)), 123456789);
  assert.ok(Buffer.compare(recordKey(1, 0, 2 ** 47), partitionEndKey(1, 0)) < 0);
  assert.ok(Buffer.compare(partitionEndKey(1, 0), recordKey(1, 1, 0)) < 0);
  assert.ok(Buffer.compare(partitionStartKey(1, 1), recordKey(1, 1, 0)) < 0);
  assert.ok(Buffer.compare(recordKey(1, 0, 2 ** 47), partitionStartKey(1, 1)) < 0);
});

test('assignment: one owner per partition, join order decides, unsubscribed members get nothing', () => {
  const topics = new Map([
    ['a', { name: 'a', partitions: 4 }],
    ['b', { name: 'b', partitions: 1 }],
  ]);
  const plan = assignPartitions(
    [
      { id: 'm2', seq: 2, topics: ['a'] },
      { id: 'm1', seq: 1, topics: ['a', 'b'] },
      { id: 'm3', seq: 3, topics: [] },
    ],
    (n) => topics.get(n),
  );
  assert.deepEqual(plan.get('m1'), [
    { topic: 'a', partition: 0 },
    { topic: 'a', partition: 2 },
    { topic: 'b', partition: 0 },
  ]);
  assert.deepEqual(plan.get('m2'), [
    { topic: 'a', partition: 1 },
    { topic: 'a', partition: 3 },
  ]);
  assert.deepEqual(plan.get('m3'), []);
});

test('Accept negotiation', () => {
  const vnd = 'application/vnd.streams.json.v2+json';
  assert.equal(negotiate(undefined, true), vnd);
  assert.equal(negotiate('*/*', true), vnd);
  assert.equal(negotiate('application/json', true), 'application/json');
  assert.equal(negotiate(`text/html, ${vnd};q=0.5`, true), vnd);
  assert.throws(
    () => negotiate(`${vnd};q=0`, true),
    (e: unknown) => e instanceof StreamsError && e.status === 406 && e.errorCode === 40601,
  );
  assert.throws(() => negotiate('text/html', true), StreamsError);
  assert.equal(negotiate('text/html', false), vnd);
});

test('settings: defaults, and bad values name the variable', () => {
  const defaults = loadStreamsSettings(new EnvReader({}));
  assert.equal(defaults.defaultPartitions, 1);
  assert.equal(defaults.instanceTimeoutMs, 300_000);
  assert.equal(
    loadStreamsSettings(new EnvReader({ STREAMS_DEFAULT_PARTITIONS: '6', STREAMS_FETCH_TIMEOUT: '2s' }))
      .fetchTimeoutDefaultMs,
    2000,
  );
  const bad: Array<[Record<string, string>, string]> = [
    [{ STREAMS_DEFAULT_PARTITIONS: '0' }, 'STREAMS_DEFAULT_PARTITIONS'],
    [{ STREAMS_DEFAULT_PARTITIONS: 'many' }, 'STREAMS_DEFAULT_PARTITIONS'],
    [{ STREAMS_MAX_PARTITIONS: '4', STREAMS_DEFAULT_PARTITIONS: '5' }, 'STREAMS_DEFAULT_PARTITIONS'],
    [{ STREAMS_FETCH_TIMEOUT: '1m', STREAMS_FETCH_TIMEOUT_MAX: '10s' }, 'STREAMS_FETCH_TIMEOUT'],
    [{ STREAMS_INSTANCE_TIMEOUT: 'soon' }, 'STREAMS_INSTANCE_TIMEOUT'],
    [{ STREAMS_PUBLIC_URL: 'ftp://x' }, 'STREAMS_PUBLIC_URL'],
    [{ STREAMS_PUBLIC_URL: 'not a url' }, 'STREAMS_PUBLIC_URL'],
    [{ STREAMS_PUBLIC_URL: 'https://streams.example.com/?x=' }, 'STREAMS_PUBLIC_URL'],
    [{ STREAMS_PUBLIC_URL: 'https://streams.example.com/#' }, 'STREAMS_PUBLIC_URL'],
    [{ STREAMS_PUBLIC_URL: 'https://user@streams.example.com' }, 'STREAMS_PUBLIC_URL'],
  ];
  for (const [env, name] of bad) {
    assert.throws(
      () => loadStreamsSettings(new EnvReader(env)),
      (e: unknown) => e instanceof SettingsError && e.message.includes(name),
      name,
    );
  }
  assert.equal(
    loadStreamsSettings(new EnvReader({ STREAMS_PUBLIC_URL: 'https://streams.example.com/' })).publicUrl,
    'https://streams.example.com',
  );
});

test('settings: the JetStream backend and its NATS settings', () => {
  assert.equal(loadStreamsSettings(new EnvReader({})).backend, 'lmdb');
  assert.equal(loadStreamsSettings(new EnvReader({})).nats, undefined);
  const js = loadStreamsSettings(
    new EnvReader({
      STREAMS_BACKEND: 'jetstream',
      STREAMS_NATS_SERVERS: 'nats://a:4222, tls://b:4222',
      STREAMS_NATS_USER: 'sluice',
      STREAMS_NATS_PASSWORD: 'secret',
      STREAMS_REPLICAS: '3',
      STREAMS_NATS_PREFIX: 'prod_1',
      STREAMS_NATS_TIMEOUT: '2s',
    }),
  );
  assert.equal(js.backend, 'jetstream');
  assert.deepEqual(js.nats?.servers, ['nats://a:4222', 'tls://b:4222']);
  assert.equal(js.nats?.user, 'sluice');
  assert.equal(js.nats?.replicas, 3);
  assert.equal(js.nats?.prefix, 'prod_1');
  assert.equal(js.nats?.timeoutMs, 2000);
  const defaults = loadStreamsSettings(
    new EnvReader({ STREAMS_BACKEND: 'jetstream', STREAMS_NATS_SERVERS: 'nats://127.0.0.1:4222' }),
  ).nats!;
  assert.equal(defaults.replicas, 1);
  assert.equal(defaults.prefix, 'sluice');
  assert.equal(defaults.timeoutMs, 5000);
  const base = { STREAMS_BACKEND: 'jetstream', STREAMS_NATS_SERVERS: 'nats://127.0.0.1:4222' };
  const bad: Array<[Record<string, string>, string]> = [
    [{ STREAMS_BACKEND: 'kafka' }, 'STREAMS_BACKEND'],
    [{ STREAMS_BACKEND: 'jetstream' }, 'STREAMS_NATS_SERVERS'],
    [{ ...base, STREAMS_NATS_SERVERS: 'http://x:4222' }, 'STREAMS_NATS_SERVERS'],
    [{ ...base, STREAMS_NATS_SERVERS: 'nats://u:p@x:4222' }, 'STREAMS_NATS_SERVERS'],
    [{ ...base, STREAMS_NATS_USER: 'u' }, 'STREAMS_NATS_PASSWORD'],
    [{ ...base, STREAMS_NATS_PASSWORD: 'p' }, 'STREAMS_NATS_USER'],
    [
      { ...base, STREAMS_NATS_USER: 'u', STREAMS_NATS_PASSWORD: 'p', STREAMS_NATS_TOKEN: 't' },
      'STREAMS_NATS_TOKEN',
    ],
    [{ ...base, STREAMS_NATS_CREDS: '/nonexistent/sluice.creds' }, 'STREAMS_NATS_CREDS'],
    [{ ...base, STREAMS_NATS_TLS_CERT: '/nonexistent/cert.pem' }, 'STREAMS_NATS_TLS_KEY'],
    [{ ...base, STREAMS_NATS_TLS_CA: '/nonexistent/ca.pem' }, 'STREAMS_NATS_TLS_CA'],
    [{ ...base, STREAMS_REPLICAS: '0' }, 'STREAMS_REPLICAS'],
    [{ ...base, STREAMS_REPLICAS: '6' }, 'STREAMS_REPLICAS'],
    [{ ...base, STREAMS_NATS_PREFIX: 'a.b' }, 'STREAMS_NATS_PREFIX'],
    [{ ...base, STREAMS_NATS_TIMEOUT: '10ms' }, 'STREAMS_NATS_TIMEOUT'],
  ];
  for (const [env, name] of bad) {
    assert.throws(
      () => loadStreamsSettings(new EnvReader(env)),
      (e: unknown) => e instanceof SettingsError && e.message.includes(name),
      name,
    );
  }
  // Secrets never appear in the message.
  assert.throws(
    () =>
      loadStreamsSettings(
        new EnvReader({
          ...base,
          STREAMS_NATS_USER: 'u',
          STREAMS_NATS_PASSWORD: 'p4ss',
          STREAMS_NATS_TOKEN: 't0ken',
        }),
      ),
    (e: unknown) => e instanceof SettingsError && !/p4ss|t0ken/.test(e.message),
  );
});
