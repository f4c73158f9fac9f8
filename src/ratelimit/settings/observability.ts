// Settings of the rate limit service's statistics outputs, tracing, gRPC transport security and
// management-server client, with the spec's names and defaults. The upstream names are read as
// aliases (second in each list) so an existing deployment's environment keeps working.

import { readFileSync } from 'node:fs';
import { SettingsError, type EnvReader } from '../../core/settings/index.js';
import {
  loadTracingSettings as loadSharedTracingSettings,
  type TracingSettings,
} from '../../core/tracing/settings.js';

export type { TracingSettings };

export interface Mogrifier {
  readonly name: string;
  readonly pattern: RegExp;
  /** Metric name template; `$0`, `$1`… are the pattern's groups. */
  readonly metricName: string;
  /** Tag key → value template, in the order given. */
  readonly tags: readonly (readonly [string, string])[];
}

/** `statsd`: statsd lines over UDP/TCP; `stdout`: printed each flush; `off`: nothing pushed. */
export type PushMode = 'statsd' | 'stdout' | 'off';

export interface StatsOutputSettings {
  readonly disabled: boolean;
  readonly flushIntervalMs: number;
  readonly extraTags: Readonly<Record<string, string>>;
  readonly push: {
    readonly mode: PushMode;
    readonly host: string;
    readonly port: number;
    readonly protocol: 'udp' | 'tcp';
    /** Tag-capable (DogStatsD) lines instead of plain statsd. */
    readonly tagged: boolean;
    readonly mogrifiers: readonly Mogrifier[];
  };
  readonly pull: {
    readonly enabled: boolean;
    readonly host: string;
    readonly port: number;
    readonly path: string;
    /** Path of a statsd-exporter style mapping file; replaces the built-in mapping. */
    readonly mapperYaml: string | undefined;
    readonly responseTimeAsMilliseconds: boolean;
  };
}

export interface XdsBackoffSettings {
  readonly jitter: boolean;
  readonly initialIntervalMs: number;
  readonly maxIntervalMs: number;
  readonly randomFactor: number;
}

export interface XdsSettings {
  readonly nodeId: string;
  readonly nodeMetadata: Readonly<Record<string, string>>;
  readonly serverUrl: string;
  readonly connectRetryIntervalMs: number;
  readonly tls:
    | {
        readonly certFile?: string;
        readonly keyFile?: string;
        readonly caFile?: string;
        readonly serverName?: string;
      }
    | undefined;
  readonly additionalHeaders: Readonly<Record<string, string>>;
  readonly backoff: XdsBackoffSettings;
  readonly maxMessageBytes: number | undefined;
}

export interface GrpcTlsSettings {
  readonly certFile: string;
  readonly keyFile: string;
  readonly clientCaFile: string | undefined;
  readonly clientSan: string | undefined;
  readonly reloadIntervalMs: number;
}

const PORT = { min: 0, max: 65535 };

export function loadStatsOutputSettings(env: EnvReader): StatsOutputSettings {
  const pullEnabled = env.bool(['USE_PULLMETRICS', 'USE_PROMETHEUS'], false);
  const tagged = env.bool(['USE_TAGGEDSTATS', 'USE_DOG_STATSD'], false);
  const pushNames = ['USE_PUSHSTATS', 'USE_STATSD'];
  // With the pull endpoint on, pushing to a statsd that nobody configured would only spray UDP
  // at localhost:8125, and the upstream service refuses two sinks at once; so an explicit
  // USE_PUSHSTATS=true is needed for both. Tagged output implies push, as upstream.
  const pushExplicit = env.has(pushNames);
  const push = env.bool(pushNames, true);
  let mode: PushMode;
  if (tagged || (push && (!pullEnabled || pushExplicit))) mode = 'statsd';
  else if (pullEnabled) mode = 'off';
  else mode = 'stdout';
  const addr = parseListenAddress(env, ['PULLMETRICS_ADDR', 'PROMETHEUS_ADDR'], ':9090');
  const path = env.string(['PULLMETRICS_PATH', 'PROMETHEUS_PATH'], '/metrics');
  if (!path.startsWith('/'))
    throw new SettingsError(
      env.lookup(['PULLMETRICS_PATH', 'PROMETHEUS_PATH'])!.name,
      path,
      'a path starting with /',
    );
  const mapperYaml = env.optionalString(['PULLMETRICS_MAPPER_YAML', 'PROMETHEUS_MAPPER_YAML']);
  const flushIntervalMs = env.duration('STATS_FLUSH_INTERVAL', 10_000);
  if (flushIntervalMs <= 0)
    throw new SettingsError(
      'STATS_FLUSH_INTERVAL',
      env.string('STATS_FLUSH_INTERVAL', ''),
      'a positive duration',
    );
  return Object.freeze({
    disabled: env.bool('DISABLE_STATS', false),
    flushIntervalMs,
    extraTags: Object.freeze(env.pairs('EXTRA_TAGS')),
    push: Object.freeze({
      mode,
      host: env.string(['PUSHSTATS_HOST', 'STATSD_HOST'], 'localhost'),
      port: env.int(['PUSHSTATS_PORT', 'STATSD_PORT'], 8125, { min: 1, max: 65535 }),
      protocol: env.enumeration(['PUSHSTATS_PROTOCOL', 'STATSD_PROTOCOL'], ['udp', 'tcp'] as const, 'udp'),
      tagged,
      mogrifiers: Object.freeze(tagged ? loadMogrifiers(env) : []),
    }),
    pull: Object.freeze({
      enabled: pullEnabled,
      host: addr.host,
      port: addr.port,
      path,
      mapperYaml,
      responseTimeAsMilliseconds: env.bool(
        ['PULLMETRICS_RESPONSE_TIME_AS_MILLISECONDS', 'PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS'],
        false,
      ),
    }),
  });
}

