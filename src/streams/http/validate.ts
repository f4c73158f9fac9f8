// Request bodies → typed values, or a 4xx naming the field. Every check runs before anything is
// stored, which is what makes a produce batch all-or-nothing.

import { compactValue, valueSpans } from './value-spans.js';
import { ErrorCodes, StreamsError, partitionNotFound, unprocessable } from '../errors.js';
import type { InstanceConfig, OffsetReset } from '../groups/store.js';
import type { OffsetEntry } from '../groups/coordinator.js';
import type { TopicPartition } from '../groups/assignment.js';
import type { RecordHeader, TopicInfo } from '../log/types.js';
import { isValidName } from '../names.js';
import { parseConfigs, type ConfigChanges } from './topic-configs.js';

export function checkName(
  kind: 'topic' | 'consumer group' | 'consumer instance',
  name: unknown,
  code: number,
): string {
  if (!isValidName(name)) {
    throw new StreamsError(
      kind === 'topic' && code === ErrorCodes.topicInvalid ? 400 : 422,
      code,
      `invalid ${kind} name ${JSON.stringify(name)}: use 1–249 characters from A–Z a–z 0–9 . _ - (not '.' or '..')`,
    );
  }
  return name;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface TopicCreation {
  readonly name: string;
  readonly partitions: number;
  /** Configs given at creation (the rest take the service's defaults). */
  readonly configs: ConfigChanges;
}

const CREATION_FIELDS = new Set(['topic_name', 'partitions', 'partitions_count', 'configs']);

export function parseTopicCreation(
  body: unknown,
  defaultPartitions: number,
  maxPartitions: number,
): TopicCreation {
  const bad = (message: string): StreamsError => new StreamsError(400, ErrorCodes.topicInvalid, message);
  if (!isObject(body)) throw bad('body must be a JSON object like {"topic_name":"orders","partitions":3}');
  for (const field of Object.keys(body)) {
    if (!CREATION_FIELDS.has(field))
      throw bad(`unknown field '${field}'; accepted: topic_name, partitions, configs`);
  }
  if (body.topic_name === undefined) throw bad('topic_name is required');
  const name = checkName('topic', body.topic_name, ErrorCodes.topicInvalid);
  const configs = body.configs === undefined ? {} : parseConfigs(body.configs, false);
  const raw = body.partitions ?? body.partitions_count;
  if (raw === undefined) return { name, partitions: defaultPartitions, configs };
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > maxPartitions) {
    throw bad(
      `partitions must be an integer from 1 to ${maxPartitions} (STREAMS_MAX_PARTITIONS), got ${JSON.stringify(raw)}`,
    );
  }
  return { name, partitions: raw, configs };
}

export interface ProduceRecord {
  readonly key: string | null;
  /** The value's JSON text: the client's bytes where the body scanner found them (value-spans.ts). */
  readonly valueJson: string | Buffer;
  readonly partition: number | undefined;
  readonly timestamp: number;
  readonly headers: readonly RecordHeader[] | null;
}

export interface ProduceLimits {
  readonly maxRecordsPerBatch: number;
  readonly maxRecordBytes: number;
}

const RECORD_FIELDS = new Set(['key', 'value', 'partition', 'timestamp', 'headers']);
const SCHEMA_FIELDS = new Set(['key_schema', 'value_schema', 'key_schema_id', 'value_schema_id']);

/** How the Confluent paths differ from /streams when reading a produce body. */
export interface ProduceDialect {
  /** `object`: a value must be a JSON object (/streams); `any`: any JSON, absent = null (Confluent). */
  readonly values: 'object' | 'any';
  /**
   * `refuse`: a schema field is an error (/streams); `ignore`: Confluent's json and binary
   * formats read and drop them (kafka-rest AbstractProduceAction.produceWithoutSchema).
   */
  readonly schemaFields: 'refuse' | 'ignore';
  /** error_code of a refused body: 42203 on /streams, 422 (rest-utils' constraint mapper) on Confluent. */
  readonly errorCode: number;
}

