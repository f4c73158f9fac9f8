// Streams hot paths against raw LMDB measured in the same run:
// - encode/decode/render of one record vs copying its bytes (the least a record can cost);
// - durable append of 1000-record batches through LmdbTopicLog (encode + offsets + group commit
//   + fsync) vs raw lmdb-js un-awaited puts of the same pre-encoded record bytes, one entry per
//   record, committed and flushed (the per-record layout the log avoids by storing batches);
// - reading 1000 records back through the log (+ rendering the JSON answer) vs a raw getRange
//   over the same record bytes stored one entry per record.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Database, RootDatabase } from 'lmdb';
import { renderRecords } from '../src/streams/http/render.js';
import { decodeRecord, encodeRecord, recordKey } from '../src/streams/log/codec.js';
import { encodeBatch } from '../src/streams/log/codec.js';
import { LmdbTopicLog } from '../src/streams/log/lmdb.js';
import { parseProduce } from '../src/streams/http/validate.js';
import { KEEP_EVERYTHING, type AppendRecord, type TopicInfo } from '../src/streams/log/types.js';
import { openStreamsEnvironment } from '../src/streams/storage.js';
import { produceBody } from './fixtures/produce-body.js';
import type { BenchFile, BenchSuite } from './types.js';

const BATCH = 1000;
const CODEC_OPS = 256;

function sampleRecord(valueBytes: number, i: number): AppendRecord & { valueJson: string } {
  const pad = 'x'.repeat(Math.max(0, valueBytes - 40));
  return {
    partition: 0,
    key: `user-${i}`,
    valueJson: JSON.stringify({ id: i, kind: 'order', pad }),
    timestamp: 1_700_000_000_000 + i,
    headers: null,
  };
}

type Flushable = Promise<unknown> & { flushed?: Promise<unknown> };

function appendSuite(valueBytes: number): BenchSuite {
  let dir = '';
  let root: RootDatabase;
  let raw: Database<Buffer, Buffer>;
  let log: LmdbTopicLog;
  let topic: TopicInfo;
  const records = Array.from({ length: BATCH }, (_, i) => sampleRecord(valueBytes, i));
  const encoded = records.map(encodeRecord);
  let rawOffset = 0;
  return {
    name: `streams durable append, ${BATCH} × ${valueBytes} B per batch`,
    description: `LmdbTopicLog.append (encode, offsets, one batch entry, group commit, fsync) vs raw lmdb-js un-awaited puts of the same encoded record bytes one entry per record, committed and flushed; ops = records`,
    ceiling: 'raw LMDB batched put, same bytes',
    setup: async () => {
      dir = mkdtempSync(join(tmpdir(), 'sluice-bench-append-'));
      root = openStreamsEnvironment(dir);
      raw = root.openDB<Buffer, Buffer>({ name: 'raw', keyEncoding: 'binary', encoding: 'binary' });
      log = new LmdbTopicLog(root);
      topic = await log.createTopic('bench', 1);
    },
    teardown: async () => {
      await log.close();
      await root.close();
      rmSync(dir, { recursive: true, force: true });
    },
    tasks: {
      'raw LMDB batched put, same bytes': {
        opsPerCall: BATCH,
        fn: async () => {
          let last: Flushable | undefined;
          for (let i = 0; i < BATCH; i++) last = raw.put(recordKey(9, 0, rawOffset++), encoded[i]!);
          await last;
          await last!.flushed;
        },
      },
      'LmdbTopicLog.append': {
        opsPerCall: BATCH,
        fn: async () => {
          await log.append(topic, records);
        },
      },
      'LmdbTopicLog.append, 4 concurrent batches': {
        opsPerCall: 4 * BATCH,
        fn: async () => {
          await Promise.all([
            log.append(topic, records),
            log.append(topic, records),
            log.append(topic, records),
            log.append(topic, records),
          ]);
        },
      },
    },
  };
}