function loadMogrifiers(env: EnvReader): Mogrifier[] {
  const names = env.list(['TAGGEDSTATS_MOGRIFIERS', 'USE_DOG_STATSD_MOGRIFIERS']);
  return names.map((name) => {
    const v = (suffix: string): string[] => [
      `TAGGEDSTATS_MOGRIFIER_${name}_${suffix}`,
      `DOG_STATSD_MOGRIFIER_${name}_${suffix}`,
    ];
    const patternFound = env.lookup(v('PATTERN'));
    if (!patternFound)
      throw new SettingsError(v('PATTERN')[0]!, '', `a regular expression (mogrifier ${name} is listed)`);
    let pattern: RegExp;
    try {
      pattern = new RegExp(patternFound.value);
    } catch (err) {
      throw new SettingsError(
        patternFound.name,
        patternFound.value,
        `a valid regular expression (${(err as Error).message})`,
      );
    }
    const metricName = env.optionalString(v('NAME'));
    if (metricName === undefined)
      throw new SettingsError(v('NAME')[0]!, '', `a metric name (mogrifier ${name} is listed)`);
    const tagsFound = env.lookup(v('TAGS'));
    const tags: [string, string][] = [];
    if (tagsFound) {
      for (const item of tagsFound.value.split(',')) {
        const text = item.trim();
        if (text === '') continue;
        const colon = text.indexOf(':');
        if (colon <= 0 || colon === text.length - 1)
          throw new SettingsError(tagsFound.name, tagsFound.value, 'a comma list of key:value tags');
        tags.push([text.slice(0, colon), text.slice(colon + 1)]);
      }
    }
    return Object.freeze({ name, pattern, metricName, tags: Object.freeze(tags) });
  });
}

/** `:9090`, `0.0.0.0:9090`, `[::1]:9090` (Go listen-address forms). */
function parseListenAddress(
  env: EnvReader,
  names: string[],
  fallback: string,
): { host: string; port: number } {
  const found = env.lookup(names);
  const text = found?.value ?? fallback;
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port < PORT.min || port > PORT.max)
    throw new SettingsError(
      found?.name ?? names[0]!,
      text,
      'a listen address such as :9090 or 127.0.0.1:9090',
    );
  const host = m[1] ?? m[2] ?? '';
  return { host: host === '' ? '0.0.0.0' : host, port };
}

/** The rate limit service's TRACING_* settings: the shared ones, named `RateLimit` by default. */
export function loadTracingSettings(env: EnvReader): TracingSettings {
  return loadSharedTracingSettings(env, 'RateLimit');
}

