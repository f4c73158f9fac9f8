// Media types. The spec's vendor type is what we emit; plain application/json is accepted and
// honoured too, because clients forced to send vendor types is a standing complaint against
// Kafka REST proxies (kafka-rest#1000).

import { StreamsError, ErrorCodes } from '../errors.js';

export const STREAMS_JSON = 'application/vnd.streams.json.v2+json';
export const PLAIN_JSON = 'application/json';
export const BODY_TYPES = [STREAMS_JSON, PLAIN_JSON] as const;

/**
 * The type to answer with. No Accept header means "anything" (RFC 9110 §12.5.1); a header that
 * admits neither JSON type is a 406 with Confluent's 40601 when `required`, otherwise ignored.
 */
export function negotiate(accept: string | undefined, required: boolean): string {
  if (accept === undefined || accept.trim() === '') return STREAMS_JSON;
  let plain = false;
  for (const part of accept.split(',')) {
    const [rangeRaw, ...params] = part.split(';');
    const range = rangeRaw!.trim().toLowerCase();
    const q = params.map((p) => p.trim().toLowerCase()).find((p) => p.startsWith('q='));
    if (q !== undefined && Number(q.slice(2)) === 0) continue;
    if (range === STREAMS_JSON || range === '*/*' || range === 'application/*') return STREAMS_JSON;
    if (range === PLAIN_JSON) plain = true;
  }
  if (plain) return PLAIN_JSON;
  if (!required) return STREAMS_JSON;
  throw new StreamsError(406, ErrorCodes.notAcceptable, `Accept must allow ${STREAMS_JSON} (got ${accept})`);
}
