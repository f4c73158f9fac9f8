// Streams settings, read once at start. The spec names none, so every name here is ours
// (documented in docs/streams.md); a bad value stops the start naming the variable.
// STREAMS_HOST and STREAMS_PORT are read by the core (CoreSettings.streams).

import { accessSync, constants } from 'node:fs';
import { randomId } from '../core/ids.js';
import { SettingsError, type EnvReader } from '../core/settings/index.js';
import type { TopicConfigs } from './log/types.js';
import { loadTracingSettings, type TracingSettings } from '../core/tracing/settings.js';

export type StreamsBackend = 'lmdb' | 'jetstream';
export const STREAMS_BACKENDS: readonly StreamsBackend[] = ['lmdb', 'jetstream'];

/** Where and how the JetStream backend connects (present only with STREAMS_BACKEND=jetstream). */
export interface NatsSettings {
  /** nats:// or tls:// URLs; the client picks one and fails over to the others. */
  readonly servers: readonly string[];
  readonly user: string | undefined;
  readonly password: string | undefined;
  readonly token: string | undefined;
  /** A NATS .creds file (user JWT + NKey seed), e.g. from `nsc`. */
  readonly credsFile: string | undefined;
  readonly tls:
    { readonly caFile?: string; readonly certFile?: string; readonly keyFile?: string } | undefined;
  /** Replicas of every stream and key-value bucket the service creates (1..5). */
  readonly replicas: number;
  /** First part of every stream, subject and bucket name, so several deployments share a cluster. */
  readonly prefix: string;
  /** Longest a JetStream operation (an append with its retries, a read) may take before a 503. */
  readonly timeoutMs: number;
}

export interface StreamsSettings extends StreamsNodeSettings {
  readonly backend: StreamsBackend;
  /** Set when backend is jetstream. */
  readonly nats: NatsSettings | undefined;
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
  /** retention.ms / retention.bytes of a topic created without them. */
  readonly defaultRetention: TopicConfigs;
  /** Time between two retention passes (Kafka's log.retention.check.interval.ms). */
  readonly retentionCheckIntervalMs: number;
  /** TRACING_* (docs/operations.md "Traces"); service name `sluice-streams` by default. */
  readonly tracing: TracingSettings;
}

