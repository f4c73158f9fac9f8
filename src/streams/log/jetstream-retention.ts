// Retention for the JetStream log: the same rules as on LMDB (lmdb-retention-store.ts), applied by the
// service rather than by the stream's own max_age / max_bytes. A JetStream limit would remove a
// partition's last message too, and that message is the only record of where the partition's
// offsets continue (its Sluice-Base + Sluice-Count), so an emptied stream would start again at
// offset 0. Instead each pass walks the first messages, decides where to cut, and removes
// everything before it with one purge request (`{seq}`: every message below it), never the last
// message. Passes on several nodes may overlap: a purge up to a sequence is idempotent.

import type { JetStreamManager } from '@nats-io/jetstream';
import { newestTimestamp } from './codec.js';
import type { PartitionLog } from './jetstream-partition.js';
import type { TopicConfigs } from './types.js';

/** Messages looked at per partition and pass (the next pass goes on from there). */
const MAX_WALK = 512;
/**
 * What JetStream stores per message besides the batch: subject, the Sluice-Base / Sluice-Count /
 * Nats-Msg-Id headers and its own framing — about this many bytes.
 */
const MESSAGE_OVERHEAD = 160;

export interface JetStreamTrimmed {
  readonly records: number;
  readonly bytes: number;
  readonly beginning: number;
}

export async function trimPartition(
  part: PartitionLog,
  jsm: JetStreamManager,
  configs: TopicConfigs,
  now: number,
): Promise<JetStreamTrimmed> {
  const oldest = configs.retentionMs >= 0 ? now - configs.retentionMs : -Infinity;
  const state = await part.streamState();
  if (state.messages <= 1) return { records: 0, bytes: 0, beginning: await part.beginningOffset() };
  let size = state.bytes;
  let records = 0;
  let bytes = 0;
  let cut = state.firstSeq;
  let cutBase: number | undefined;
  // The last message always stays.
  for (let seq = state.firstSeq; seq < state.lastSeq && seq - state.firstSeq < MAX_WALK; seq++) {
    const batch = await part.message(seq);
    if (!batch) break; // removed by another node's pass meanwhile; the next pass goes on
    const stored = batch.data.length + part.subject.length + MESSAGE_OVERHEAD;
    const expired = newestTimestamp(batch.data) < oldest;
    const oversize = configs.retentionBytes >= 0 && size - stored >= configs.retentionBytes;
    if (!expired && !oversize) {
      cutBase = batch.base;
      break;
    }
    records += batch.count;
    bytes += stored;
    size -= stored;
    cut = seq + 1;
    cutBase = batch.base + batch.count;
  }
  if (cut === state.firstSeq) return { records: 0, bytes: 0, beginning: await part.beginningOffset() };
  await jsm.streams.purge(part.stream, { seq: cut });
  return { records, bytes, beginning: part.moveBeginning(cutBase!, cut) };
}
