// Appends to one partition from every server of a 3-server nats-server cluster at once
// (src/streams/log/jetstream-partition.ts): three writers, each on its own connection to its own
// server, append to one partition stream at the same moment, round after round. Every
// acknowledged append must own its offsets: all acknowledged offsets unique and, together,
// contiguous from 0, and reading the partition gives back exactly what each writer was told.
// nats-server 2.9 checks `Nats-Expected-Last-Sequence` only on the leader before it proposes, so
// without a message id naming the slot two appends at one expected sequence were both stored
// with the same base offset; the test counts the rounds where an offset was given twice.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import {
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
} from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { natsAvailable, startNatsCluster, type NatsCluster } from '../helpers/nats.js';
import { BatchCache } from '../../src/streams/log/jetstream-cache.js';
import { PartitionLog } from '../../src/streams/log/jetstream-partition.js';
import { encodeBatch } from '../../src/streams/log/codec.js';
import { isWrongLastSequence } from '../../src/streams/nats/api-codes.js';

const STREAM = 'slot_test';
const SUBJECT = 'slot.test';
const ROUNDS = 100;

function batch(values: string[]): Buffer {
  return encodeBatch(
    values.map((v) => ({
      partition: 0,
      key: null,
      valueJson: JSON.stringify(v),
      timestamp: 0,
      headers: null,
    })),
  );
}

