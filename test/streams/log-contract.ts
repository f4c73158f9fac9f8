// The TopicLog contract: every backend gives the same answers to the same calls. Run by
// log-lmdb.test.ts and log-jetstream.test.ts. A fixture opens the backend's log (again after a
// close, on the same stored data); backends shared by several nodes also open a second node's
// view of the same log, for the cross-node cases.

import { describe, it, before, after } from 'node:test';
import { strict as assert } from 'node:assert';
import { StreamsError } from '../../src/streams/errors.js';
import type { AppendRecord, StoredRecord, TopicInfo, TopicLog } from '../../src/streams/log/types.js';
import { waitUntil, withinHang } from '../helpers/wait.js';

export interface LogFixture {
  /** Opens the log on the fixture's storage (the same data after a close). */
  open(): Promise<TopicLog>;
  /** Backends shared by several nodes: another node's log on the same storage. */
  openPeer?: () => Promise<TopicLog>;
  /** Removes the storage; the logs are closed by then. */
  destroy(): Promise<void>;
}

const ALL = { maxRecords: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER, atLeastOne: true };

const record = (partition: number, value: unknown, extra: Partial<AppendRecord> = {}): AppendRecord => ({
  partition,
  key: null,
  valueJson: JSON.stringify(value),
  timestamp: 1_700_000_000_000,
  headers: null,
  ...extra,
});

const valueOf = (r: StoredRecord): any => JSON.parse(r.value.toString('utf8'));

const isStreamsError = (status: number, code: number) => (e: unknown) =>
  e instanceof StreamsError && e.status === status && e.errorCode === code;

let unique = 0;
/** Topic names unique per run: a shared backend may keep data of earlier runs in other tests. */
const name = (base: string): string => `${base}-${process.pid}-${++unique}`;

