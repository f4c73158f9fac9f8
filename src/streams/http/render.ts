// Consumed records as a JSON answer. Values are stored as UTF-8 JSON text and copied byte for
// byte into the answer: a fetch never parses, stringifies or re-encodes a value, it only
// formats the few fields around it.

import type { ConsumedRecord } from '../groups/coordinator.js';

/** A record to render; `keyJson` is a key to write as this JSON text instead of a string. */
export type RenderRecord = ConsumedRecord & { readonly keyJson?: string };

/** `[record, …]` as UTF-8 bytes, optionally wrapped as `<before>[…]<after>`. */
export function renderRecords(records: readonly RenderRecord[], before = '', after = ''): Buffer {
  const heads = new Array<string>(records.length);
  const tails = new Array<string>(records.length);
  let size = Buffer.byteLength(before) + Buffer.byteLength(after) + 2 + Math.max(0, records.length - 1);
  let lastTopic: string | undefined;
  let topicJson = '';
  for (let i = 0; i < records.length; i++) {
    const { topic, record, keyJson } = records[i]!;
    if (topic !== lastTopic) {
      lastTopic = topic;
      topicJson = JSON.stringify(topic);
    }
    const key = keyJson ?? (record.key === null ? 'null' : JSON.stringify(record.key));
    const headers = record.headers ? `,"headers":${JSON.stringify(record.headers)}` : '';
    heads[i] = `{"topic":${topicJson},"key":${key},"value":`;
    tails[i] =
      `,"partition":${record.partition},"offset":${record.offset},"timestamp":${record.timestamp}${headers}}`;
    size += Buffer.byteLength(heads[i]!) + record.value.length + Buffer.byteLength(tails[i]!);
  }
  const out = Buffer.allocUnsafe(size);
  let at = out.write(before, 0);
  at += out.write('[', at);
  for (let i = 0; i < records.length; i++) {
    if (i > 0) at += out.write(',', at);
    at += out.write(heads[i]!, at);
    at += records[i]!.record.value.copy(out, at);
    at += out.write(tails[i]!, at);
  }
  at += out.write(']', at);
  at += out.write(after, at);
  return out.subarray(0, at);
}
