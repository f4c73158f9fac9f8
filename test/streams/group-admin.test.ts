// Resetting and deleting a stopped consumer group (extensions for the console and operators):
// the same requests and answers on LMDB and on JetStream (a 3-node cluster, R3).
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { openKeyStore } from '../../src/core/auth/index.js';
import { natsAvailable } from '../helpers/nats.js';
import { waitUntil } from '../helpers/wait.js';
import { expectError } from './confluent-helpers.js';
import { startHarness, startJetStreamHarness, type Harness } from './harness.js';

const T0 = 1_900_000_000_000;
const GROUP = '/streams/consumer-groups/billing';
const RESET = `${GROUP}/offsets/reset`;

function groupAdminSuite(backend: string, start: () => Promise<Harness>, skip?: string): void {
  describe(`consumer group reset and delete (${backend})`, { skip }, () => {
    let h: Harness;
    before(async () => {
      h = await start();
      const created = await h.call('POST', '/streams/topics/topic', {
        body: { topic_name: 'orders', partitions: 2 },
        type: 'application/json',
      });
      assert.equal(created.status, 200, created.text);
      // Partition 0: five records stamped T0 … T0+4; partition 1: three stamped by the service (now).
      const records = [
        ...Array.from({ length: 5 }, (_, i) => ({ value: { i }, partition: 0, timestamp: T0 + i })),
        ...Array.from({ length: 3 }, (_, i) => ({ value: { i }, partition: 1 })),
      ];
      const produced = await h.call('POST', '/streams/topic/orders', { body: { records } });
      assert.equal(produced.status, 200, produced.text);
    });
    after(async () => {
      await h?.close();
    });

    const reset = (body: unknown, token?: string | null) =>
      h.call('POST', RESET, { body, type: 'application/json', ...(token !== undefined ? { token } : {}) });
    const committed = async () => {
      const view = await h.call('GET', GROUP);
      assert.equal(view.status, 200, view.text);
      return Object.fromEntries(
        view.body.partitions.map((p: any) => [`${p.topic}/${p.partition}`, p.committed_offset]),
      );
    };
    const offsets = (reply: { body: any }) =>
      Object.fromEntries(reply.body.offsets.map((o: any) => [`${o.topic}/${o.partition}`, o.offset]));
    /** A member of the group that reads everything and commits it. */
    const consumeAll = async (name: string, count: number) => {
      const base = `/streams/consumers/billing/instances/${name}`;
      const created = await h.call('POST', '/streams/consumers/billing', {
        body: { name, 'auto.offset.reset': 'earliest', 'auto.commit.enable': 'false' },
      });
      assert.equal(created.status, 200, created.text);
      const subscribed = await h.call('POST', `${base}/subscription`, { body: { topics: ['orders'] } });
      assert.equal(subscribed.status, 200, subscribed.text);
      const seen: any[] = [];
      await waitUntil(`${count} records fetched by ${name}`, async () => {
        const got = await h.call('GET', `${base}/records?timeout=100`);
        if (Array.isArray(got.body)) seen.push(...got.body);
        return seen.length >= count;
      });
      return { base, seen };
    };

    it('refuses while the group has members, then resets a stopped group (dry run, earliest, offset, time, latest)', async () => {
      const { base } = await consumeAll('c1', 8);
      assert.equal((await h.call('POST', `${base}/offsets`)).status, 204);
      assert.deepEqual(await committed(), { 'orders/0': 5, 'orders/1': 3 });

      expectError(await reset({ to: 'earliest' }), 409, 40904, /1 live member/);
      expectError(await h.call('DELETE', GROUP), 409, 40904);

      assert.equal((await h.call('DELETE', base)).status, 204);
      // Stopped: listed with no members and its lag, still described.
      const list = await h.call('GET', '/streams/consumer-groups');
      assert.deepEqual(list.body.consumer_groups, [
        { group: 'billing', members: 0, topics: ['orders'], lag: 0 },
      ]);
      assert.deepEqual((await h.call('GET', GROUP)).body.members, []);

      const dry = await reset({ to: 'earliest', dry_run: true });
      assert.equal(dry.status, 200, dry.text);
      assert.deepEqual(dry.body, {
        group: 'billing',
        dry_run: true,
        offsets: [
          { topic: 'orders', partition: 0, previous_offset: 5, offset: 0 },
          { topic: 'orders', partition: 1, previous_offset: 3, offset: 0 },
        ],
      });
      assert.deepEqual(await committed(), { 'orders/0': 5, 'orders/1': 3 }, 'a dry run commits nothing');

      const earliest = await reset({ to: 'earliest' });
      assert.equal(earliest.status, 200, earliest.text);
      assert.equal(earliest.body.dry_run, false);
      assert.deepEqual(await committed(), { 'orders/0': 0, 'orders/1': 0 });

      // An offset is clamped to each partition's bounds, like Kafka's tool.
      assert.deepEqual(offsets(await reset({ to: 'offset', offset: 4 })), { 'orders/0': 4, 'orders/1': 3 });
      assert.deepEqual(offsets(await reset({ to: 'offset', offset: 99 })), { 'orders/0': 5, 'orders/1': 3 });
      assert.deepEqual(await committed(), { 'orders/0': 5, 'orders/1': 3 });

      // A time: the first record stamped at or after it; the end where every record is older.
      assert.deepEqual(offsets(await reset({ to: 'time', timestamp: T0 + 2 })), {
        'orders/0': 2,
        'orders/1': 3,
      });
      const iso = new Date(T0 + 3).toISOString();
      assert.deepEqual(offsets(await reset({ to: 'time', timestamp: iso })), {
        'orders/0': 3,
        'orders/1': 3,
      });
      assert.deepEqual(offsets(await reset({ to: 'time', timestamp: 0, topics: ['orders'] })), {
        'orders/0': 0,
        'orders/1': 0,
      });
      assert.deepEqual(offsets(await reset({ to: 'latest' })), { 'orders/0': 5, 'orders/1': 3 });

      // The next member starts where the reset put the group.
      assert.deepEqual(offsets(await reset({ to: 'offset', offset: 3 })), { 'orders/0': 3, 'orders/1': 3 });
      const { base: next, seen } = await consumeAll('c2', 2);
      assert.deepEqual(seen.map((r) => `${r.partition}:${r.offset}`).sort(), ['0:3', '0:4']);
      assert.equal((await h.call('DELETE', next)).status, 204);
    });

    it('answers bad bodies, unknown groups and topics, and missing scopes with coded JSON errors', async () => {
      for (const body of [
        {},
        [],
        'earliest',
        { to: 'first' },
        { to: 'offset' },
        { to: 'offset', offset: -1 },
        { to: 'offset', offset: 1.5 },
        { to: 'earliest', offset: 1 },
        { to: 'time' },
        { to: 'time', timestamp: 'yesterday' },
        { to: 'time', timestamp: '2026-01-31T12:00:00' },
        { to: 'latest', topics: [] },
        { to: 'latest', topics: ['bad name'] },
        { to: 'latest', dry_run: 'yes' },
        { to: 'latest', extra: 1 },
      ]) {
        const reply = await reset(body);
        assert.equal(reply.status, 422, `${JSON.stringify(body)} → ${reply.status} ${reply.text}`);
        assert.equal(typeof reply.body.error_code, 'number');
      }
      const garbled = await h.call('POST', RESET, { raw: '{"to":', type: 'application/json' });
      assert.equal(garbled.status, 400, garbled.text);
      assert.equal(typeof garbled.body.message, 'string');

      expectError(await reset({ to: 'latest', topics: ['missing'] }), 404, 40401);
      expectError(
        await h.call('POST', '/streams/consumer-groups/nobody/offsets/reset', {
          body: { to: 'latest' },
          type: 'application/json',
        }),
        404,
        40403,
      );
      expectError(await h.call('DELETE', '/streams/consumer-groups/nobody'), 404, 40403);

      // Scope checked before the body is read: a reader gets 403 even for a garbled body.
      const keys = openKeyStore(h.test.dataDir);
      try {
        const reader = await keys.create({ name: 'reader', scopes: ['streams:read'] });
        expectError(
          await h.call('POST', RESET, { raw: '{"to":', type: 'application/json', token: reader.token }),
          403,
          40301,
        );
        expectError(await h.call('DELETE', GROUP, { token: reader.token }), 403, 40301);
        assert.equal((await h.call('GET', GROUP, { token: reader.token })).status, 200);
      } finally {
        await keys.close();
      }
      expectError(await reset({ to: 'latest' }, null), 401, 40101);
    });

    it('deletes a stopped group: its offsets are gone and it is unknown afterwards', async () => {
      assert.equal((await h.call('DELETE', GROUP)).status, 204);
      expectError(await h.call('GET', GROUP), 404, 40403);
      assert.deepEqual((await h.call('GET', '/streams/consumer-groups')).body.consumer_groups, []);
      expectError(await reset({ to: 'earliest' }), 404, 40403);
      expectError(await h.call('DELETE', GROUP), 404, 40403);
      // A member joining the name again starts from its auto.offset.reset, not from old commits.
      const { base, seen } = await consumeAll('c3', 8);
      assert.equal(seen.length, 8);
      assert.equal((await h.call('DELETE', base)).status, 204);
    });
  });
}

groupAdminSuite('lmdb', () => startHarness({ STREAMS_DEFAULT_PARTITIONS: '2' }));

groupAdminSuite(
  'jetstream',
  () => startJetStreamHarness({ STREAMS_DEFAULT_PARTITIONS: '2' }),
  natsAvailable ? undefined : 'nats-server not installed',
);