const STREAMS_PRODUCE: ProduceDialect = {
  values: 'object',
  schemaFields: 'refuse',
  errorCode: ErrorCodes.invalidRecord,
};

/**
 * The records of a produce body. With `bytes` (the body as sent, which `body` was parsed from),
 * each value is kept as the client's text (value-spans.ts) instead of being serialised again.
 */
export function parseProduce(
  body: unknown,
  topic: TopicInfo,
  limits: ProduceLimits,
  now: number,
  dialect: ProduceDialect = STREAMS_PRODUCE,
  bytes?: Buffer,
): ProduceRecord[] {
  const bad = (message: string): StreamsError => unprocessable(message, dialect.errorCode);
  if (!isObject(body)) throw bad('body must be a JSON object like {"records":[{"key":"k","value":{...}}]}');
  for (const field of Object.keys(body)) {
    if (SCHEMA_FIELDS.has(field) && dialect.schemaFields === 'ignore') continue;
    if (SCHEMA_FIELDS.has(field))
      throw bad(`'${field}' is not supported: records are JSON, no schema registry is used`);
    if (field !== 'records') throw bad(`unknown field '${field}'; the body is {"records":[...]}`);
  }
  const records = body.records;
  if (!Array.isArray(records)) throw bad('records is required and must be an array');
  if (records.length === 0) throw bad('records must hold at least one record');
  if (records.length > limits.maxRecordsPerBatch) {
    throw new StreamsError(
      413,
      413,
      `${records.length} records in one request; the limit is ${limits.maxRecordsPerBatch} (STREAMS_MAX_RECORDS_PER_BATCH)`,
    );
  }
  // Per record: no allocation beyond what the record needs (its position in an error message is
  // only built when there is an error; field names are walked, not listed), and the UTF-8 size is
  // only counted when the text could be over the limit (a UTF-16 unit is at most 3 UTF-8 bytes).
  const found = bytes ? valueSpans(bytes) : undefined;
  const spans = found && found.length === records.length ? found : undefined;
  const out = new Array<ProduceRecord>(records.length);
  for (let i = 0; i < records.length; i++) {
    const raw: unknown = records[i];
    if (!isObject(raw)) throw bad(`records[${i}] must be an object with a value`);
    for (const field in raw) {
      if (!RECORD_FIELDS.has(field))
        throw bad(
          `records[${i}]: unknown field '${field}'; accepted: key, value, partition, timestamp, headers`,
        );
    }
    const key = raw.key ?? null;
    if (key !== null && typeof key !== 'string')
      throw bad(`records[${i}].key must be a string (or absent/null), got ${typeof key}`);
    if (dialect.values === 'object' && !isObject(raw.value)) {
      throw bad(
        `records[${i}].value must be a JSON object, got ${raw.value === undefined ? 'nothing' : Array.isArray(raw.value) ? 'an array' : raw.value === null ? 'null' : typeof raw.value}`,
      );
    }
    let partition: number | undefined;
    if (raw.partition !== undefined && raw.partition !== null) {
      if (typeof raw.partition !== 'number' || !Number.isInteger(raw.partition) || raw.partition < 0) {
        throw bad(`records[${i}].partition must be a non-negative integer`);
      }
      if (raw.partition >= topic.partitions)
        throw partitionNotFound(topic.name, raw.partition, topic.partitions);
      partition = raw.partition;
    }
    let timestamp = now;
    if (raw.timestamp !== undefined && raw.timestamp !== null) {
      if (typeof raw.timestamp !== 'number' || !Number.isSafeInteger(raw.timestamp) || raw.timestamp < 0) {
        throw bad(`records[${i}].timestamp must be milliseconds since the epoch (a non-negative integer)`);
      }
      timestamp = raw.timestamp;
    }
    const headers =
      raw.headers === undefined || raw.headers === null ? null : parseHeaders(raw.headers, i, bad);
    const span = spans?.[i];
    const valueJson =
      span && bytes
        ? compactValue(bytes, span)
        : raw.value === undefined
          ? 'null'
          : JSON.stringify(raw.value);
    const headersJson = headers ? JSON.stringify(headers) : '';
    const units = valueJson.length + (key === null ? 0 : key.length) + headersJson.length;
    if (units * 3 > limits.maxRecordBytes) {
      const size =
        Buffer.byteLength(valueJson) +
        (key === null ? 0 : Buffer.byteLength(key)) +
        Buffer.byteLength(headersJson);
      if (size > limits.maxRecordBytes) {
        throw new StreamsError(
          413,
          413,
          `records[${i}] is ${size} bytes; the limit is ${limits.maxRecordBytes} (STREAMS_MAX_RECORD_BYTES)`,
        );
      }
    }
    out[i] = { key, valueJson, partition, timestamp, headers };
  }
  return out;
}

