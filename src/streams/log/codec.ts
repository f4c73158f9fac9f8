// The stored form of records. One LMDB entry holds a batch: the records one produce request
// sent to one partition, under the offset of its first record (Kafka's record batches). Per-entry
// cost in LMDB (a B-tree insert, a cursor step) is paid once per batch instead of per record.
//   batch:  u8 2 | u32 count | count × (u32 length | record)
//   record: u8 1 | f64 timestamp | u32 keyLength (0xffffffff = no key) | key utf8
//           | u32 headersLength (0 = none) | headers as JSON utf8 | value JSON utf8 (rest)
// A flat binary layout (not msgpack) because the value must come back as its exact JSON text.
// Storage key: u32 topicId | u32 partition | u64 base offset, big-endian so LMDB's byte order is
// (topic, partition, offset) order.

import type { RecordHeader, RecordToStore } from './types.js';

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

/** The UTF-8 size of a key: a loop for ASCII (most keys: ids), no call into C++. */
function keyBytesOf(key: string): number {
  for (let i = 0; i < key.length; i++) if (key.charCodeAt(i) >= 0x80) return Buffer.byteLength(key, 'utf8');
  return key.length;
}

const headersJsonOf = (record: RecordToStore): string =>
  record.headers && record.headers.length > 0 ? JSON.stringify(record.headers) : '';

const valueBytesOf = (record: RecordToStore): number =>
  typeof record.valueJson === 'string'
    ? Buffer.byteLength(record.valueJson, 'utf8')
    : record.valueJson.length;

/**
 * Writes the record at `at` (room for FIXED + keyBytes + headers + value bytes); returns where
 * it ends. Numbers go through a DataView over `buf` (inlined by the compiler) rather than
 * Buffer's write methods, whose argument checks cost more than the writes for a ~100 B record.
 */
function writeRecord(
  buf: Buffer,
  view: DataView,
  at: number,
  record: RecordToStore,
  keyBytes: number,
  headersJson: string,
  headerBytes: number,
): number {
  buf[at] = VERSION;
  view.setFloat64(at + 1, record.timestamp, true);
  at += 9;
  const key = record.key;
  view.setUint32(at, key === null ? NO_KEY : keyBytes, true);
  at += 4;
  if (key !== null) {
    if (keyBytes === key.length) {
      // Only ASCII has as many UTF-8 bytes as UTF-16 units.
      for (let i = 0; i < keyBytes; i++) buf[at + i] = key.charCodeAt(i);
      at += keyBytes;
    } else at += buf.write(key, at, keyBytes, 'utf8');
  }
  view.setUint32(at, headerBytes, true);
  at += 4;
  if (headerBytes > 0) at += buf.write(headersJson, at, headerBytes, 'utf8');
  const value = record.valueJson;
  if (typeof value !== 'string') {
    // TypedArray set, not Buffer copy: for a value of ~100 bytes, Buffer.prototype.copy's
    // argument handling in JavaScript costs more than the copy itself.
    buf.set(value, at);
    return at + value.length;
  }
  return at + buf.write(value, at, 'utf8');
}

const viewOf = (buf: Buffer): DataView => new DataView(buf.buffer, buf.byteOffset, buf.length);

export function encodeRecord(record: RecordToStore): Buffer {
  const keyBytes = record.key === null ? 0 : keyBytesOf(record.key);
  const headersJson = headersJsonOf(record);
  const headerBytes = Buffer.byteLength(headersJson, 'utf8');
  const buf = Buffer.allocUnsafe(FIXED + keyBytes + headerBytes + valueBytesOf(record));
  writeRecord(buf, viewOf(buf), 0, record, keyBytes, headersJson, headerBytes);
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

/**
 * One buffer for the whole batch, each record written in place: no buffer and no object per
 * record (the sizes of the first pass are kept in typed arrays; headers' JSON only when some
 * record has headers).
 */
export function encodeBatch(records: readonly RecordToStore[]): Buffer {
  const n = records.length;
  const keyBytes = new Int32Array(n);
  const lengths = new Int32Array(n);
  let headersJson: string[] | undefined;
  let headerBytes: Int32Array | undefined;
  let size = BATCH_HEADER;
  for (let i = 0; i < n; i++) {
    const record = records[i]!;
    const k = record.key === null ? 0 : keyBytesOf(record.key);
    keyBytes[i] = k;
    let h = 0;
    if (record.headers && record.headers.length > 0) {
      headersJson ??= new Array<string>(n).fill('');
      headerBytes ??= new Int32Array(n);
      const json = headersJsonOf(record);
      headersJson[i] = json;
      h = Buffer.byteLength(json, 'utf8');
      headerBytes[i] = h;
    }
    const length = FIXED + k + h + valueBytesOf(record);
    lengths[i] = length;
    size += 4 + length;
  }
  const buf = Buffer.allocUnsafe(size);
  const view = viewOf(buf);
  buf[0] = BATCH_VERSION;
  view.setUint32(1, n, true);
  let at = BATCH_HEADER;
  for (let i = 0; i < n; i++) {
    view.setUint32(at, lengths[i]!, true);
    at = writeRecord(
      buf,
      view,
      at + 4,
      records[i]!,
      keyBytes[i]!,
      headersJson?.[i] ?? '',
      headerBytes?.[i] ?? 0,
    );
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