export function runTopicLogContract(backend: string, makeFixture: () => Promise<LogFixture>): void {
  describe(`TopicLog contract: ${backend}`, () => {
    let fixture: LogFixture;
    let log: TopicLog;
    before(async () => {
      fixture = await makeFixture();
      log = await fixture.open();
    });
    after(async () => {
      await log?.close();
      await fixture?.destroy();
    });

    it('creates topics once; lists them by name; describes them', async () => {
      const a = name('b-topic');
      const b = name('a-topic');
      const info = await log.createTopic(a, 3);
      assert.equal(info.name, a);
      assert.equal(info.partitions, 3);
      assert.ok(Number.isInteger(info.id) && info.id > 0);
      assert.ok(Math.abs(info.createdAt - Date.now()) < 24 * 3600_000, 'createdAt is a wall-clock time');
      await log.createTopic(b, 1);
      assert.deepEqual(log.topic(a), info);
      assert.equal(log.topic(name('missing')), undefined);
      const names = log.topics().map((t) => t.name);
      assert.ok(names.includes(a) && names.includes(b));
      assert.deepEqual(names, [...names].sort());
      assert.notEqual(log.topic(b)!.id, info.id);
      await assert.rejects(log.createTopic(a, 1), isStreamsError(400, 40002));
      // Two creations of one name at once: exactly one wins.
      const same = name('race');
      const results = await Promise.allSettled([log.createTopic(same, 1), log.createTopic(same, 2)]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const lost = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      assert.ok(isStreamsError(400, 40002)(lost.reason), String(lost.reason));
    });

    it('a new partition is empty: beginning 0, end 0, nothing to read', async () => {
      const topic = await log.createTopic(name('empty'), 2);
      for (const p of [0, 1]) {
        assert.equal(await log.beginningOffset(topic, p), 0);
        assert.equal(await log.endOffset(topic, p), 0);
        assert.deepEqual(await log.read(topic, p, 0, ALL), []);
        assert.deepEqual(await log.read(topic, p, 5, ALL), []);
      }
    });

    it('append answers offsets in request order, contiguous per partition from 0', async () => {
      const topic = await log.createTopic(name('offsets'), 3);
      const first = await log.append(topic, [record(0, { n: 0 }), record(2, { n: 1 }), record(0, { n: 2 })]);
      assert.deepEqual(first, [0, 0, 1]);
      const second = await log.append(topic, [record(2, { n: 3 }), record(0, { n: 4 }), record(0, { n: 5 })]);
      assert.deepEqual(second, [1, 2, 3]);
      assert.equal(await log.endOffset(topic, 0), 4);
      assert.equal(await log.endOffset(topic, 1), 0);
      assert.equal(await log.endOffset(topic, 2), 2);
      const p0 = await log.read(topic, 0, 0, ALL);
      assert.deepEqual(
        p0.map((r) => [r.partition, r.offset, valueOf(r).n]),
        [
          [0, 0, 0],
          [0, 1, 2],
          [0, 2, 4],
          [0, 3, 5],
        ],
      );
      const p2 = await log.read(topic, 2, 0, ALL);
      assert.deepEqual(
        p2.map((r) => [r.partition, r.offset, valueOf(r).n]),
        [
          [2, 0, 1],
          [2, 1, 3],
        ],
      );
    });

    it('records come back with key, headers, timestamp and the exact value text', async () => {
      const topic = await log.createTopic(name('fields'), 1);
      const sent: AppendRecord[] = [
        record(0, null, { valueJson: '{"a":1,  "spaced" : [1, 2]}' }),
        record(0, null, {
          key: 'ключ ✓',
          valueJson: '{"s":"ü"}',
          timestamp: 42,
          headers: [
            { key: 'h', value: null },
            { key: 'h', value: 'again' },
          ],
        }),
        record(0, null, { key: '', valueJson: '{}' }),
      ];
      await log.append(topic, sent);
      const back = await log.read(topic, 0, 0, ALL);
      assert.equal(back.length, 3);
      back.forEach((r, i) => {
        assert.equal(r.offset, i);
        assert.equal(r.key, sent[i]!.key);
        assert.equal(r.value.toString('utf8'), sent[i]!.valueJson);
        assert.equal(r.timestamp, sent[i]!.timestamp);
        assert.deepEqual(r.headers, sent[i]!.headers);
        assert.ok(r.size >= Buffer.byteLength(sent[i]!.valueJson));
      });
    });

    it('reads start at any offset (also inside a batch) and keep to the limits', async () => {
      const topic = await log.createTopic(name('limits'), 1);
      for (let b = 0; b < 5; b++) {
        await log.append(
          topic,
          Array.from({ length: 4 }, (_, i) => record(0, { n: b * 4 + i, pad: 'x'.repeat(50) })),
        );
      }
      const ns = (rs: StoredRecord[]): number[] => rs.map((r) => valueOf(r).n as number);
      assert.deepEqual(
        ns(await log.read(topic, 0, 6, ALL)),
        Array.from({ length: 14 }, (_, i) => 6 + i),
      );
      assert.deepEqual(ns(await log.read(topic, 0, 6, { ...ALL, maxRecords: 5 })), [6, 7, 8, 9, 10]);
      assert.deepEqual(ns(await log.read(topic, 0, 19, ALL)), [19]);
      assert.deepEqual(await log.read(topic, 0, 20, ALL), []);
      assert.deepEqual(await log.read(topic, 0, 1000, ALL), []);
      assert.deepEqual(await log.read(topic, 0, 0, { ...ALL, maxRecords: 0 }), []);
      const size = (await log.read(topic, 0, 0, ALL))[0]!.size;
      // Byte budget: whole records only; the first one even when it alone is too big.
      assert.deepEqual(ns(await log.read(topic, 0, 3, { ...ALL, maxBytes: size * 3 + 1 })), [3, 4, 5]);
      assert.deepEqual(ns(await log.read(topic, 0, 3, { ...ALL, maxBytes: 1 })), [3]);
      assert.deepEqual(await log.read(topic, 0, 3, { ...ALL, maxBytes: 1, atLeastOne: false }), []);
      // Successive reads continue where the previous one stopped.
      const seen: number[] = [];
      for (let at = 0; at < 20;) {
        const part = await log.read(topic, 0, at, { ...ALL, maxRecords: 3 });
        assert.ok(part.length > 0);
        seen.push(...ns(part));
        at = part[part.length - 1]!.offset + 1;
      }
      assert.deepEqual(
        seen,
        Array.from({ length: 20 }, (_, i) => i),
      );
      // And reads from the middle after appends made later.
      await log.append(topic, [record(0, { n: 20 })]);
      assert.deepEqual(ns(await log.read(topic, 0, 18, ALL)), [18, 19, 20]);
    });

    it('20 concurrent appenders to one partition get contiguous unique offsets holding their records', async () => {
      const topic = await log.createTopic(name('contended'), 1);
      const sent = new Map<number, string>();
      await Promise.all(
        Array.from({ length: 20 }, async (_, p) => {
          for (let round = 0; round < 5; round++) {
            const values = Array.from({ length: 3 }, (_, i) => ({ p, round, i }));
            const offsets = await log.append(
              topic,
              values.map((v) => record(0, v)),
            );
            assert.deepEqual(
              offsets,
              [offsets[0]!, offsets[0]! + 1, offsets[0]! + 2],
              'one batch is contiguous',
            );
            offsets.forEach((o, i) => sent.set(o, JSON.stringify(values[i])));
          }
        }),
      );
      assert.deepEqual(
        [...sent.keys()].sort((a, b) => a - b),
        Array.from({ length: 300 }, (_, i) => i),
      );
      const stored = await log.read(topic, 0, 0, ALL);
      assert.deepEqual(
        stored.map((r) => r.offset),
        Array.from({ length: 300 }, (_, i) => i),
      );
      for (const r of stored) assert.equal(r.value.toString('utf8'), sent.get(r.offset));
      assert.equal(await log.endOffset(topic, 0), 300);
    });

    it('onAppend reports each partition end once the records are readable; unsubscribing stops it', async () => {
      const topic = await log.createTopic(name('listen'), 2);
      const seen: Array<[string, number, number]> = [];
      const readable: boolean[] = [];
      const stop = log.onAppend((t, p, end) => {
        if (t.name !== topic.name) return;
        seen.push([t.name, p, end]);
        void log.read(t, p, end - 1, ALL).then((rs) => readable.push(rs.length > 0));
      });
      await log.append(topic, [record(1, { a: 1 }), record(1, { a: 2 })]);
      await log.append(topic, [record(0, { a: 3 })]);
      await waitUntil('both ends reported', () => seen.length >= 2);
      assert.deepEqual(
        seen.filter((s) => s[1] === 1).map((s) => s[2]),
        [2],
      );
      assert.deepEqual(
        seen.filter((s) => s[1] === 0).map((s) => s[2]),
        [1],
      );
      await waitUntil('reads from the listener', () => readable.length >= 2);
      assert.deepEqual(readable, [true, true]);
      stop();
      const before = seen.length;
      await log.append(topic, [record(0, { a: 4 })]);
      assert.equal(seen.length, before);
    });

    it('a partition out of range is refused without storing anything', async () => {
      const topic = await log.createTopic(name('range'), 2);
      await assert.rejects(log.append(topic, [record(0, { ok: 1 }), record(2, { bad: 1 })]), /out of range/);
      assert.equal(await log.endOffset(topic, 0), 0);
      assert.deepEqual(await log.append(topic, [record(0, { ok: 2 })]), [0]);
    });

    it('probe (readiness) resolves while the log is open and rejects once it is closed', async () => {
      await log.probe();
      const closed = await fixture.open();
      await closed.close();
      await assert.rejects(closed.probe(), /closed/);
    });

    it('after a close and reopen: topics, records and ends are there, and offsets continue', async () => {
      const topicName = name('durable');
      const topic = await log.createTopic(topicName, 2);
      await log.append(topic, [record(0, { n: 0 }), record(1, { n: 1 }), record(0, { n: 2 })]);
      await log.close();
      log = await fixture.open();
      const again = log.topic(topicName);
      assert.deepEqual(again, topic);
      assert.equal(await log.endOffset(again, 0), 2);
      assert.equal(await log.endOffset(again, 1), 1);
      assert.deepEqual(
        (await log.read(again, 0, 0, ALL)).map((r) => valueOf(r).n),
        [0, 2],
      );
      assert.deepEqual(await log.append(again, [record(0, { n: 3 }), record(1, { n: 4 })]), [2, 1]);
      await assert.rejects(log.createTopic(topicName, 1), isStreamsError(400, 40002));
    });

    describe('retention and removal', () => {
      const HOUR = 3600_000;
      /** What a pass removed from one topic (other tests' topics may be trimmed too). */
      const removedFrom = async (topicName: string, now: number) =>
        (await log.enforceRetention(now)).filter((r) => r.topic === topicName);

      it('retention.ms removes whole old batches from the front, keeps the newest batch; reads below are out of range', async () => {
        const now = Date.now();
        const topicName = name('aged');
        const topic = await log.createTopic(topicName, 2, { retentionMs: HOUR, retentionBytes: -1 });
        assert.deepEqual(topic.configs, { retentionMs: HOUR, retentionBytes: -1 });
        const old = now - 2 * HOUR;
        await log.append(topic, [
          record(0, { n: 0 }, { timestamp: old }),
          record(0, { n: 1 }, { timestamp: old }),
        ]);
        // A batch is as old as its newest record.
        await log.append(topic, [
          record(0, { n: 2 }, { timestamp: old }),
          record(0, { n: 3 }, { timestamp: now - HOUR / 2 }),
        ]);
        await log.append(topic, [record(0, { n: 4 }, { timestamp: old })]);
        await log.append(topic, [record(1, { n: 5 }, { timestamp: old })]);

        const first = await removedFrom(topicName, now);
        assert.equal(first.length, 1, JSON.stringify(first));
        assert.deepEqual(
          { partition: first[0]!.partition, records: first[0]!.records, beginning: first[0]!.beginning },
          { partition: 0, records: 2, beginning: 2 },
        );
        assert.ok(first[0]!.bytes > 0);
        assert.equal(await log.beginningOffset(topic, 0), 2);
        assert.equal(await log.endOffset(topic, 0), 5);
        // Partition 1's only batch is its newest: kept however old.
        assert.equal(await log.beginningOffset(topic, 1), 0);
        await assert.rejects(log.read(topic, 0, 0, ALL), isStreamsError(416, 416));
        await assert.rejects(log.read(topic, 0, 1, ALL), isStreamsError(416, 416));
        assert.deepEqual(
          (await log.read(topic, 0, 2, ALL)).map((r) => [r.offset, valueOf(r).n]),
          [
            [2, 2],
            [3, 3],
            [4, 4],
          ],
        );
        // Nothing more is due now; later the second batch is, but the newest stays.
        assert.deepEqual(await removedFrom(topicName, now), []);
        const second = await removedFrom(topicName, now + HOUR);
        assert.deepEqual(
          second.map((r) => [r.partition, r.records, r.beginning]),
          [[0, 2, 4]],
        );
        assert.deepEqual(
          (await log.read(topic, 0, 4, ALL)).map((r) => r.offset),
          [4],
        );

        // The beginning survives a restart, and offsets go on from the end.
        await log.close();
        log = await fixture.open();
        const again = log.topic(topicName)!;
        assert.deepEqual(again.configs, { retentionMs: HOUR, retentionBytes: -1 });
        assert.equal(await log.beginningOffset(again, 0), 4);
        assert.equal(await log.endOffset(again, 0), 5);
        await assert.rejects(log.read(again, 0, 3, ALL), isStreamsError(416, 416));
        assert.deepEqual(await log.append(again, [record(0, { n: 6 })]), [5]);
      });

      it('retention.bytes cuts each partition back to about that many bytes', async () => {
        const topicName = name('sized');
        const topic = await log.createTopic(topicName, 1, { retentionMs: -1, retentionBytes: 8_000 });
        const big = 'x'.repeat(1000);
        for (let i = 0; i < 30; i++)
          await log.append(topic, [record(0, { i, big }, { timestamp: Date.now() })]);
        const removed = await removedFrom(topicName, Date.now());
        assert.equal(removed.length, 1);
        const beginning = await log.beginningOffset(topic, 0);
        assert.equal(removed[0]!.beginning, beginning);
        assert.equal(removed[0]!.records, beginning);
        // Each batch holds one record of a bit over 1 KB: about 8 are kept, never fewer than
        // the bound allows.
        const kept = 30 - beginning;
        assert.ok(kept >= 5 && kept <= 9, `kept ${kept} batches`);
        assert.equal((await log.read(topic, 0, beginning, ALL)).length, kept);
        assert.deepEqual(await removedFrom(topicName, Date.now()), []);
      });

      it('updateTopic changes the configs; the next pass applies them', async () => {
        const topicName = name('changed');
        const topic = await log.createTopic(topicName, 1);
        assert.deepEqual(topic.configs, { retentionMs: -1, retentionBytes: -1 });
        const old = Date.now() - 10 * HOUR;
        for (let i = 0; i < 3; i++) await log.append(topic, [record(0, { i }, { timestamp: old })]);
        assert.deepEqual(await removedFrom(topicName, Date.now()), []);
        const updated = await log.updateTopic(topicName, { retentionMs: HOUR, retentionBytes: -1 });
        assert.deepEqual(updated.configs, { retentionMs: HOUR, retentionBytes: -1 });
        assert.equal(updated.id, topic.id);
        assert.deepEqual(log.topic(topicName)!.configs, updated.configs);
        const removed = await removedFrom(topicName, Date.now());
        assert.deepEqual(
          removed.map((r) => [r.records, r.beginning]),
          [[2, 2]],
        );
        // The topic object from before the change still reads.
        assert.equal((await log.read(topic, 0, 2, ALL)).length, 1);
        await assert.rejects(
          log.updateTopic(name('missing'), { retentionMs: 1, retentionBytes: 1 }),
          isStreamsError(404, 40401),
        );
      });

      it('deleteTopic removes the topic and its records; created again it starts at offset 0', async () => {
        const topicName = name('removed');
        const topic = await log.createTopic(topicName, 2);
        await log.append(topic, [record(0, { n: 0 }), record(0, { n: 1 }), record(1, { n: 2 })]);
        await log.deleteTopic(topicName);
        assert.equal(log.topic(topicName), undefined);
        assert.ok(!log.topics().some((t) => t.name === topicName));
        await assert.rejects(log.read(topic, 0, 0, ALL), isStreamsError(404, 40401));
        await assert.rejects(log.append(topic, [record(0, { n: 3 })]), isStreamsError(404, 40401));
        await assert.rejects(log.endOffset(topic, 0), isStreamsError(404, 40401));
        await assert.rejects(log.deleteTopic(topicName), isStreamsError(404, 40401));
        const again = await log.createTopic(topicName, 1);
        assert.notEqual(again.id, topic.id);
        assert.equal(await log.beginningOffset(again, 0), 0);
        assert.equal(await log.endOffset(again, 0), 0);
        assert.deepEqual(await log.append(again, [record(0, { n: 4 })]), [0]);
        assert.deepEqual(
          (await log.read(again, 0, 0, ALL)).map((r) => valueOf(r).n),
          [4],
        );
        // After a restart the removed topic stays removed and the new one keeps its records.
        await log.close();
        log = await fixture.open();
        const reopened = log.topic(topicName)!;
        assert.equal(reopened.id, again.id);
        assert.deepEqual(
          (await log.read(reopened, 0, 0, ALL)).map((r) => valueOf(r).n),
          [4],
        );
        const third = await log.createTopic(name('after-removal'), 1);
        assert.ok(third.id > again.id, 'ids of removed topics are not given again');
      });
    });

    describe('several nodes on one log', () => {
      let peer: TopicLog | undefined;
      before(async () => {
        if (fixture.openPeer) peer = await fixture.openPeer();
      });
      after(async () => {
        await peer?.close();
      });

      it('a topic created on one node is seen and refused on the other', async (t) => {
        if (!peer) return t.skip(`${backend} is one node's log`);
        const topicName = name('shared');
        const topic = await log.createTopic(topicName, 2);
        const seen = await waitUntil('the topic on the peer', () => peer!.topic(topicName));
        assert.deepEqual(seen, topic);
        await assert.rejects(peer.createTopic(topicName, 1), isStreamsError(400, 40002));
        // Created on both at once: one wins.
        const both = name('both');
        const results = await Promise.allSettled([log.createTopic(both, 1), peer.createTopic(both, 1)]);
        assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      });

      it('two nodes appending to one partition at once get contiguous unique offsets', async (t) => {
        if (!peer) return t.skip(`${backend} is one node's log`);
        const topicName = name('two-writers');
        const topic = await log.createTopic(topicName, 1);
        const peerTopic = await waitUntil('the topic on the peer', () => peer!.topic(topicName));
        const sent = new Map<number, string>();
        // Batches of different sizes on the two nodes, so an append placed at the wrong offset
        // shows up as a gap or an overlap.
        const writer = (node: TopicLog, t2: TopicInfo, who: string, size: number) =>
          Promise.all(
            Array.from({ length: 5 }, async (_, w) => {
              for (let round = 0; round < 10; round++) {
                const values = Array.from({ length: size }, (_, i) => ({ who, w, round, i }));
                const offsets = await node.append(
                  t2,
                  values.map((v) => record(0, v)),
                );
                offsets.forEach((o, i) => assert.equal(o, offsets[0]! + i));
                offsets.forEach((o, i) => {
                  assert.ok(!sent.has(o), `offset ${o} given twice`);
                  sent.set(o, JSON.stringify(values[i]));
                });
              }
            }),
          );
        await Promise.all([writer(log, topic, 'a', 2), writer(peer, peerTopic, 'b', 3)]);
        assert.equal(sent.size, 250);
        for (const node of [log, peer]) {
          const stored = await node.read(node === log ? topic : peerTopic, 0, 0, ALL);
          assert.deepEqual(
            stored.map((r) => r.offset),
            Array.from({ length: 250 }, (_, i) => i),
          );
          for (const r of stored) assert.equal(r.value.toString('utf8'), sent.get(r.offset));
        }
        assert.equal(await peer.endOffset(peerTopic, 0), 250);
      });

      it('config changes, trims and removals made on one node are seen on the other', async (t) => {
        if (!peer) return t.skip(`${backend} is one node's log`);
        const topicName = name('shared-admin');
        const topic = await log.createTopic(topicName, 1);
        await waitUntil('the topic on the peer', () => peer!.topic(topicName));
        const old = Date.now() - 10 * 3600_000;
        for (let i = 0; i < 3; i++) await log.append(topic, [record(0, { i }, { timestamp: old })]);
        await log.updateTopic(topicName, { retentionMs: 3600_000, retentionBytes: -1 });
        const changed = await waitUntil(
          'the new configs on the peer',
          () => peer!.topic(topicName)?.configs.retentionMs === 3600_000 && peer!.topic(topicName),
        );
        // The peer's pass trims what the first node wrote; the first node sees the new beginning.
        const removed = (await peer.enforceRetention(Date.now())).filter((r) => r.topic === topicName);
        assert.deepEqual(
          removed.map((r) => r.beginning),
          [2],
        );
        assert.equal(await log.beginningOffset(topic, 0), 2);
        await assert.rejects(log.read(topic, 0, 0, ALL), isStreamsError(416, 416));
        await log.deleteTopic(topicName);
        await waitUntil('the removal on the peer', () => peer!.topic(topicName) === undefined);
        await assert.rejects(peer.read(changed, 0, 2, ALL), isStreamsError(404, 40401));
        const again = await peer.createTopic(topicName, 1);
        await waitUntil('the new topic on the first node', () => log.topic(topicName)?.id === again.id);
        assert.equal(await log.endOffset(log.topic(topicName)!, 0), 0);
      });

      it("onAppend fires for the other node's appends", async (t) => {
        if (!peer) return t.skip(`${backend} is one node's log`);
        const topicName = name('wake');
        const topic = await log.createTopic(topicName, 2);
        const peerTopic = await waitUntil('the topic on the peer', () => peer!.topic(topicName));
        const ends: number[] = [];
        const stop = peer.onAppend((tp, p, end) => {
          if (tp.name === topicName && p === 1) ends.push(end);
        });
        try {
          await log.append(topic, [record(1, { a: 1 }), record(1, { a: 2 })]);
          await withinHang(
            'the peer to hear of the append',
            waitUntil('end 2 on the peer', () => ends.includes(2)),
          );
          assert.equal((await peer.read(peerTopic, 1, 0, ALL)).length, 2);
        } finally {
          stop();
        }
      });
    });
  });
}
