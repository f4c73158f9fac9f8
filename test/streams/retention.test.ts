// Retention and topic removal through the HTTP API, on LMDB, with the service's clock moved by
// the test (records are stamped with the wall clock; retention judges them on the service's).
// Every wait is on state: a retention pass counted after the clock moved, an offset that moved.

import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { openKeyStore } from '../../src/core/auth/index.js';
import { retentionStats } from '../../src/streams/index.js';
import { openStreamsEnvironment } from '../../src/streams/storage.js';
import { waitUntil } from '../helpers/wait.js';
import { fetchAll, newConsumer, produce, startHarness, VND, type Harness, type Reply } from './harness.js';

const DAY = 24 * 3600_000;

function expectError(reply: Reply, status: number, code: number): void {
  assert.equal(reply.status, status, reply.text);
  assert.equal(reply.body?.error_code, code, reply.text);
  assert.equal(typeof reply.body?.message, 'string');
}

describe('streams retention and topic removal (API, LMDB, moved clock)', () => {
  let h: Harness;
  let skew = 0;
  const now = (): number => Date.now() + skew;

  before(async () => {
    h = await startHarness(
      { STREAMS_RETENTION_CHECK_INTERVAL: '20ms', STREAMS_DEFAULT_RETENTION_MS: String(DAY) },
      { now },
    );
  });
  after(async () => {
    await h.close();
  });

  /** Resolves after a whole retention pass ran after this call (so it saw the clock as set). */
  const passRan = async (): Promise<void> => {
    const seen = retentionStats().passes;
    await waitUntil('a retention pass', () => retentionStats().passes >= seen + 2);
  };

  const create = (body: unknown): Promise<Reply> =>
    h.call('POST', '/streams/topics/topic', { body, type: 'application/json' });

  const bounds = async (topic: string, partition = 0): Promise<{ beginning: number; end: number }> => {
    const reply = await h.call('GET', `/streams/topics/${topic}`);
    assert.equal(reply.status, 200, reply.text);
    const p = reply.body.partitions[partition];
    return { beginning: p.beginning_offset, end: p.end_offset };
  };

  const batch = (n: number, size = 50) =>
    Array.from({ length: n }, (_, i) => ({ value: { i, pad: 'x'.repeat(size) } }));

  test('configs at creation: Kafka names, list or map; defaults from the settings; shown by describe', async () => {
    const listed = await create({
      topic_name: 'cfg-list',
      configs: [
        { name: 'retention.ms', value: '60000' },
        { name: 'retention.bytes', value: '1048576' },
      ],
    });
    assert.equal(listed.status, 200, listed.text);
    const described = await h.call('GET', '/streams/topics/cfg-list');
    assert.deepEqual(described.body.configs, [
      { name: 'retention.ms', value: '60000' },
      { name: 'retention.bytes', value: '1048576' },
    ]);
    assert.equal((await create({ topic_name: 'cfg-map', configs: { 'retention.bytes': 5000 } })).status, 200);
    assert.deepEqual((await h.call('GET', '/streams/topics/cfg-map')).body.configs, [
      { name: 'retention.ms', value: String(DAY) },
      { name: 'retention.bytes', value: '5000' },
    ]);
    // Confluent v2's describe shows them as a map.
    const confluent = await h.call('GET', '/topics/cfg-map', { accept: 'application/vnd.kafka.v2+json' });
    assert.equal(confluent.status, 200, confluent.text);
    assert.deepEqual(confluent.body.configs, { 'retention.ms': String(DAY), 'retention.bytes': '5000' });
  });

  test('bad configs are 400 / 40002 naming the problem; nothing is created', async () => {
    const cases: unknown[] = [
      { 'retention.ms': 'soon' },
      { 'retention.ms': 0 },
      { 'retention.ms': -2 },
      { 'retention.bytes': 1.5 },
      { 'cleanup.policy': 'compact' },
      [{ name: 'retention.ms' }],
      [{ name: 'retention.ms', value: '1', extra: 1 }],
      [
        { name: 'retention.ms', value: '1' },
        { name: 'retention.ms', value: '2' },
      ],
      'retention.ms=1',
    ];
    for (const configs of cases) {
      const reply = await create({ topic_name: 'cfg-bad', configs });
      expectError(reply, 400, 40002);
    }
    assert.equal((await h.call('GET', '/streams/topics/cfg-bad')).status, 404);
  });

  test('PATCH /streams/topics/{t} changes configs; null goes back to the default; bad input is refused', async () => {
    assert.equal((await create({ topic_name: 'cfg-patch' })).status, 200);
    const patched = await h.call('PATCH', '/streams/topics/cfg-patch', {
      body: { configs: [{ name: 'retention.bytes', value: '4096' }] },
    });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.configs, [
      { name: 'retention.ms', value: String(DAY) },
      { name: 'retention.bytes', value: '4096' },
    ]);
    const reset = await h.call('PATCH', '/streams/topics/cfg-patch', {
      body: { configs: { 'retention.bytes': null, 'retention.ms': -1 } },
    });
    assert.deepEqual(reset.body.configs, [
      { name: 'retention.ms', value: '-1' },
      { name: 'retention.bytes', value: '-1' },
    ]);
    expectError(
      await h.call('PATCH', '/streams/topics/cfg-patch', { body: { configs: { 'segment.ms': 1 } } }),
      400,
      40002,
    );
    expectError(
      await h.call('PATCH', '/streams/topics/cfg-patch', { body: { configs: [], partitions: 3 } }),
      400,
      40002,
    );
    expectError(await h.call('PATCH', '/streams/topics/cfg-patch', { body: [] }), 400, 40002);
    expectError(
      await h.call('PATCH', '/streams/topics/nope', { body: { configs: { 'retention.ms': 1 } } }),
      404,
      40401,
    );
    // Topic admin needs the scope that creates topics.
    const keys = openKeyStore(h.test.dataDir);
    try {
      const reader = await keys.create({ name: 'reader', scopes: ['streams:read'] });
      expectError(
        await h.call('PATCH', '/streams/topics/cfg-patch', {
          token: reader.token,
          body: { configs: { 'retention.ms': 1 } },
        }),
        403,
        40301,
      );
      expectError(await h.call('DELETE', '/streams/topics/cfg-patch', { token: reader.token }), 403, 40301);
    } finally {
      await keys.close();
    }
  });

  test('under steady produce, retention.ms moves beginning_offset and bounds the stored entries', async () => {
    assert.equal((await create({ topic_name: 'steady', configs: { 'retention.ms': 5000 } })).status, 200);
    const root = openStreamsEnvironment(join(h.test.ctx.core.dataDir, 'streams'));
    const records = root.openDB<Buffer, Buffer>({
      name: 'records',
      keyEncoding: 'binary',
      encoding: 'binary',
    });
    const removedBefore = retentionStats().removedRecords;
    const counts: number[] = [];
    let beginning = 0;
    // Each round: one batch of 100 records, then the clock moves 2 s. A batch is 5 s old after
    // three rounds, so at most about three batches (plus the newest) are ever stored.
    for (let round = 0; round < 15; round++) {
      await produce(h, 'steady', batch(100));
      skew += 2000;
      await passRan();
      const b = await bounds('steady');
      assert.ok(b.beginning >= beginning, 'beginning_offset never goes back');
      beginning = b.beginning;
      counts.push(records.getKeysCount());
    }
    assert.ok(beginning >= 1000, `beginning_offset moved to ${beginning}`);
    const { end } = await bounds('steady');
    assert.equal(end, 1500);
    assert.ok(end - beginning <= 400, `kept ${end - beginning} records`);
    // The whole environment holds the few other tests' batches and this topic's last few.
    const later = counts.slice(5);
    assert.ok(Math.max(...later) <= Math.min(...later) + 3, `entries stay bounded: ${counts.join(' ')}`);
    assert.ok(retentionStats().removedRecords - removedBefore >= 1000);
    assert.ok(retentionStats().removedBytes > 0);
    assert.ok(retentionStats().lastPassAt > 0);
    // The Confluent v2 offsets route reports the same beginning.
    const offsets = await h.call('GET', '/topics/steady/partitions/0/offsets', {
      accept: 'application/vnd.kafka.v2+json',
    });
    assert.equal(offsets.body.beginning_offset, beginning);
    // A stateless read below the beginning is out of range; at the beginning it reads.
    expectError(
      await h.call('GET', '/streams/topics/steady/partitions/0/records?offset=0', { accept: VND }),
      416,
      416,
    );
    const read = await h.call(
      'GET',
      `/streams/topics/steady/partitions/0/records?offset=${beginning}&count=1`,
      {
        accept: VND,
      },
    );
    assert.equal(read.body[0].offset, beginning);
    // Without an offset the partition read starts at the beginning.
    const first = await h.call('GET', '/streams/topics/steady/partitions/0/records?count=1', { accept: VND });
    assert.equal(first.body[0].offset, beginning);
  });

  test('retention.bytes bounds a partition by size', async () => {
    assert.equal((await create({ topic_name: 'sized', configs: { 'retention.bytes': 20000 } })).status, 200);
    for (let i = 0; i < 40; i++) await produce(h, 'sized', batch(1, 1000));
    await waitUntil('the partition cut back', async () => (await bounds('sized')).beginning > 0);
    await passRan();
    const b = await bounds('sized');
    // Records of a bit over 1 KB each: about 20 are kept.
    assert.ok(b.end - b.beginning >= 15 && b.end - b.beginning <= 21, JSON.stringify(b));
  });

  test('/metrics shows what retention removed, its passes and when the last one ended', async () => {
    const stats = retentionStats();
    assert.ok(stats.removedRecords > 0, 'earlier tests removed records');
    const scrape = await h.call('GET', '/metrics', { token: null });
    assert.equal(scrape.status, 200);
    const value = (name: string): number => {
      const line = scrape.text.split('\n').find((l) => l.startsWith(name + ' '));
      assert.ok(line, `${name} in ${scrape.text.slice(0, 200)}`);
      return Number(line.slice(name.length + 1));
    };
    // At least what had been removed before the scrape (passes go on meanwhile).
    assert.ok(value('sluice_streams_retention_removed_records_total') >= stats.removedRecords);
    assert.ok(value('sluice_streams_retention_removed_bytes_total') >= stats.removedBytes);
    assert.ok(value('sluice_streams_retention_passes_total') >= stats.passes);
    assert.ok(value('sluice_streams_retention_last_pass_timestamp_seconds') > 0);
  });

  test('a consumer behind the beginning follows auto.offset.reset: earliest, latest, none', async () => {
    assert.equal((await create({ topic_name: 'behind', configs: { 'retention.ms': 60_000 } })).status, 200);
    await produce(h, 'behind', batch(5));
    const paths: Record<string, string> = {};
    for (const reset of ['earliest', 'latest', 'none']) {
      paths[reset] = await newConsumer(h, `behind-${reset}`, ['behind'], { 'auto.offset.reset': reset });
      // Every one at offset 0 (the beginning now).
      const seek = await h.call('POST', `${paths[reset]}/positions`, {
        body: { offsets: [{ topic: 'behind', partition: 0, offset: 0 }] },
      });
      assert.equal(seek.status, 204, seek.text);
    }
    skew += 120_000;
    await produce(h, 'behind', batch(3));
    await waitUntil('the old batch removed', async () => (await bounds('behind')).beginning === 5);
    const earliest = await fetchAll(h, paths.earliest!, 3);
    assert.deepEqual(
      earliest.map((r) => r.offset),
      [5, 6, 7],
    );
    const latest = await h.call('GET', `${paths.latest!}/records?timeout=0`, { accept: VND });
    assert.equal(latest.status, 200, latest.text);
    assert.deepEqual(latest.body, []);
    await produce(h, 'behind', batch(1));
    const next = await fetchAll(h, paths.latest!, 1);
    assert.deepEqual(
      next.map((r) => r.offset),
      [8],
    );
    const none = await h.call('GET', `${paths.none!}/records?timeout=0`, { accept: VND });
    expectError(none, 416, 416);
    assert.match(none.body.message, /auto\.offset\.reset is none/);
    // The batch at 5..7 was stamped before the clock moved, so it is past retention too; once
    // offset 8 is the newest batch a pass removes it. Wait for that settled state before moving
    // by hand, so no pass can remove what the position points at between the move and the fetch.
    await waitUntil('all but the newest batch removed', async () => (await bounds('behind')).beginning === 8);
    const moved = await h.call('POST', `${paths.none!}/positions/beginning`, {
      body: { partitions: [{ topic: 'behind', partition: 0 }] },
    });
    assert.equal(moved.status, 204, moved.text);
    assert.deepEqual(
      (await fetchAll(h, paths.none!, 1)).map((r) => r.offset),
      [8],
    );
  });

  test('DELETE /streams/topics/{t}: records, committed offsets gone; subscribers get 404; created again it starts at 0', async () => {
    assert.equal((await create({ topic_name: 'doomed' })).status, 200);
    await produce(h, 'doomed', batch(4));
    const path = await newConsumer(h, 'doomed-readers', ['doomed'], { 'auto.offset.reset': 'earliest' });
    assert.equal((await fetchAll(h, path, 4)).length, 4);
    const committed = await h.call('POST', `${path}/offsets`, {
      body: { offsets: [{ topic: 'doomed', partition: 0, offset: 3 }] },
    });
    assert.equal(committed.status, 204, committed.text);

    const removed = await h.call('DELETE', '/streams/topics/doomed');
    assert.equal(removed.status, 204, removed.text);
    expectError(await h.call('GET', '/streams/topics/doomed'), 404, 40401);
    expectError(await h.call('DELETE', '/streams/topics/doomed'), 404, 40401);
    expectError(await h.call('POST', '/streams/topic/doomed', { body: { records: batch(1) } }), 404, 40401);
    const fetched = await h.call('GET', `${path}/records?timeout=0`, { accept: VND });
    expectError(fetched, 404, 40401);
    assert.match(fetched.body.message, /deleted/);
    assert.ok(!(await h.call('GET', '/streams/topics')).body.includes('doomed'));

    assert.equal((await create({ topic_name: 'doomed' })).status, 200);
    assert.deepEqual(
      (await produce(h, 'doomed', batch(2))).map((o) => o.offset),
      [0, 1],
    );
    // The group's committed offset (4) went with the old topic: a new member starts at the beginning.
    const fresh = await newConsumer(h, 'doomed-readers', ['doomed'], { 'auto.offset.reset': 'earliest' });
    await h.call('DELETE', path);
    assert.deepEqual(
      (await fetchAll(h, fresh, 2)).map((r) => r.offset),
      [0, 1],
    );
    assert.deepEqual(await bounds('doomed'), { beginning: 0, end: 2 });
  });
});