/** A record's headers as parseProduce takes them (null for none); `bad` makes the refusal. */
export function parseHeaders(raw: unknown, i: number, bad: (m: string) => Error): RecordHeader[] | null {
  if (!Array.isArray(raw))
    throw bad(`records[${i}].headers must be an array of {"key": string, "value": string|null}`);
  if (raw.length === 0) return null;
  return raw.map((h: unknown, j) => {
    if (
      !isObject(h) ||
      typeof h.key !== 'string' ||
      (h.value !== null && typeof h.value !== 'string') ||
      Object.keys(h).some((k) => k !== 'key' && k !== 'value')
    ) {
      throw bad(`records[${i}].headers[${j}] must be {"key": string, "value": string|null}`);
    }
    return { key: h.key, value: h.value };
  });
}

export type RecordFormat = 'json' | 'binary';

/** How a path reads consumer settings: which `format` values it takes, and its error numbers. */
export interface ConsumerDialect {
  readonly accepted: readonly RecordFormat[];
  readonly fallback: RecordFormat;
  /** Said in the refusal of a format the path does not take. */
  readonly hint: string;
  /** Format names in any case (Confluent upper-cases them: CreateConsumerInstanceRequest). */
  readonly anyCase: boolean;
  /** error_code of an unknown setting or `format` (Confluent: 422, rest-utils' constraint mapper). */
  readonly shapeCode: number;
  /** error_code of a `fetch.min.bytes` out of range (Confluent: 40001, Errors.java). */
  readonly minBytesCode: number;
}

export const STREAMS_FORMATS: ConsumerDialect = {
  accepted: ['json'],
  fallback: 'json',
  hint: 'records on /streams are JSON; format binary is served on the Confluent paths (/consumers/<group>)',
  anyCase: false,
  shapeCode: ErrorCodes.invalidConsumerConfig,
  minBytesCode: ErrorCodes.invalidConsumerConfig,
};

/** Confluent's embedded formats that need a schema registry (which Sluice does not have). */
export const SCHEMA_FORMATS = ['avro', 'jsonschema', 'protobuf'] as const;

export interface ConsumerCreation {
  readonly config: InstanceConfig;
  /** The instance id the client asked for (`name`, or Confluent's older `id`). */
  readonly name: string | undefined;
}

const CONSUMER_FIELDS = [
  'name',
  'id',
  'format',
  'auto.offset.reset',
  'auto.commit.enable',
  'fetch.min.bytes',
  'consumer.request.timeout.ms',
];

