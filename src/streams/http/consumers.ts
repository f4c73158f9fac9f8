// Creating a consumer instance, shared by POST /streams/consumers/<group> and Confluent's
// POST /consumers/<group>: the id is the client's `name` when it sent one (Confluent's rule:
// a name already used in the group is 409 / 40902), otherwise a random UUID.

import type { HttpRequest } from '../../core/http/index.js';
import { uuid } from '../../core/ids.js';
import { ErrorCodes, StreamsError } from '../errors.js';
import type { ConsumedRecord, ConsumerInstance } from '../groups/coordinator.js';
import { baseFromHost } from './host.js';
import type { StreamsDeps } from './routes.js';
import { fetchAttributes, traced } from './tracing.js';
import { checkName, querySignedInt, type ConsumerCreation } from './validate.js';

export interface CreatedInstance {
  readonly instance_id: string;
  readonly base_uri: string;
}

const instanceExists = (group: string, id: string): StreamsError =>
  new StreamsError(
    409,
    ErrorCodes.instanceExists,
    `consumer instance '${id}' already exists in group '${group}'; pick another name or DELETE it first`,
  );

/** `prefix` is the path the instance's endpoints live under: `/streams` or `` (Confluent's). */
export async function createInstance(
  deps: StreamsDeps,
  req: HttpRequest,
  group: string,
  creation: ConsumerCreation,
  prefix: string,
): Promise<CreatedInstance> {
  checkName('consumer group', group, ErrorCodes.invalidConsumerConfig);
  const id = creation.name ?? uuid();
  if (creation.name !== undefined && deps.groups.isMember(group, id)) throw instanceExists(group, id);
  const base = deps.settings.publicUrl ?? baseFromHost(req.headers.host, deps.baseUrl);
  const baseUri = `${base}${prefix}/consumers/${encodeURIComponent(group)}/instances/${encodeURIComponent(id)}`;
  // The base_uri is kept with the instance: another node names it to clients that ask there.
  const instance = deps.groups.create(group, creation.config, id, baseUri);
  await deps.groups.flush();
  // Another node created the same name at the same moment and its write came first.
  if (instance.deleted) throw instanceExists(group, id);
  return { instance_id: id, base_uri: baseUri };
}

/**
 * One long-poll fetch for an instance, with `timeout` and `max_bytes` read from the query as
 * docs/streams.md says; resolves with undefined when the client went away meanwhile.
 */
export async function fetchRecords(
  deps: StreamsDeps,
  req: HttpRequest,
  instance: ConsumerInstance,
): Promise<ConsumedRecord[] | undefined> {
  const { settings } = deps;
  // As Confluent's v2 consumer resource (ConsumersResource.readRecords, KafkaConsumerReadTask):
  // a negative `timeout` is the instance's default wait, and `max_bytes` of 0 or less sets no
  // limit of the request's own, so the service's cap applies. `timeout=0` answers at once
  // (Confluent: the default wait; docs/streams.md lists the difference).
  const timeout = querySignedInt(req.query, 'timeout', settings.fetchTimeoutMaxMs);
  const timeoutMs =
    timeout === undefined || timeout < 0
      ? (instance.config.requestTimeoutMs ?? settings.fetchTimeoutDefaultMs)
      : timeout;
  const asked = querySignedInt(req.query, 'max_bytes', settings.fetchMaxBytesLimit);
  const maxBytes =
    asked === undefined ? settings.fetchMaxBytesDefault : asked <= 0 ? settings.fetchMaxBytesLimit : asked;
  const abort = new AbortController();
  req.onAbort(() => abort.abort());
  const records = await deps.groups.fetch(instance, {
    timeoutMs,
    maxBytes,
    maxRecords: settings.fetchMaxRecords,
    signal: abort.signal,
  });
  return req.aborted ? undefined : records;
}

/** fetchRecords inside a `streams.fetch` span (when tracing is on) with the group and counts. */
export function tracedFetch(
  deps: StreamsDeps,
  req: HttpRequest,
  instance: ConsumerInstance,
): Promise<ConsumedRecord[] | undefined> {
  return traced(deps.tracing, req, 'streams.fetch', { 'streams.group': instance.group }, async (span) => {
    const records = await fetchRecords(deps, req, instance);
    if (records !== undefined) span?.setAttributes(fetchAttributes(records));
    return records;
  });
}
