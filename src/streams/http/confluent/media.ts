// Confluent REST Proxy v2 media types (docs.confluent.io, kafka-rest "Content Types"):
//   application/vnd.kafka[.<embedded format>].v2+json
// The embedded format says how keys and values sit in the JSON: `json` as JSON, `binary` as
// base64 strings. Avro, JSON Schema and Protobuf need a schema registry, which Sluice has not:
// those are refused with a 4xx that says so (415 / 41501 on a body, 406 / 40601 on Accept).

import { HttpError } from '../../../core/http/index.js';
import { ErrorCodes, StreamsError } from '../../errors.js';
import { PLAIN_JSON, STREAMS_JSON } from '../media.js';
import { SCHEMA_FORMATS, type RecordFormat } from '../validate.js';

export const KAFKA_V2 = 'application/vnd.kafka.v2+json';
export const KAFKA_JSON = 'application/vnd.kafka.json.v2+json';
export const KAFKA_BINARY = 'application/vnd.kafka.binary.v2+json';
const KAFKA_ANY_VERSION = 'application/vnd.kafka+json';

export const FORMAT_TYPES: Readonly<Record<RecordFormat, string>> = {
  json: KAFKA_JSON,
  binary: KAFKA_BINARY,
};

const SCHEMA_TYPES = new Map(SCHEMA_FORMATS.map((f) => [`application/vnd.kafka.${f}.v2+json`, f]));

/**
 * Bodies without embedded records (consumer settings, subscriptions, offsets, positions):
 * Confluent takes its generic type and every embedded one; plain JSON and the /streams type are
 * taken as well.
 */
export const KAFKA_BODY_TYPES: readonly string[] = [
  KAFKA_V2,
  KAFKA_ANY_VERSION,
  KAFKA_JSON,
  KAFKA_BINARY,
  ...SCHEMA_TYPES.keys(),
  PLAIN_JSON,
  STREAMS_JSON,
];

function mediaOf(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

/** True when a POST body says it carries Kafka records (any embedded format, even unsupported). */
export function isKafkaRecordsBody(contentType: string | undefined): boolean {
  const media = mediaOf(contentType);
  return media === KAFKA_JSON || media === KAFKA_BINARY || SCHEMA_TYPES.has(media);
}

/** The embedded format of a produce body. Plain application/json is taken as json. */
export function produceFormat(contentType: string | undefined): RecordFormat {
  const media = mediaOf(contentType);
  if (media === KAFKA_JSON || media === PLAIN_JSON) return 'json';
  if (media === KAFKA_BINARY) return 'binary';
  const schema = SCHEMA_TYPES.get(media);
  if (schema !== undefined) {
    throw new StreamsError(
      415,
      ErrorCodes.unsupportedFormat,
      `the ${schema} embedded format is not supported: it needs a schema registry, which Sluice does not have. Produce with Content-Type ${KAFKA_JSON} or ${KAFKA_BINARY}`,
    );
  }
  throw new HttpError(
    415,
    '415',
    `Content-Type must be ${KAFKA_JSON} or ${KAFKA_BINARY}${media ? `, got ${media}` : ' (none was sent)'}`,
  );
}

interface Range {
  readonly media: string;
}

function ranges(accept: string): Range[] {
  const out: Range[] = [];
  for (const part of accept.split(',')) {
    const [rangeRaw, ...params] = part.split(';');
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    const media = rangeRaw!.trim().toLowerCase();
    if (media !== '') out.push({ media });
  }
  return out;
}

const GENERIC = new Set([KAFKA_V2, KAFKA_ANY_VERSION, PLAIN_JSON, '*/*', 'application/*']);

/**
 * An Accept that admits no type the resource produces: Jersey's NotAcceptableException, which
 * rest-utils' WebApplicationExceptionMapper answers with the HTTP status as error_code (406).
 * 40601 is kept for a consumer's embedded-format mismatch (kafka-rest Errors.java).
 */
function notAcceptable(accept: string, wanted: string): StreamsError {
  return new StreamsError(406, 406, `HTTP 406 Not Acceptable: Accept must allow ${wanted} (got ${accept})`);
}

/**
 * The type of an answer without embedded records. No Accept means anything (RFC 9110); an
 * Accept that admits no JSON type is 406 / 406.
 */
export function answerType(accept: string | undefined): string {
  if (accept === undefined || accept.trim() === '') return KAFKA_V2;
  let plain = false;
  for (const { media } of ranges(accept)) {
    if (media === PLAIN_JSON) plain = true;
    else if (GENERIC.has(media) || media === STREAMS_JSON || media.startsWith('application/vnd.kafka.'))
      return KAFKA_V2;
  }
  if (plain) return PLAIN_JSON;
  throw notAcceptable(accept, KAFKA_V2);
}

/**
 * The type of a records answer for an instance of `format`. Its own embedded type, a generic
 * JSON type or no Accept all get the instance's format (Confluent answers a generic Accept with
 * binary and fails a json instance; answering in the instance's format is the useful reading).
 * Asking only for another embedded format is Confluent's 406 / 40601 (the consumer's format
 * mismatch); asking for nothing JSON at all is 406 / 406 (no resource method produces it).
 */
export function recordsType(accept: string | undefined, format: RecordFormat): string {
  const own = FORMAT_TYPES[format];
  if (accept === undefined || accept.trim() === '') return own;
  const asked = ranges(accept);
  if (asked.some((r) => r.media === own || GENERIC.has(r.media))) return own;
  const schema = asked.map((r) => SCHEMA_TYPES.get(r.media)).find((f) => f !== undefined);
  if (schema !== undefined) {
    throw new StreamsError(
      406,
      ErrorCodes.notAcceptable,
      `the ${schema} embedded format is not supported (it needs a schema registry, which Sluice does not have); this consumer instance reads ${format}: Accept ${own}`,
    );
  }
  if (asked.some((r) => r.media.startsWith('application/vnd.kafka.'))) {
    throw new StreamsError(
      406,
      ErrorCodes.notAcceptable,
      `the requested embedded format does not match this consumer instance's format (${format}): Accept ${own} (got ${accept})`,
    );
  }
  throw notAcceptable(accept, own);
}