export function parseConsumerConfig(
  body: unknown,
  maxTimeoutMs: number,
  formats: ConsumerDialect = STREAMS_FORMATS,
): ConsumerCreation {
  const bad = (message: string): StreamsError => unprocessable(message, ErrorCodes.invalidConsumerConfig);
  const badShape = (message: string): StreamsError => unprocessable(message, formats.shapeCode);
  if (body === undefined) {
    return {
      config: {
        offsetReset: 'latest',
        autoCommit: true,
        requestTimeoutMs: undefined,
        format: formats.fallback,
      },
      name: undefined,
    };
  }
  if (!isObject(body)) throw badShape('body must be a JSON object such as {"auto.offset.reset":"earliest"}');
  for (const field of Object.keys(body)) {
    if (!CONSUMER_FIELDS.includes(field))
      throw badShape(`unknown consumer setting '${field}'; accepted: ${CONSUMER_FIELDS.join(', ')}`);
  }
  const name = parseInstanceName(body.name, body.id, bad);
  let offsetReset: OffsetReset = 'latest';
  const reset = body['auto.offset.reset'];
  if (reset !== undefined) {
    if (reset !== 'earliest' && reset !== 'latest' && reset !== 'none') {
      throw bad(`auto.offset.reset must be earliest, latest or none, got ${JSON.stringify(reset)}`);
    }
    offsetReset = reset;
  }
  let autoCommit = true;
  const commit = body['auto.commit.enable'];
  if (commit !== undefined) {
    // Confluent's clients send Kafka settings as strings; both forms are taken.
    if (commit === true || commit === 'true') autoCommit = true;
    else if (commit === false || commit === 'false') autoCommit = false;
    else throw bad(`auto.commit.enable must be true or false, got ${JSON.stringify(commit)}`);
  }
  const format = parseFormat(body.format, formats, bad, badShape);
  // Accepted for Confluent clients that always send it. A fetch answers as soon as one record is
  // readable (docs/streams.md, long poll), so there is nothing for it to change.
  const minBytes = body['fetch.min.bytes'];
  if (minBytes !== undefined) {
    const n = typeof minBytes === 'string' && /^-?\d+$/.test(minBytes) ? Number(minBytes) : minBytes;
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < -1)
      throw unprocessable(
        `fetch.min.bytes must be an integer from -1 up, got ${JSON.stringify(minBytes)}`,
        formats.minBytesCode,
      );
  }
  let requestTimeoutMs: number | undefined;
  const timeout = body['consumer.request.timeout.ms'];
  if (timeout !== undefined) {
    const n = typeof timeout === 'string' && /^\d+$/.test(timeout) ? Number(timeout) : timeout;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > maxTimeoutMs) {
      throw bad(
        `consumer.request.timeout.ms must be an integer from 0 to ${maxTimeoutMs} (STREAMS_FETCH_TIMEOUT_MAX)`,
      );
    }
    requestTimeoutMs = n;
  }
  return { config: { offsetReset, autoCommit, requestTimeoutMs, format }, name };
}

function parseInstanceName(name: unknown, id: unknown, bad: (m: string) => StreamsError): string | undefined {
  if (name !== undefined && name !== null && id !== undefined && id !== null && name !== id)
    throw bad('name and id name the same thing (the instance id); send one of them');
  const chosen = name ?? id ?? undefined;
  if (chosen === undefined) return undefined;
  // It becomes a path segment of base_uri, so it follows the topic name rule.
  return checkName('consumer instance', chosen, ErrorCodes.invalidConsumerConfig);
}

function parseFormat(
  raw: unknown,
  formats: ConsumerDialect,
  bad: (m: string) => StreamsError,
  badShape: (m: string) => StreamsError,
): RecordFormat {
  if (raw === undefined || raw === null) return formats.fallback;
  const name = typeof raw === 'string' && formats.anyCase ? raw.toLowerCase() : raw;
  if (typeof name === 'string' && (formats.accepted as readonly string[]).includes(name))
    return name as RecordFormat;
  if (typeof name === 'string' && (SCHEMA_FORMATS as readonly string[]).includes(name)) {
    throw bad(
      `format ${name} is not supported: it needs a schema registry, which Sluice does not have; use ${formats.accepted.join(' or ')}`,
    );
  }
  throw badShape(
    `format must be ${formats.accepted.join(' or ')} (${formats.hint}), got ${JSON.stringify(raw)}`,
  );
}

