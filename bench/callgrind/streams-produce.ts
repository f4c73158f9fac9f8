// Instruction-count driver for the CPU of one streams produce request past HTTP (not a tinybench
// file): the body parsed, its records checked, the batch encoded, for `n` requests of 1000
// records of about 100 B after `warm` of them. Modes:
//   stringify  each value serialised again from the parsed body (JSON.stringify)
//   bytes      each value's bytes taken from the body as sent (value-spans.ts) after JSON.parse,
//              as the /streams produce route did before produce-scan.ts
//   scan       the body read in one pass without JSON.parse (produce-scan.ts), as the /streams
//              produce route does
//   ceiling    what the load tests' jetstream-publish ceiling does with a body before publishing
//              it: JSON.parse, then JSON.stringify of the records' values as one array
//   route      the /streams produce route's synchronous work: the one-pass read, the partitions
//              chosen, the records handed to a log that encodes one batch per partition as both
//              logs do (appendRecords in produce.ts) — everything before the publish or the put
// A fourth argument `unkeyed` sends the load tests' body shape (no keys: one partition per
// request) instead of records keyed `user-<i>` (bench/fixtures/produce-body.ts).
// Two callgrind runs that differ only in `n` give instructions per request, whatever the
// machine's load (docs/benchmarks.md, "Instruction counts"). Bundle it first:
//   npx esbuild bench/callgrind/streams-produce.ts --bundle --platform=node --format=cjs \
//     --outfile=/tmp/streams-produce.cjs
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null --smc-check=all-non-file \
//     node --single-threaded /tmp/streams-produce.cjs <mode> <n> <warm> [keyed|unkeyed]

import { appendRecords } from '../../src/streams/http/produce.js';
import { scanProduce } from '../../src/streams/http/produce-scan.js';
import { parseProduce } from '../../src/streams/http/validate.js';
import { encodeBatch } from '../../src/streams/log/codec.js';
import { Partitioner } from '../../src/streams/log/partitioner.js';
import { partitionBatches, partitionOfEach } from '../../src/streams/log/partition-batches.js';
import type { RecordToStore, TopicInfo, TopicLog } from '../../src/streams/log/types.js';
import { produceBody } from '../fixtures/produce-body.js';

const [mode = 'bytes', n = '10', warm = '50', shape = 'keyed'] = process.argv.slice(2);
const MODES = ['bytes', 'stringify', 'scan', 'ceiling', 'route'];
if (!MODES.includes(mode)) throw new Error(`mode must be one of ${MODES.join(', ')}, got ${mode}`);
if (shape !== 'keyed' && shape !== 'unkeyed') throw new Error(`shape must be keyed or unkeyed, got ${shape}`);

const body = produceBody(1000, 100, shape === 'keyed');
const topic: TopicInfo = {
  name: 'bench',
  id: 1,
  partitions: 4,
  createdAt: 0,
  configs: { retentionMs: -1, retentionBytes: -1 },
};
const limits = { maxRecordsPerBatch: 10_000, maxRecordBytes: 1024 * 1024 };

let sink = 0;
const partitioner = new Partitioner();
/** What both logs do synchronously with an append: one encoded batch per partition. */
const log = {
  append(
    _topic: TopicInfo,
    records: readonly RecordToStore[],
    partitions?: readonly number[],
  ): Promise<number[]> {
    for (const batch of partitionBatches(records, partitionOfEach(records, partitions)))
      sink += encodeBatch(batch.records).length;
    return Promise.resolve([]);
  },
} as unknown as TopicLog;

function request(): void {
  if (mode === 'route') {
    const scanned = scanProduce(body, limits, 1_700_000_000_000);
    if (!scanned) throw new Error('the one-pass reader declined the body');
    sink += appendRecords(log, partitioner, topic, scanned.records).partitions.length;
    return;
  }
  if (mode === 'ceiling') {
    const parsed = JSON.parse(body.toString('utf8')) as { records: Array<{ value: unknown }> };
    sink += JSON.stringify(parsed.records.map((r) => r.value)).length;
    return;
  }
  const scanned = mode === 'scan' ? scanProduce(body, limits, 1_700_000_000_000) : undefined;
  if (mode === 'scan' && !scanned) throw new Error('the one-pass reader declined the body');
  const parsed =
    scanned?.records ??
    parseProduce(
      JSON.parse(body.toString('utf8')),
      topic,
      limits,
      1_700_000_000_000,
      undefined,
      mode === 'bytes' ? body : undefined,
    );
  sink += encodeBatch(parsed.map((r) => ({ ...r, partition: 0 }))).length;
}

for (let i = 0; i < Number(warm); i++) request();
for (let i = 0; i < Number(n); i++) request();
if (sink < 0) console.log(sink);