export function loadXdsSettings(env: EnvReader): XdsSettings {
  const useTls = env.bool('CONFIG_GRPC_XDS_SERVER_USE_TLS', false);
  const certFile = env.optionalString('CONFIG_GRPC_XDS_CLIENT_TLS_CERT');
  const keyFile = env.optionalString('CONFIG_GRPC_XDS_CLIENT_TLS_KEY');
  const caFile = env.optionalString('CONFIG_GRPC_XDS_SERVER_TLS_CACERT');
  const serverName = env.optionalString('CONFIG_GRPC_XDS_SERVER_TLS_SAN');
  if ((certFile === undefined) !== (keyFile === undefined)) {
    const missing =
      certFile === undefined ? 'CONFIG_GRPC_XDS_CLIENT_TLS_CERT' : 'CONFIG_GRPC_XDS_CLIENT_TLS_KEY';
    throw new SettingsError(missing, '', 'a file path (the client certificate and key go together)');
  }
  if (useTls) {
    for (const [name, file] of [
      ['CONFIG_GRPC_XDS_CLIENT_TLS_CERT', certFile],
      ['CONFIG_GRPC_XDS_CLIENT_TLS_KEY', keyFile],
      ['CONFIG_GRPC_XDS_SERVER_TLS_CACERT', caFile],
    ] as const) {
      if (file !== undefined) readable(name, file);
    }
  }
  const initial = env.duration('XDS_CLIENT_BACKOFF_INITIAL_INTERVAL', 10_000);
  const max = env.duration('XDS_CLIENT_BACKOFF_MAX_INTERVAL', 60_000);
  if (initial <= 0)
    throw new SettingsError(
      'XDS_CLIENT_BACKOFF_INITIAL_INTERVAL',
      env.string('XDS_CLIENT_BACKOFF_INITIAL_INTERVAL', ''),
      'a positive duration',
    );
  if (max < initial)
    throw new SettingsError(
      'XDS_CLIENT_BACKOFF_MAX_INTERVAL',
      env.string('XDS_CLIENT_BACKOFF_MAX_INTERVAL', ''),
      'a duration not shorter than XDS_CLIENT_BACKOFF_INITIAL_INTERVAL',
    );
  const retry = env.duration('CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL', 3_000);
  if (retry <= 0)
    throw new SettingsError(
      'CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL',
      env.string('CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL', ''),
      'a positive duration',
    );
  const maxMsg = env.has('XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES')
    ? env.int('XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES', 0, { min: 1, max: 2 ** 31 - 1 })
    : undefined;
  const tls: { certFile?: string; keyFile?: string; caFile?: string; serverName?: string } = {};
  if (certFile !== undefined) tls.certFile = certFile;
  if (keyFile !== undefined) tls.keyFile = keyFile;
  if (caFile !== undefined) tls.caFile = caFile;
  if (serverName !== undefined) tls.serverName = serverName;
  return Object.freeze({
    nodeId: env.string('CONFIG_GRPC_XDS_NODE_ID', 'default'),
    nodeMetadata: Object.freeze(parseLoosePairs(env, 'CONFIG_GRPC_XDS_NODE_METADATA')),
    serverUrl: env.string('CONFIG_GRPC_XDS_SERVER_URL', 'localhost:18000'),
    connectRetryIntervalMs: retry,
    tls: useTls ? Object.freeze(tls) : undefined,
    additionalHeaders: Object.freeze(lowerKeys(env.pairs('CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS'))),
    backoff: Object.freeze({
      // The spec leaves the default blank; the upstream code defaults to true.
      jitter: env.bool('XDS_CLIENT_BACKOFF_JITTER', true),
      initialIntervalMs: initial,
      maxIntervalMs: max,
      randomFactor: env.float('XDS_CLIENT_BACKOFF_RANDOM_FACTOR', 0.5, { min: 0, max: 1 }),
    }),
    maxMessageBytes: maxMsg,
  });
}

/** Node metadata upstream takes `k1:v1,k2=v2`; both separators are accepted. */
function parseLoosePairs(env: EnvReader, name: string): Record<string, string> {
  const value = env.optionalString(name);
  const out: Record<string, string> = {};
  if (value === undefined) return out;
  for (const raw of value.split(',')) {
    const item = raw.trim().replace(/^<(.*)>$/, '$1');
    if (item === '') continue;
    const at = item.search(/[:=]/);
    if (at <= 0) throw new SettingsError(name, value, 'a comma list of key:value pairs');
    out[item.slice(0, at).trim()] = item.slice(at + 1).trim();
  }
  return out;
}

function lowerKeys(record: Record<string, string>): Record<string, string> {
  // gRPC metadata keys are lower case on the wire; grpc-js refuses upper-case ones.
  return Object.fromEntries(Object.entries(record).map(([k, v]) => [k.toLowerCase(), v]));
}

function readable(name: string, path: string): void {
  try {
    readFileSync(path);
  } catch (err) {
    throw new SettingsError(
      name,
      path,
      `a readable file (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
}

export function loadGrpcTlsSettings(env: EnvReader): GrpcTlsSettings | undefined {
  const clientCaFile = env.optionalString('GRPC_CLIENT_TLS_CACERT');
  const clientSan = env.optionalString('GRPC_CLIENT_TLS_SAN');
  if (!env.bool('GRPC_SERVER_USE_TLS', false)) return undefined;
  const certFile = env.optionalString('GRPC_SERVER_TLS_CERT');
  const keyFile = env.optionalString('GRPC_SERVER_TLS_KEY');
  if (certFile === undefined)
    throw new SettingsError(
      'GRPC_SERVER_TLS_CERT',
      '',
      'the server certificate file (GRPC_SERVER_USE_TLS is true)',
    );
  if (keyFile === undefined)
    throw new SettingsError(
      'GRPC_SERVER_TLS_KEY',
      '',
      'the server private key file (GRPC_SERVER_USE_TLS is true)',
    );
  readable('GRPC_SERVER_TLS_CERT', certFile);
  readable('GRPC_SERVER_TLS_KEY', keyFile);
  if (clientCaFile !== undefined) readable('GRPC_CLIENT_TLS_CACERT', clientCaFile);
  if (clientSan !== undefined && clientCaFile === undefined)
    throw new SettingsError(
      'GRPC_CLIENT_TLS_SAN',
      clientSan,
      'to be used with GRPC_CLIENT_TLS_CACERT (mutual TLS)',
    );
  const reloadIntervalMs = env.duration('GRPC_SERVER_TLS_RELOAD_INTERVAL', 10_000);
  return Object.freeze({ certFile, keyFile, clientCaFile, clientSan, reloadIntervalMs });
}