export function parseSubscription(body: unknown): string[] {
  const bad = (message: string): StreamsError => unprocessable(message);
  if (!isObject(body)) throw bad('body must be a JSON object like {"topics":["orders"]}');
  if (body.topic_pattern !== undefined)
    throw bad('topic_pattern is not supported; list the topics in "topics"');
  for (const field of Object.keys(body))
    if (field !== 'topics') throw bad(`unknown field '${field}'; the body is {"topics":[...]}`);
  if (!Array.isArray(body.topics)) throw bad('topics is required and must be an array of topic names');
  // The spec marks the list required; an empty one subscribes to nothing, which is almost always
  // a client bug. Unsubscribing has its own call.
  if (body.topics.length === 0)
    throw bad(
      "topics is required and must not be empty; to unsubscribe, DELETE the instance's /subscription",
    );
  return body.topics.map((t: unknown) => checkName('topic', t, 422));
}

function parseTopicPartition(raw: unknown, at: string): TopicPartition {
  if (!isObject(raw)) throw unprocessable(`${at} must be an object with topic and partition`);
  if (typeof raw.topic !== 'string') throw unprocessable(`${at}.topic must be a topic name`);
  if (typeof raw.partition !== 'number' || !Number.isInteger(raw.partition) || raw.partition < 0) {
    throw unprocessable(`${at}.partition must be a non-negative integer`);
  }
  return { topic: raw.topic, partition: raw.partition };
}

/** `{"offsets":[{"topic","partition","offset"}]}`; `undefined` when the body was empty. */
export function parseOffsets(body: unknown, required: boolean): OffsetEntry[] | undefined {
  if (body === undefined && !required) return undefined;
  if (!isObject(body) || !Array.isArray(body.offsets))
    throw unprocessable('body must be {"offsets":[{"topic":…,"partition":…,"offset":…}]}');
  for (const field of Object.keys(body))
    if (field !== 'offsets') throw unprocessable(`unknown field '${field}'`);
  return body.offsets.map((raw: unknown, i) => {
    const tp = parseTopicPartition(raw, `offsets[${i}]`);
    const offset = (raw as Record<string, unknown>).offset;
    if (typeof offset !== 'number' || !Number.isSafeInteger(offset))
      throw unprocessable(`offsets[${i}].offset must be an integer`);
    return { ...tp, offset };
  });
}

/** `{"partitions":[{"topic","partition"}]}`; `undefined` when the body was empty. */
export function parsePartitions(body: unknown, required: boolean): TopicPartition[] | undefined {
  if (body === undefined && !required) return undefined;
  if (!isObject(body) || !Array.isArray(body.partitions))
    throw unprocessable('body must be {"partitions":[{"topic":…,"partition":…}]}');
  for (const field of Object.keys(body))
    if (field !== 'partitions') throw unprocessable(`unknown field '${field}'`);
  return body.partitions.map((raw: unknown, i) => parseTopicPartition(raw, `partitions[${i}]`));
}

/** A query parameter as a non-negative integer, or the default. */
/**
 * An integer query parameter that may be negative (Confluent's v2 resource declares `-1` as the
 * default of `timeout` and `max_bytes`); undefined when absent, a positive value at most `max`.
 */
export function querySignedInt(params: URLSearchParams, name: string, max: number): number | undefined {
  const raw = params.get(name);
  if (raw === null || raw === '') return undefined;
  if (!/^-?\d+$/.test(raw))
    throw unprocessable(`query parameter ${name} must be an integer, got ${JSON.stringify(raw)}`);
  return Math.min(Number(raw), max);
}

export function queryInt(params: URLSearchParams, name: string, fallback: number, max: number): number {
  const raw = params.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw))
    throw unprocessable(`query parameter ${name} must be a non-negative integer, got ${JSON.stringify(raw)}`);
  return Math.min(Number(raw), max);
}