describe(
  'appends to one partition from three servers at once',
  { skip: !natsAvailable && 'nats-server not installed' },
  () => {
    let cluster: NatsCluster;
    let connections: NatsConnection[] = [];

    before(async () => {
      cluster = await startNatsCluster(3);
      connections = await Promise.all(cluster.urls.map((servers) => connect({ servers })));
    });
    after(async () => {
      for (const nc of connections) await nc.close();
      await cluster?.stop();
    });

    /**
     * Three writers on one new partition stream, one per server. Each round, the first publish of
     * every writer waits until all three have one ready, so they reach the cluster together at the
     * same expected sequence (a barrier on events, not a pause); between rounds every writer learns
     * the tail the way nodes tell each other (`observed`).
     */
    const writers = async (stream: string, mergeBytes: number, tell = false) => {
      const jsm = await jetstreamManager(connections[0]!);
      await jsm.streams.add({
        name: stream,
        subjects: [`${SUBJECT}.${stream}`],
        num_replicas: 3,
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
      });
      let waiting: Array<() => void> = [];
      const gated = new Set<number>();
      const tail = { end: 0, seq: 0 };
      // With `tell`, writer 0 hears of the others' appends as a node does (`observed`), and gets
      // each answer to its own publish only once another writer's later message was heard of, or
      // the others are done with the round: the answer then arrives after the news.
      let othersDone = 0;
      let holds: Array<() => void> = [];
      const release = () => {
        const waiting = holds;
        holds = [];
        for (const check of waiting) check();
      };
      const holdAnswer = (seq: number) =>
        new Promise<void>((resolve) => {
          const check = () => {
            if (tail.seq > seq || othersDone === connections.length - 1) resolve();
            else holds.push(check);
          };
          check();
        });
      let logs: PartitionLog[] = [];
      let refused = 0;
      logs = await Promise.all(
        connections.map(async (nc, w) => {
          const js = jetstream(nc, { timeout: 5_000 });
          const barrier: JetStreamClient = Object.create(js);
          barrier.publish = async (...args: Parameters<JetStreamClient['publish']>) => {
            if (!gated.has(w)) {
              gated.add(w);
              await new Promise<void>((resolve) => {
                waiting.push(resolve);
                if (waiting.length === connections.length) {
                  for (const go of waiting) go();
                  waiting = [];
                }
              });
            }
            const ack = await js.publish(...args).catch((error: unknown) => {
              if (isWrongLastSequence(error)) refused++;
              throw error;
            });
            if (tell && w === 0) await holdAnswer(ack.seq);
            return ack;
          };
          let n = 0;
          return new PartitionLog(0, stream, `${SUBJECT}.${stream}`, {
            js: barrier,
            jsm: await jetstreamManager(nc),
            cache: new BatchCache(1 << 20),
            timeoutMs: 10_000,
            mergeBytes,
            nextMsgId: () => `w${w}.${++n}`,
            appended: (end, seq) => {
              if (seq > tail.seq) Object.assign(tail, { end, seq });
              if (tell && w !== 0) logs[0]!.observed(end, seq);
              release();
            },
          });
        }),
      );
      const nextRound = () => {
        gated.clear();
        othersDone = 0;
        for (const log of logs) log.observed(tail.end, tail.seq);
      };
      const doneInRound = (w: number) => {
        if (w !== 0) othersDone++;
        release();
      };
      return { logs, nextRound, doneInRound, refused: () => refused };
    };

    /** Runs the rounds; each writer appends `perRound` batches of `size(w)` records at once. */
    const race = async (
      { logs, nextRound, doneInRound, refused }: Awaited<ReturnType<typeof writers>>,
      perRound: number,
      t: { diagnostic(s: string): void },
    ) => {
      const owner = new Map<number, string>();
      let doubled = 0;
      const problems: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        let twice = false;
        nextRound();
        const acks = await Promise.all(
          logs.flatMap((log, w) =>
            Array.from({ length: perRound }, async (_, k) => {
              const values = Array.from({ length: w + 1 }, (_, i) => `r${round}-w${w}-k${k}-${i}`);
              const base = await log.append(batch(values), values.length).finally(() => {
                if (k === perRound - 1) doneInRound(w);
              });
              return { base, values };
            }),
          ),
        );
        for (const { base, values } of acks) {
          values.forEach((v, i) => {
            if (owner.has(base + i)) {
              twice = true;
              if (problems.length < 5) problems.push(`round ${round}: offset ${base + i} given twice`);
            }
            owner.set(base + i, v);
          });
        }
        if (twice) doubled++;
      }
      // How contested the rounds were: publishes refused for a stale expected sequence.
      t.diagnostic(`publishes refused as behind the tail: ${refused()}`);
      t.diagnostic(`rounds with an offset given twice: ${doubled} of ${ROUNDS}`);
      assert.deepEqual(problems, [], `rounds with an offset given twice: ${doubled} of ${ROUNDS}`);
      const total = ROUNDS * perRound * (1 + 2 + 3);
      assert.deepEqual(
        [...owner.keys()].sort((a, b) => a - b),
        Array.from({ length: total }, (_, i) => i),
        'acknowledged offsets are contiguous from 0',
      );
      // What is stored is what each writer was told, read by another writer.
      const stored = await logs[1]!.read(0, { maxRecords: total + 1, maxBytes: 1 << 30, atLeastOne: true });
      assert.equal(stored.length, total);
      for (const r of stored)
        assert.equal(JSON.parse(r.value.toString('utf8')), owner.get(r.offset), `offset ${r.offset}`);
      assert.equal(await logs[2]!.endOffset(), total);
    };

    test('one append per writer per round: each offset is given once', async (t) => {
      await race(await writers(`${STREAM}_one`, 1 << 20), 1, t);
    });

    test('three appends per writer per round, in flight together: each offset is given once', async (t) => {
      // mergeBytes 1: every append is its own message, several in flight on one partition.
      await race(await writers(`${STREAM}_pipelined`, 1), 3, t);
    });

    test('an append answered after news of a later append by another node keeps its own offset', async (t) => {
      await race(await writers(`${STREAM}_told`, 1 << 20, true), 1, t);
    });

    test('pipelined appends answered after news of later appends by another node keep their offsets', async (t) => {
      await race(await writers(`${STREAM}_told_pipelined`, 1, true), 3, t);
    });
  },
);
