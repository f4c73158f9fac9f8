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
// Two callgrind runs that differ only in `n` give instructions per request, whatever the
// machine's load (docs/benchmarks.md, "Instruction counts"). Bundle it first:
//   npx esbuild bench/callgrind/streams-produce.ts --bundle --platform=node --format=cjs \
//     --outfile=/tmp/streams-produce.cjs
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null --smc-check=all-non-file \
//     node --single-threaded /tmp/streams-produce.cjs <mode> <n> <warm>

import { scanProduce } from '../../src/streams/http/produce-scan.js';
import { parseProduce } from '../../src/streams/http/validate.js';
import { encodeBatch } from '../../src/streams/log/codec.js';
import type { TopicInfo } from '../../src/streams/log/types.js';

const [mode = 'bytes', n = '10', warm = '50'] = process.argv.slice(2);
if (mode !== 'bytes' && mode !== 'stringify' && mode !== 'scan' && mode !== 'ceiling')
  throw new Error(`mode must be scan, bytes, stringify or ceiling, got ${mode}`);

const records = Array.from({ length: 1000 }, (_, i) => ({
  key: `user-${i}`,
  value: { id: i, kind: 'order', pad: 'x'.repeat(60) },
}));
const body = Buffer.from(JSON.stringify({ records }));
const topic: TopicInfo = {
  name: 'bench',
  id: 1,
  partitions: 4,
  createdAt: 0,
  configs: { retentionMs: -1, retentionBytes: -1 },
};
const limits = { maxRecordsPerBatch: 10_000, maxRecordBytes: 1024 * 1024 };

let sink = 0;
function request(): void {
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
