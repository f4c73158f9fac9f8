// Spans of the streams API: one per produce request and one per consumer fetch, continuing the
// caller's W3C `traceparent` header. They carry the topic and counts only, never keys or values
// (docs/security.md). With tracing disabled the request runs with no span.

import type { HttpRequest } from '../../core/http/index.js';
import type { SpanAttributes, TraceSpan, Tracing } from '../../core/tracing/index.js';
import type { ConsumedRecord } from '../groups/coordinator.js';
import type { ProduceRecord } from './validate.js';

/** Runs `work` inside a server span named `name`; the span fails with what `work` throws. */
export async function traced<T>(
  tracing: Tracing,
  req: HttpRequest,
  name: string,
  attributes: SpanAttributes,
  work: (span: TraceSpan | undefined) => Promise<T>,
): Promise<T> {
  if (!tracing.enabled) return work(undefined);
  const header = req.headers['traceparent'];
  const span = tracing.startSpan(name, {
    kind: 'server',
    attributes,
    parent: typeof header === 'string' ? header : undefined,
    startTime: undefined,
  });
  try {
    return await work(span);
  } catch (err) {
    span.fail(err);
    throw err;
  } finally {
    span.end(undefined);
  }
}

/** Record count, distinct partitions and key + value bytes of a stored produce batch. */
export function produceAttributes(
  records: readonly ProduceRecord[],
  partitions: readonly number[],
): SpanAttributes {
  let bytes = 0;
  for (const r of records)
    bytes += Buffer.byteLength(r.valueJson) + (r.key === null ? 0 : Buffer.byteLength(r.key));
  return {
    'streams.records': records.length,
    'streams.partitions': new Set(partitions).size,
    'streams.bytes': bytes,
  };
}

/** Record count, distinct topic partitions and value bytes of a fetch's answer. */
export function fetchAttributes(records: readonly ConsumedRecord[]): SpanAttributes {
  let bytes = 0;
  const partitions = new Set<string>();
  const topics = new Set<string>();
  for (const r of records) {
    bytes += r.record.value.length + (r.record.key === null ? 0 : Buffer.byteLength(r.record.key));
    partitions.add(`${r.topic}\u0000${r.record.partition}`);
    topics.add(r.topic);
  }
  return {
    'streams.records': records.length,
    'streams.partitions': partitions.size,
    'streams.bytes': bytes,
    'streams.topics': [...topics].sort().join(',').slice(0, 1024),
  };
}