export function loadStreamsSettings(env: EnvReader): StreamsSettings {
  const maxPartitions = env.int('STREAMS_MAX_PARTITIONS', 1024, { min: 1, max: 1_000_000 });
  const fetchTimeoutMaxMs = env.duration('STREAMS_FETCH_TIMEOUT_MAX', 30_000);
  const fetchMaxBytesLimit = env.int('STREAMS_FETCH_MAX_BYTES_LIMIT', 64 * 1024 * 1024, { min: 1024 });
  const backend = env.enumeration('STREAMS_BACKEND', STREAMS_BACKENDS, 'lmdb');
  const settings: StreamsSettings = {
    ...loadNodeSettings(env),
    backend,
    tracing: loadTracingSettings(env, 'sluice-streams'),
    nats: backend === 'jetstream' ? loadNatsSettings(env) : undefined,
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
    defaultRetention: {
      // Kafka's defaults: 7 days, no size bound.
      retentionMs: retentionSetting(env, 'STREAMS_DEFAULT_RETENTION_MS', 7 * 24 * 3600_000),
      retentionBytes: retentionSetting(env, 'STREAMS_DEFAULT_RETENTION_BYTES', -1),
    },
    retentionCheckIntervalMs: retentionInterval(env),
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

const HIDDEN = '(hidden)';

function loadNatsSettings(env: EnvReader): NatsSettings {
  const servers = env.list('STREAMS_NATS_SERVERS');
  if (servers.length === 0) {
    throw new SettingsError(
      'STREAMS_NATS_SERVERS',
      '',
      'comma-separated nats:// URLs (required with STREAMS_BACKEND=jetstream)',
    );
  }
  for (const server of servers) {
    let url: URL | undefined;
    try {
      url = new URL(server);
    } catch {
      url = undefined;
    }
    if (!url || !['nats:', 'tls:'].includes(url.protocol) || url.hostname === '') {
      throw new SettingsError('STREAMS_NATS_SERVERS', server, 'nats://host:port or tls://host:port URLs');
    }
    // Credentials belong in their own settings, where they are not printed with the URL.
    if (url.username !== '' || url.password !== '') {
      throw new SettingsError(
        'STREAMS_NATS_SERVERS',
        HIDDEN,
        'URLs without user or password (use STREAMS_NATS_USER/STREAMS_NATS_PASSWORD or STREAMS_NATS_TOKEN)',
      );
    }
  }
  const user = env.optionalString('STREAMS_NATS_USER');
  const password = env.optionalString('STREAMS_NATS_PASSWORD');
  const token = env.optionalString('STREAMS_NATS_TOKEN');
  const credsFile = env.optionalString('STREAMS_NATS_CREDS');
  if ((user === undefined) !== (password === undefined)) {
    throw new SettingsError(
      user === undefined ? 'STREAMS_NATS_USER' : 'STREAMS_NATS_PASSWORD',
      '',
      'STREAMS_NATS_USER and STREAMS_NATS_PASSWORD set together',
    );
  }
  const methods = [user !== undefined, token !== undefined, credsFile !== undefined].filter(Boolean).length;
  if (methods > 1) {
    throw new SettingsError(
      'STREAMS_NATS_TOKEN',
      HIDDEN,
      'one way to authenticate: STREAMS_NATS_USER/STREAMS_NATS_PASSWORD, STREAMS_NATS_TOKEN or STREAMS_NATS_CREDS',
    );
  }
  if (credsFile !== undefined) readable('STREAMS_NATS_CREDS', credsFile);
  const caFile = env.optionalString('STREAMS_NATS_TLS_CA');
  const certFile = env.optionalString('STREAMS_NATS_TLS_CERT');
  const keyFile = env.optionalString('STREAMS_NATS_TLS_KEY');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new SettingsError(
      certFile === undefined ? 'STREAMS_NATS_TLS_CERT' : 'STREAMS_NATS_TLS_KEY',
      '',
      'STREAMS_NATS_TLS_CERT and STREAMS_NATS_TLS_KEY set together (a client certificate and its key)',
    );
  }
  if (caFile !== undefined) readable('STREAMS_NATS_TLS_CA', caFile);
  if (certFile !== undefined) readable('STREAMS_NATS_TLS_CERT', certFile);
  if (keyFile !== undefined) readable('STREAMS_NATS_TLS_KEY', keyFile);
  const tls =
    caFile !== undefined || certFile !== undefined
      ? {
          ...(caFile !== undefined ? { caFile } : {}),
          ...(certFile !== undefined ? { certFile } : {}),
          ...(keyFile !== undefined ? { keyFile } : {}),
        }
      : undefined;
  const prefix = env.string('STREAMS_NATS_PREFIX', 'sluice');
  // Stream and bucket names allow letters, digits, - and _; subjects split on dots.
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(prefix)) {
    throw new SettingsError('STREAMS_NATS_PREFIX', prefix, '1 to 32 letters, digits, - or _');
  }
  const timeoutMs = env.duration('STREAMS_NATS_TIMEOUT', 5_000);
  if (timeoutMs < 100) {
    throw new SettingsError('STREAMS_NATS_TIMEOUT', `${timeoutMs}ms`, 'at least 100ms');
  }
  return Object.freeze({
    servers: Object.freeze(servers),
    user,
    password,
    token,
    credsFile,
    tls,
    replicas: env.int('STREAMS_REPLICAS', 1, { min: 1, max: 5 }),
    prefix,
    timeoutMs,
  });
}

function readable(variable: string, path: string): void {
  try {
    accessSync(path, constants.R_OK);
  } catch {
    throw new SettingsError(variable, path, 'a readable file');
  }
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

/** A positive integer or -1 (unlimited), as Kafka's retention configs. */
function retentionSetting(env: EnvReader, name: string, fallback: number): number {
  const value = env.int(name, fallback, { min: -1 });
  if (value === 0 || !Number.isSafeInteger(value)) {
    throw new SettingsError(name, String(value), 'a positive integer, or -1 for unlimited');
  }
  return value;
}

function retentionInterval(env: EnvReader): number {
  const ms = env.duration('STREAMS_RETENTION_CHECK_INTERVAL', 30_000);
  if (ms < 10 || ms > 24 * 3600_000) {
    throw new SettingsError('STREAMS_RETENTION_CHECK_INTERVAL', `${ms}ms`, 'a duration from 10ms to 24h');
  }
  return ms;
}
