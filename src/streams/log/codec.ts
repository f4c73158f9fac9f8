// The stored form of records. One LMDB entry holds a batch: the records one produce request
// sent to one partition, under the offset of its first record (Kafka's record batches). Per-entry
// cost in LMDB (a B-tree insert, a cursor step) is paid once per batch instead of per record.
//   batch:  u8 2 | u32 count | count × (u32 length | record)
//   record: u8 1 | f64 timestamp | u32 keyLength (0xffffffff = no key) | key utf8
//           | u32 headersLength (0 = none) | headers as JSON utf8 | value JSON utf8 (rest)
// A flat binary layout (not msgpack) because the value must come back as its exact JSON text.
// Storage key: u32 topicId | u32 partition | u64 base offset, big-endian so LMDB's byte order is
// (topic, partition, offset) order.

import type { AppendRecord, RecordHeader } from './types.js';

const VERSION = 1;
const NO_KEY = 0xffffffff;
const FIXED = 1 + 8 + 4 + 4;

export interface DecodedRecord {
  readonly key: string | null;
  /** The value's JSON text as UTF-8 bytes, copied straight into answers. */
  readonly value: Buffer;
  readonly timestamp: number;
  readonly headers: readonly RecordHeader[] | null;
}

/** The UTF-8 sizes of a record's parts, and its headers as JSON text. */
interface RecordSizes {
  keyBytes: number;
  headersJson: string;
  headerBytes: number;
  valueBytes: number;
}

function sizesOf(record: AppendRecord): RecordSizes {
  const headersJson = record.headers && record.headers.length > 0 ? JSON.stringify(record.headers) : '';
  return {
    keyBytes: record.key === null ? 0 : Buffer.byteLength(record.key, 'utf8'),
    headersJson,
    headerBytes: headersJson === '' ? 0 : Buffer.byteLength(headersJson, 'utf8'),
    valueBytes:
      typeof record.valueJson === 'string'
        ? Buffer.byteLength(record.valueJson, 'utf8')
        : record.valueJson.length,
  };
}

const encodedSize = (s: RecordSizes): number => FIXED + s.keyBytes + s.headerBytes + s.valueBytes;

/** Writes the record at `at` (room for encodedSize bytes); returns where it ends. */
function writeRecord(buf: Buffer, at: number, record: AppendRecord, s: RecordSizes): number {
  at = buf.writeUInt8(VERSION, at);
  at = buf.writeDoubleLE(record.timestamp, at);
  at = buf.writeUInt32LE(record.key === null ? NO_KEY : s.keyBytes, at);
  if (record.key !== null) at += buf.write(record.key, at, s.keyBytes, 'utf8');
  at = buf.writeUInt32LE(s.headerBytes, at);
  if (s.headerBytes > 0) at += buf.write(s.headersJson, at, s.headerBytes, 'utf8');
  if (typeof record.valueJson !== 'string') {
    // TypedArray set, not Buffer copy: for a value of ~100 bytes, Buffer.prototype.copy's
    // argument handling in JavaScript costs more than the copy itself.
    buf.set(record.valueJson, at);
    return at + record.valueJson.length;
  }
  return at + buf.write(record.valueJson, at, s.valueBytes, 'utf8');
}

export function encodeRecord(record: AppendRecord): Buffer {
  const sizes = sizesOf(record);
  const buf = Buffer.allocUnsafe(encodedSize(sizes));
  writeRecord(buf, 0, record, sizes);
  return buf;
}

export function decodeRecord(buf: Uint8Array): DecodedRecord {
  const b = Buffer.isBuffer(buf) ? buf : Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  if (b.length < FIXED || b[0] !== VERSION)
    throw new Error(`unknown record encoding (version ${b[0] ?? 'none'})`);
  let at = 1;
  const timestamp = b.readDoubleLE(at);
  at += 8;
  const keyLength = b.readUInt32LE(at);
  at += 4;
  let key: string | null = null;
  if (keyLength !== NO_KEY) {
    key = b.toString('utf8', at, at + keyLength);
    at += keyLength;
  }
  const headerLength = b.readUInt32LE(at);
  at += 4;
  let headers: RecordHeader[] | null = null;
  if (headerLength > 0) {
    headers = JSON.parse(b.toString('utf8', at, at + headerLength)) as RecordHeader[];
    at += headerLength;
  }
  return { key, value: b.subarray(at), timestamp, headers };
}

