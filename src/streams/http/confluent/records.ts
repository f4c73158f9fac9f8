// Confluent's embedded formats on top of the JSON log.
//
// The log stores a key as text and a value as JSON text (log/types.ts). A `binary` record —
// bytes, sent as base64 — is stored in that shape too: the key as its base64 text, the value
// as a JSON string holding its base64, and a last header `sluice.format: binary` saying so.
// That is also exactly what a JSON reader (the /streams paths, a `json` Confluent instance)
// sees, so no reader ever gets invalid JSON. A `binary` reader gets the bytes back: the stored
// base64 for binary records, and for JSON records base64 of the key's UTF-8 and of the value's
// JSON text (the bytes a Kafka JSON serialiser would have written for the value).

import { murmur2 } from '../../log/murmur2.js';
import type { RecordHeader, StoredRecord, TopicInfo } from '../../log/types.js';
import type { ConsumedRecord } from '../../groups/coordinator.js';
import { ErrorCodes, unprocessable } from '../../errors.js';
import type { RecordFormat } from '../validate.js';

export const BINARY_MARKER: RecordHeader = Object.freeze({ key: 'sluice.format', value: 'binary' });

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Refuses the reserved header, which only this module writes. */
function checkHeaders(headers: unknown, at: string): void {
  if (!Array.isArray(headers)) return;
  if (headers.some((h) => isObject(h) && h.key === BINARY_MARKER.key)) {
    throw unprocessable(
      `${at}.headers: '${BINARY_MARKER.key}' is reserved (it marks records produced in the binary format)`,
      ErrorCodes.invalidRecord,
    );
  }
}

/**
 * A Confluent produce body in `format`, rewritten into the body the shared parser reads
 * (validate.ts, parseProduce). `partition` is the path's partition for the per-partition
 * endpoint. Binary keys are placed with the Java client's partitioner over their bytes.
 * Anything malformed is left for the shared parser to name, except base64 errors.
 */
export function toStoredShape(
  body: unknown,
  format: RecordFormat,
  topic: TopicInfo,
  partition: number | undefined,
): unknown {
  if (!isObject(body) || !Array.isArray(body.records)) return body;
  const records = body.records.map((raw: unknown, i) => {
    if (!isObject(raw)) return raw;
    const at = `records[${i}]`;
    checkHeaders(raw.headers, at);
    const out: Record<string, unknown> = { ...raw };
    if (partition !== undefined) {
      if (raw.partition !== undefined && raw.partition !== null && raw.partition !== partition) {
        throw unprocessable(
          `${at}.partition is ${JSON.stringify(raw.partition)} but this endpoint produces to partition ${partition}`,
          ErrorCodes.invalidRecord,
        );
      }
      out.partition = partition;
    }
    if (format === 'json') return out;
    const key = base64Field(raw.key, `${at}.key`);
    const value = base64Field(raw.value, `${at}.value`);
    out.key = key;
    out.value = value;
    if (key !== null && (out.partition === undefined || out.partition === null)) {
      out.partition = (murmur2(Buffer.from(key, 'base64')) & 0x7fffffff) % topic.partitions;
    }
    if (raw.headers === undefined || raw.headers === null) out.headers = [BINARY_MARKER];
    else if (Array.isArray(raw.headers)) out.headers = [...(raw.headers as unknown[]), BINARY_MARKER];
    return out;
  });
  return { ...body, records };
}

function base64Field(raw: unknown, at: string): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string' || !BASE64.test(raw)) {
    throw unprocessable(
      `${at} must be base64 (standard alphabet, padded) or null in the binary format`,
      ErrorCodes.invalidRecord,
    );
  }
  return raw;
}

function isBinary(record: StoredRecord): boolean {
  const headers = record.headers;
  if (!headers || headers.length === 0) return false;
  const last = headers[headers.length - 1]!;
  return last.key === BINARY_MARKER.key && last.value === BINARY_MARKER.value;
}

const NULL_JSON = Buffer.from('null');

/** The records as a reader of `format` sees them; `json` readers see what is stored. */
export function inFormat(
  records: readonly ConsumedRecord[],
  format: RecordFormat,
): readonly ConsumedRecord[] {
  if (format === 'json') return records;
  return records.map(({ topic, record }) => {
    if (isBinary(record)) {
      const headers = record.headers!.slice(0, -1);
      return { topic, record: { ...record, headers: headers.length > 0 ? headers : null } };
    }
    const value = record.value.equals(NULL_JSON)
      ? NULL_JSON
      : Buffer.from(JSON.stringify(record.value.toString('base64')));
    const key = record.key === null ? null : Buffer.from(record.key, 'utf8').toString('base64');
    return { topic, record: { ...record, key, value } };
  });
}