function readSuite(valueBytes: number): BenchSuite {
  let dir = '';
  let root: RootDatabase;
  let log: LmdbTopicLog;
  let topic: TopicInfo;
  let raw: Database<Buffer, Buffer>;
  let sink = 0;
  const limits = { maxRecords: BATCH, maxBytes: Number.MAX_SAFE_INTEGER, atLeastOne: true };
  return {
    name: `streams read, ${BATCH} × ${valueBytes} B per call`,
    description:
      'LmdbTopicLog.read (range + decode) and read + JSON rendering vs a raw lmdb-js getRange over the same keys; ops = records',
    ceiling: 'raw LMDB getRange',
    setup: async () => {
      dir = mkdtempSync(join(tmpdir(), 'sluice-bench-read-'));
      root = openStreamsEnvironment(dir);
      log = new LmdbTopicLog(root);
      raw = root.openDB<Buffer, Buffer>({ name: 'raw', keyEncoding: 'binary', encoding: 'binary' });
      topic = await log.createTopic('bench', 1);
      const records = Array.from({ length: BATCH }, (_, i) => sampleRecord(valueBytes, i));
      for (let i = 0; i < 10; i++) await log.append(topic, records);
      let last: Promise<unknown> | undefined;
      for (let i = 0; i < BATCH; i++) last = raw.put(recordKey(topic.id, 0, i), encodeRecord(records[i]!));
      await last;
    },
    teardown: async () => {
      if (sink < 0) console.log(sink);
      await log.close();
      await root.close();
      rmSync(dir, { recursive: true, force: true });
    },
    tasks: {
      'raw LMDB getRange': {
        opsPerCall: BATCH,
        fn: () => {
          for (const { value } of raw.getRange({
            start: recordKey(topic.id, 0, 0),
            end: recordKey(topic.id, 0, BATCH),
          }))
            sink += value.length;
        },
      },
      'LmdbTopicLog.read': {
        opsPerCall: BATCH,
        fn: async () => {
          sink += (await log.read(topic, 0, 0, limits)).length;
        },
      },
      'read + render JSON answer': {
        opsPerCall: BATCH,
        fn: async () => {
          sink += renderRecords(
            (await log.read(topic, 0, 0, limits)).map((record) => ({ topic: 'bench', record })),
          ).length;
        },
      },
    },
  };
}

function codecSuite(valueBytes: number): BenchSuite {
  const record = sampleRecord(valueBytes, 1);
  const encoded = encodeRecord(record);
  const value = JSON.parse(record.valueJson) as unknown;
  let sink = 0;
  return {
    name: `streams record codec, ${valueBytes} B value`,
    description:
      'per-record CPU: stored-form encode/decode, the produce-side JSON.stringify and the consume-side render, vs copying the bytes',
    ceiling: 'Buffer copy of the encoded bytes',
    teardown: () => {
      if (sink < 0) console.log(sink);
    },
    tasks: {
      'Buffer copy of the encoded bytes': {
        opsPerCall: CODEC_OPS,
        fn: () => {
          for (let i = 0; i < CODEC_OPS; i++) sink += Buffer.from(encoded).length;
        },
      },
      encodeRecord: {
        opsPerCall: CODEC_OPS,
        fn: () => {
          for (let i = 0; i < CODEC_OPS; i++) sink += encodeRecord(record).length;
        },
      },
      decodeRecord: {
        opsPerCall: CODEC_OPS,
        fn: () => {
          for (let i = 0; i < CODEC_OPS; i++) sink += decodeRecord(encoded).value.length;
        },
      },
      'JSON.stringify value (produce)': {
        opsPerCall: CODEC_OPS,
        fn: () => {
          for (let i = 0; i < CODEC_OPS; i++) sink += JSON.stringify(value).length;
        },
      },
    },
  };
}

/**
 * The CPU of one produce request past HTTP: the body parsed, every record checked and its value
 * turned back into JSON text, the batch encoded — vs parsing the body alone (the least any JSON
 * API does with it). On a shared machine this CPU, not the log, bounds 1000-record produce.
 */
function produceRequestSuite(valueBytes: number): BenchSuite {
  const bytes = produceBody(BATCH, valueBytes);
  const body = bytes.toString('utf8');
  const topic: TopicInfo = { name: 'bench', id: 1, partitions: 4, createdAt: 0, configs: KEEP_EVERYTHING };
  const limits = { maxRecordsPerBatch: 10_000, maxRecordBytes: 1024 * 1024 };
  let sink = 0;
  return {
    name: `streams produce request, ${BATCH} × ${valueBytes} B`,
    description:
      'JSON.parse + parseProduce + encodeBatch of one request body (values serialised again, or taken from the body bytes) vs JSON.parse of it alone',
    ceiling: 'JSON.parse of the body',
    teardown: () => {
      if (sink < 0) console.log(sink);
    },
    tasks: {
      'JSON.parse of the body': () => {
        sink += (JSON.parse(body) as { records: unknown[] }).records.length;
      },
      'parse + validate + encode': () => {
        const records = parseProduce(JSON.parse(bytes.toString('utf8')), topic, limits, 1_700_000_000_000);
        sink += encodeBatch(records.map((r) => ({ ...r, partition: 0 }))).length;
      },
      // As the /streams produce route does: each value's bytes taken from the body as sent.
      'parse + validate + encode, values from the body bytes': () => {
        const text = bytes.toString('utf8');
        const records = parseProduce(JSON.parse(text), topic, limits, 1_700_000_000_000, undefined, bytes);
        sink += encodeBatch(records.map((r) => ({ ...r, partition: 0 }))).length;
      },
    },
  };
}

const bench: BenchFile = () => [
  produceRequestSuite(100),
  codecSuite(100),
  codecSuite(1024),
  appendSuite(100),
  appendSuite(1024),
  readSuite(100),
  readSuite(1024),
];

export default bench;