const BATCH_VERSION = 2;
const BATCH_HEADER = 1 + 4;

/** One buffer for the whole batch, each record written in place (no per-record buffer). */
export function encodeBatch(records: readonly AppendRecord[]): Buffer {
  const sizes = new Array<RecordSizes>(records.length);
  let size = BATCH_HEADER;
  for (let i = 0; i < records.length; i++) {
    const s = sizesOf(records[i]!);
    sizes[i] = s;
    size += 4 + encodedSize(s);
  }
  const buf = Buffer.allocUnsafe(size);
  buf.writeUInt8(BATCH_VERSION, 0);
  buf.writeUInt32LE(records.length, 1);
  let at = BATCH_HEADER;
  for (let i = 0; i < records.length; i++) {
    const s = sizes[i]!;
    at = buf.writeUInt32LE(encodedSize(s), at);
    at = writeRecord(buf, at, records[i]!, s);
  }
  return buf;
}

export function batchCount(batch: Uint8Array): number {
  const b = asBuffer(batch);
  if (b.length < BATCH_HEADER || b[0] !== BATCH_VERSION)
    throw new Error(`unknown batch encoding (version ${b[0] ?? 'none'})`);
  return b.readUInt32LE(1);
}

/**
 * Calls `visit(index, record)` for the records of a batch from `first` on, in order, until it
 * returns false. Records before `first` are skipped without being decoded.
 */
export function visitBatch(
  batch: Uint8Array,
  first: number,
  visit: (index: number, record: Buffer) => boolean,
): void {
  const b = asBuffer(batch);
  const count = batchCount(b);
  let at = BATCH_HEADER;
  for (let i = 0; i < count; i++) {
    const length = b.readUInt32LE(at);
    at += 4;
    if (i >= first && !visit(i, b.subarray(at, at + length))) return;
    at += length;
  }
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export const RECORD_KEY_BYTES = 16;
const MAX_OFFSET = 2 ** 48 - 1; // six bytes of the key

export function recordKey(topicId: number, partition: number, offset: number): Buffer {
  const key = Buffer.allocUnsafe(RECORD_KEY_BYTES);
  key.writeUInt32BE(topicId, 0);
  key.writeUInt32BE(partition, 4);
  key.writeUInt16BE(0, 8);
  key.writeUIntBE(Math.min(offset, MAX_OFFSET), 10, 6);
  return key;
}

export function offsetOfKey(key: Uint8Array): number {
  const b = Buffer.isBuffer(key) ? key : Buffer.from(key.buffer, key.byteOffset, key.byteLength);
  return b.readUIntBE(10, 6);
}

/** A key before every offset of (topic, partition): a prefix sorts before its extensions. */
export function partitionStartKey(topicId: number, partition: number): Buffer {
  const key = Buffer.allocUnsafe(8);
  key.writeUInt32BE(topicId, 0);
  key.writeUInt32BE(partition, 4);
  return key;
}

/** A key after every offset of (topic, partition): the exclusive end of a partition's range. */
export function partitionEndKey(topicId: number, partition: number): Buffer {
  const key = Buffer.alloc(RECORD_KEY_BYTES, 0xff);
  key.writeUInt32BE(topicId, 0);
  key.writeUInt32BE(partition, 4);
  return key;
}

/** One batch holding the records of several batches, in order (their bodies are copied as they are). */
export function mergeBatches(batches: readonly Uint8Array[]): Buffer {
  if (batches.length === 1) return asBuffer(batches[0]!);
  let count = 0;
  let size = BATCH_HEADER;
  for (const b of batches) {
    count += batchCount(b);
    size += b.length - BATCH_HEADER;
  }
  const out = Buffer.allocUnsafe(size);
  out.writeUInt8(BATCH_VERSION, 0);
  out.writeUInt32LE(count, 1);
  let at = BATCH_HEADER;
  for (const b of batches) at += asBuffer(b).copy(out, at, BATCH_HEADER);
  return out;
}

/** The newest timestamp among a batch's records (producers may stamp records out of order). */
export function newestTimestamp(batch: Uint8Array): number {
  let newest = -Infinity;
  // A record starts with its version byte, then the f64 timestamp.
  visitBatch(batch, 0, (_, record) => {
    newest = Math.max(newest, record.readDoubleLE(1));
    return true;
  });
  return newest;
}

/** Bytes a batch adds to its records' own encodings. */
export const BATCH_OVERHEAD = BATCH_HEADER;
