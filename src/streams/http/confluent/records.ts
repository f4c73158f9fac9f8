// Confluent's embedded formats on top of the JSON log.
//
// The log stores a key as text and a value as JSON text (log/types.ts). A `binary` record —
// bytes, sent as base64 — is stored in that shape too: the key as its base64 text, the value
// as a JSON string holding its base64, and a last header `sluice.format: binary` saying so.
// That is also exactly what a JSON reader (the /streams paths, a `json` Confluent instance)
// sees, so no reader ever gets invalid JSON. A `binary` reader gets the bytes back: the stored
// base64 for binary records, and for JSON records base64 of the key's UTF-8 and of the value's
// JSON text (the bytes a Kafka JSON serialiser would have written for the value).
//
// In the json format a key is any JSON value (kafka-rest entities/v2/ProduceRequest.java reads
// it as a JsonNode). A string key is stored as its text, as on /streams; any other key is stored
// as its JSON text with a last header `sluice.key: json`, so a json reader gets the same JSON
// value back and a binary reader the bytes Kafka's JSON serialiser would have written.

import { murmur2 } from '../../log/murmur2.js';
import type { RecordHeader, StoredRecord, TopicInfo } from '../../log/types.js';
import type { ConsumedRecord } from '../../groups/coordinator.js';
import { StreamsError, unprocessable } from '../../errors.js';
import type { RenderRecord } from '../render.js';
import type { RecordFormat } from '../validate.js';

export const BINARY_MARKER: RecordHeader = Object.freeze({ key: 'sluice.format', value: 'binary' });
export const JSON_KEY_MARKER: RecordHeader = Object.freeze({ key: 'sluice.key', value: 'json' });
const RESERVED = new Set([BINARY_MARKER.key, JSON_KEY_MARKER.key]);

/** Confluent's error_code for a body its constraint checks refuse (rest-utils). */
export const CONSTRAINT_CODE = 422;

// Guava's BaseEncoding.base64(), which kafka-rest decodes with (NoSchemaRecordSerializer.java):
// the standard alphabet, padding optional.
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Refuses the reserved headers, which only this module writes. */
function checkHeaders(headers: unknown, at: string): void {
  if (!Array.isArray(headers)) return;
  const reserved = headers.find((h) => isObject(h) && typeof h.key === 'string' && RESERVED.has(h.key));
  if (reserved !== undefined) {
    throw unprocessable(
      `${at}.headers: '${(reserved as { key: string }).key}' is reserved (it marks the embedded format of a record)`,
      CONSTRAINT_CODE,
    );
  }
}

/** True when a record carries a reserved header (checkHeaders refuses it on the usual path). */
export function hasReservedHeader(
  records: readonly { readonly headers: readonly RecordHeader[] | null }[],
): boolean {
  for (const record of records) {
    if (record.headers?.some((h) => RESERVED.has(h.key))) return true;
  }
  return false;
}

function withMarker(headers: unknown, marker: RecordHeader): unknown {
  if (headers === undefined || headers === null) return [marker];
  return Array.isArray(headers) ? [...(headers as unknown[]), marker] : headers;
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
          CONSTRAINT_CODE,
        );
      }
      out.partition = partition;
    }
    if (format === 'json') {
      if (raw.key !== undefined && raw.key !== null && typeof raw.key !== 'string') {
        out.key = JSON.stringify(raw.key);
        out.headers = withMarker(raw.headers, JSON_KEY_MARKER);
      }
      return out;
    }
    const key = base64Field(raw.key, `${at}.key`);
    const value = base64Field(raw.value, `${at}.value`);
    out.key = key;
    out.value = value;
    if (key !== null && (out.partition === undefined || out.partition === null)) {
      out.partition = (murmur2(Buffer.from(key, 'base64')) & 0x7fffffff) % topic.partitions;
    }
    out.headers = withMarker(raw.headers, BINARY_MARKER);
    return out;
  });
  return { ...body, records };
}

/**
 * A binary key or value as padded base64. kafka-rest refuses a bad one with its v2 Bad Request
 * (NoSchemaRecordSerializer.serializeBinary → exceptions/v2/V2ExceptionMapper: 400, error_code
 * 400, "Bad Request: data=… is not a valid base64 string.").
 */
function base64Field(raw: unknown, at: string): string | null {
  if (raw === undefined || raw === null) return null;
  if (typeof raw !== 'string') {
    throw new StreamsError(
      400,
      400,
      `Bad Request: ${at}: data=${JSON.stringify(raw)} is not a base64 string.`,
    );
  }
  if (!BASE64.test(raw) || raw.length % 4 === 1) {
    throw new StreamsError(
      400,
      400,
      `Bad Request: ${at}: data=${JSON.stringify(raw)} is not a valid base64 string.`,
    );
  }
  return raw.length % 4 === 0 ? raw : raw + '='.repeat(4 - (raw.length % 4));
}

function lastIs(record: StoredRecord, marker: RecordHeader): boolean {
  const headers = record.headers;
  if (!headers || headers.length === 0) return false;
  const last = headers[headers.length - 1]!;
  return last.key === marker.key && last.value === marker.value;
}

/**
 * A key stored with the JSON-key marker. /streams producers do not have the marker refused, so
 * a key is only taken as JSON when it is JSON: an answer must never become invalid JSON.
 */
function jsonKey(record: StoredRecord): string | undefined {
  if (record.key === null || !lastIs(record, JSON_KEY_MARKER)) return undefined;
  try {
    JSON.parse(record.key);
    return record.key;
  } catch {
    return undefined;
  }
}

function withoutLast(record: StoredRecord): RecordHeader[] | null {
  const headers = record.headers!.slice(0, -1);
  return headers.length > 0 ? headers : null;
}

const NULL_JSON = Buffer.from('null');

/**
 * The records as a reader of `format` sees them: `json` readers see what is stored, with a
 * non-string JSON key back as JSON; `binary` readers see bytes as base64.
 */
export function inFormat(records: readonly ConsumedRecord[], format: RecordFormat): readonly RenderRecord[] {
  if (format === 'json') {
    if (!records.some(({ record }) => lastIs(record, JSON_KEY_MARKER))) return records;
    return records.map((consumed) => {
      const { topic, record } = consumed;
      const keyJson = jsonKey(record);
      if (keyJson === undefined) return consumed;
      return { topic, record: { ...record, headers: withoutLast(record) }, keyJson };
    });
  }
  return records.map(({ topic, record }) => {
    if (lastIs(record, BINARY_MARKER)) return { topic, record: { ...record, headers: withoutLast(record) } };
    const headers = lastIs(record, JSON_KEY_MARKER) ? withoutLast(record) : record.headers;
    const value = record.value.equals(NULL_JSON)
      ? NULL_JSON
      : Buffer.from(JSON.stringify(record.value.toString('base64')));
    const key = record.key === null ? null : Buffer.from(record.key, 'utf8').toString('base64');
    return { topic, record: { ...record, key, value, headers } };
  });
}
