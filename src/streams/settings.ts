// Streams settings, read once at start. The spec names none, so every name here is ours
// (documented in docs/streams.md); a bad value stops the start naming the variable.
// STREAMS_HOST and STREAMS_PORT are read by the core (CoreSettings.streams).

import { randomId } from '../core/ids.js';
import { SettingsError, type EnvReader } from '../core/settings/index.js';

export interface StreamsSettings extends StreamsNodeSettings {
  /** Advertised base for `base_uri` (behind a proxy); otherwise built from the request's Host. */
  readonly publicUrl: string | undefined;
  readonly defaultPartitions: number;
  readonly maxPartitions: number;
  readonly maxTopics: number;
  readonly maxBodyBytes: number;
  readonly maxRecordsPerBatch: number;
  readonly maxRecordBytes: number;
  readonly maxInstancesPerGroup: number;
  readonly fetchTimeoutDefaultMs: number;
  readonly fetchTimeoutMaxMs: number;
  readonly fetchMaxBytesDefault: number;
  readonly fetchMaxBytesLimit: number;
  readonly fetchMaxRecords: number;
  readonly instanceTimeoutMs: number;
  readonly wsMaxPayloadBytes: number;
}

export function loadStreamsSettings(env: EnvReader): StreamsSettings {
  const maxPartitions = env.int('STREAMS_MAX_PARTITIONS', 1024, { min: 1, max: 1_000_000 });
  const fetchTimeoutMaxMs = env.duration('STREAMS_FETCH_TIMEOUT_MAX', 30_000);
  const fetchMaxBytesLimit = env.int('STREAMS_FETCH_MAX_BYTES_LIMIT', 64 * 1024 * 1024, { min: 1024 });
  const settings: StreamsSettings = {
    ...loadNodeSettings(env),
    publicUrl: normalisePublicUrl(env.optionalString('STREAMS_PUBLIC_URL')),
    defaultPartitions: env.int('STREAMS_DEFAULT_PARTITIONS', 1, { min: 1, max: maxPartitions }),
    maxPartitions,
    maxTopics: env.int('STREAMS_MAX_TOPICS', 10_000, { min: 1 }),
    maxBodyBytes: env.int('STREAMS_MAX_BODY_BYTES', 16 * 1024 * 1024, { min: 1024 }),
    maxRecordsPerBatch: env.int('STREAMS_MAX_RECORDS_PER_BATCH', 10_000, { min: 1 }),
    maxRecordBytes: env.int('STREAMS_MAX_RECORD_BYTES', 1024 * 1024, { min: 64 }),
    maxInstancesPerGroup: env.int('STREAMS_MAX_INSTANCES_PER_GROUP', 100, { min: 1 }),
    fetchTimeoutDefaultMs: env.duration('STREAMS_FETCH_TIMEOUT', 1_000),
    fetchTimeoutMaxMs,
    fetchMaxBytesDefault: env.int('STREAMS_FETCH_MAX_BYTES', 1024 * 1024, {
      min: 1,
      max: fetchMaxBytesLimit,
    }),
    fetchMaxBytesLimit,
    fetchMaxRecords: env.int('STREAMS_FETCH_MAX_RECORDS', 1000, { min: 1, max: 1_000_000 }),
    instanceTimeoutMs: env.duration('STREAMS_INSTANCE_TIMEOUT', 300_000),
    wsMaxPayloadBytes: env.int('STREAMS_WS_MAX_PAYLOAD_BYTES', 64 * 1024, { min: 1024 }),
  };
  if (settings.fetchTimeoutDefaultMs > settings.fetchTimeoutMaxMs) {
    throw new SettingsError(
      'STREAMS_FETCH_TIMEOUT',
      `${settings.fetchTimeoutDefaultMs}ms`,
      `at most STREAMS_FETCH_TIMEOUT_MAX (${settings.fetchTimeoutMaxMs}ms)`,
    );
  }
  if (settings.instanceTimeoutMs <= 0) {
    throw new SettingsError(
      'STREAMS_INSTANCE_TIMEOUT',
      `${settings.instanceTimeoutMs}ms`,
      'a positive duration',
    );
  }
  return Object.freeze(settings);
}

function normalisePublicUrl(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new SettingsError('STREAMS_PUBLIC_URL', value, 'an absolute http(s) URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new SettingsError('STREAMS_PUBLIC_URL', value, 'an absolute http(s) URL');
  }
  // base_uri is this value plus a path: a query, fragment or user name would end up in front of
  // the path (or swallow it) and send clients somewhere else.
  if (/[?#]/.test(value) || url.username !== '' || url.password !== '') {
    throw new SettingsError(
      'STREAMS_PUBLIC_URL',
      value,
      'an absolute http(s) URL without user name, query or fragment',
    );
  }
  return value.replace(/\/+$/, '');
}

/** How this node shows itself to the other Sluice nodes sharing a JetStream cluster. */
export interface StreamsNodeSettings {
  /** Names this node in group membership; consumer instances belong to the node that created them. */
  readonly nodeId: string;
  /** How often the node refreshes its heartbeat in the group-state bucket. */
  readonly nodeHeartbeatMs: number;
  /** A node whose heartbeat was not refreshed for this long is taken for dead by the others. */
  readonly nodeTimeoutMs: number;
}

const NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;

function loadNodeSettings(env: EnvReader): StreamsNodeSettings {
  const nodeId = env.optionalString('STREAMS_NODE_ID') ?? randomId(6, 'node-');
  if (!NODE_ID.test(nodeId)) {
    throw new SettingsError('STREAMS_NODE_ID', nodeId, '1-64 characters of A-Z a-z 0-9 _ -');
  }
  const nodeHeartbeatMs = env.duration('STREAMS_NODE_HEARTBEAT', 1_000);
  const nodeTimeoutMs = env.duration('STREAMS_NODE_TIMEOUT', 10_000);
  if (nodeHeartbeatMs <= 0) {
    throw new SettingsError('STREAMS_NODE_HEARTBEAT', `${nodeHeartbeatMs}ms`, 'a positive duration');
  }
  if (nodeTimeoutMs <= nodeHeartbeatMs) {
    throw new SettingsError(
      'STREAMS_NODE_TIMEOUT',
      `${nodeTimeoutMs}ms`,
      `longer than STREAMS_NODE_HEARTBEAT (${nodeHeartbeatMs}ms)`,
    );
  }
  return { nodeId, nodeHeartbeatMs, nodeTimeoutMs };
}
