// Settings of the shared counter stores (Redis, the object cache) and of what wraps them
// (per-second routing, the local over-limit cache, the failure policy). Names are the spec's;
// the upstream names (REDIS_*, REDIS_PERSECOND_*, MEMCACHE_*) are read as aliases so an
// existing deployment's environment moves over unchanged. The spec name wins when both are set.

import { SettingsError, type EnvReader } from '../../core/settings/index.js';

export type BackendType = 'memory' | 'redis' | 'objcache';
export type RedisTopology = 'single' | 'sentinel' | 'cluster';
export type PoolOnEmptyBehavior = 'CREATE' | 'ERROR' | 'WAIT';
export type FailureMode = 'open' | 'closed';

export interface Credentials {
  readonly username: string | undefined;
  readonly password: string;
}

export interface TlsFiles {
  readonly clientCert: string | undefined;
  readonly clientKey: string | undefined;
  readonly caCert: string | undefined;
  readonly skipHostnameVerification: boolean;
}

export interface HostPort {
  readonly host: string;
  readonly port: number;
}

export interface RedisSettings {
  /** Which family the values came from, for error messages: `KVSTORE` or `KVSTORE_PERSECOND`. */
  readonly family: string;
  readonly topology: RedisTopology;
  /** single: one address; cluster: every node given; sentinel: the sentinels. */
  readonly nodes: readonly HostPort[];
  /** single only: a unix socket path instead of nodes. */
  readonly socketPath: string | undefined;
  /** sentinel only. */
  readonly masterName: string | undefined;
  readonly poolSize: number;
  readonly timeoutMs: number;
  readonly poolOnEmptyBehavior: PoolOnEmptyBehavior;
  readonly poolOnEmptyWaitMs: number;
  readonly pipelineWindowMs: number;
  /** 0 = automatic (pool size); otherwise concurrent per-node groups, capped at the pool size. */
  readonly clusterPipelineParallelism: number;
  readonly auth: Credentials | undefined;
  readonly sentinelAuth: Credentials | undefined;
  /** undefined = plain TCP. */
  readonly tls: TlsFiles | undefined;
}

export interface ObjcacheSettings {
  readonly hostPorts: readonly HostPort[];
  readonly srv: string | undefined;
  readonly srvRefreshMs: number;
  readonly maxIdleConns: number;
  readonly timeoutMs: number;
  readonly tls: TlsFiles | undefined;
}

export interface StoreSettings {
  readonly backend: BackendType;
  readonly redis: RedisSettings | undefined;
  /** Per-second limits go here when KVSTORE_PERSECOND is true. */
  readonly perSecond: RedisSettings | undefined;
  readonly objcache: ObjcacheSettings | undefined;
  readonly localCacheSizeBytes: number;
  readonly failureMode: FailureMode;
  readonly healthCheckActiveConnection: boolean;
  /** Upper bound (exclusive) of the random seconds added to every expiry; 0 disables. */
  readonly expirationJitterMaxSeconds: number;
}

/** `['KVSTORE_X', 'REDIS_X']` — the spec name first, so it wins. */
function kv(family: string, suffix: string): string[] {
  return [`${family}_${suffix}`, `${family.replace(/^KVSTORE/, 'REDIS')}_${suffix}`];
}

function oc(suffix: string): string[] {
  return [`OBJCACHE_${suffix}`, `MEMCACHE_${suffix}`];
}

export function parseCredentials(variable: string, text: string | undefined): Credentials | undefined {
  if (text === undefined) return undefined;
  // Only the first colon separates: passwords may contain colons, user names may not (Redis ACL).
  const colon = text.indexOf(':');
  if (colon < 0) return Object.freeze({ username: undefined, password: text });
  const username = text.slice(0, colon);
  const password = text.slice(colon + 1);
  if (username === '')
    throw new SettingsError(
      variable,
      '<hidden>',
      '<password> or <username>:<password> with a non-empty user name',
    );
  return Object.freeze({ username, password });
}

export function parseHostPort(variable: string, raw: string, text: string, defaultPort?: number): HostPort {
  const item = text.trim().replace(/^rediss?:\/\//, '');
  const m = /^(?:\[([^\]]+)\]|([^:/\s]+))(?::(\d+))?$/.exec(item);
  const portText = m?.[3];
  if (!m || (portText === undefined && defaultPort === undefined)) {
    throw new SettingsError(variable, raw, 'host:port items');
  }
  const port = portText === undefined ? defaultPort! : Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new SettingsError(variable, raw, 'host:port with a port between 1 and 65535');
  return Object.freeze({ host: m[1] ?? m[2]!, port });
}

function tlsFiles(env: EnvReader): TlsFiles {
  return Object.freeze({
    clientCert: env.optionalString(kv('KVSTORE', 'TLS_CLIENT_CERT')),
    clientKey: env.optionalString(kv('KVSTORE', 'TLS_CLIENT_KEY')),
    caCert: env.optionalString(kv('KVSTORE', 'TLS_CACERT')),
    skipHostnameVerification: env.bool(kv('KVSTORE', 'TLS_SKIP_HOSTNAME_VERIFICATION'), false),
  });
}

function loadRedis(env: EnvReader, family: 'KVSTORE' | 'KVSTORE_PERSECOND'): RedisSettings {
  const urlName = kv(family, 'URL');
  const found = env.lookup(urlName);
  if (!found) throw new SettingsError(urlName[0]!, '', `an address (${family} store selected)`);
  const topology = env.enumeration(kv(family, 'TYPE'), ['single', 'sentinel', 'cluster'] as const, 'single');
  const socketDefault = found.value.startsWith('/') ? 'unix' : 'tcp';
  const socketType = env.enumeration(kv(family, 'SOCKET_TYPE'), ['tcp', 'unix'] as const, socketDefault);
  const poolSize = env.int(kv(family, 'POOL_SIZE'), 10, { min: 1, max: 1024 });
  const pipelineWindowMs = env.duration(kv(family, 'PIPELINE_WINDOW'), 0);
  const parallelism = env.int(kv(family, 'CLUSTER_PIPELINE_PARALLELISM'), 1, { min: 0, max: 1 << 16 });

  let nodes: HostPort[] = [];
  let socketPath: string | undefined;
  let masterName: string | undefined;
  const items = found.value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (topology === 'single') {
    if (items.length !== 1) throw new SettingsError(found.name, found.value, 'one address for type single');
    if (socketType === 'unix') socketPath = items[0]!;
    else nodes = [parseHostPort(found.name, found.value, items[0]!)];
  } else {
    if (socketType === 'unix')
      throw new SettingsError(
        kv(family, 'SOCKET_TYPE')[0]!,
        'unix',
        `tcp: type ${topology} needs host:port addresses`,
      );
    if (topology === 'sentinel') {
      // The spec's rule: a comma list of at least two items, the master name first.
      if (items.length < 2) {
        throw new SettingsError(
          found.name,
          found.value,
          '<master name>,<sentinel host:port>,... (the master name first, then at least one sentinel)',
        );
      }
      masterName = items[0]!;
      nodes = items.slice(1).map((item) => parseHostPort(found.name, found.value, item));
    } else {
      nodes = items.map((item) => parseHostPort(found.name, found.value, item));
      if (nodes.length === 0)
        throw new SettingsError(found.name, found.value, 'a comma list of cluster nodes');
      if (pipelineWindowMs === 0) {
        const windowName = kv(family, 'PIPELINE_WINDOW')[0]!;
        throw new SettingsError(
          windowName,
          env.string(kv(family, 'PIPELINE_WINDOW'), '0'),
          `a non-zero duration in cluster mode (${kv(family, 'TYPE')[0]}=cluster), e.g. 150us`,
        );
      }
    }
  }

  const tlsOn = env.bool(kv(family, 'TLS'), false);
  const authName = kv(family, 'AUTH');
  const sentinelAuthName = kv(family, 'SENTINEL_AUTH');
  const sentinelAuth = parseCredentials(sentinelAuthName[0]!, env.optionalString(sentinelAuthName));
  if (sentinelAuth && topology !== 'sentinel') {
    throw new SettingsError(
      sentinelAuthName[0]!,
      '<hidden>',
      `unset unless ${kv(family, 'TYPE')[0]}=sentinel`,
    );
  }
  return Object.freeze({
    family,
    topology,
    nodes: Object.freeze(nodes),
    socketPath,
    masterName,
    poolSize,
    timeoutMs: env.duration(kv(family, 'TIMEOUT'), 10_000),
    poolOnEmptyBehavior: env.enumeration(
      kv(family, 'POOL_ON_EMPTY_BEHAVIOR'),
      ['CREATE', 'ERROR', 'WAIT'] as const,
      'CREATE',
    ),
    poolOnEmptyWaitMs: env.duration(kv(family, 'POOL_ON_EMPTY_WAIT_DURATION'), 1000),
    pipelineWindowMs,
    clusterPipelineParallelism: parallelism === 0 ? poolSize : Math.min(parallelism, poolSize),
    auth: parseCredentials(authName[0]!, env.optionalString(authName)),
    sentinelAuth,
    tls: tlsOn ? tlsFiles(env) : undefined,
  });
}

function loadObjcache(env: EnvReader, timeoutMs: number): ObjcacheSettings {
  const hostPortName = oc('HOST_PORT');
  const srvName = oc('SRV');
  const hp = env.lookup(hostPortName);
  const srv = env.optionalString(srvName);
  if (hp && srv !== undefined)
    throw new SettingsError(srvName[0]!, srv, `unset when ${hp.name} is set (the two are exclusive)`);
  if (!hp && srv === undefined)
    throw new SettingsError(hostPortName[0]!, '', `host:port list or ${srvName[0]} (BACKEND_TYPE=objcache)`);
  const hostPorts = hp
    ? hp.value
        .split(',')
        .filter((s) => s.trim() !== '')
        .map((item) => parseHostPort(hp.name, hp.value, item, 11211))
    : [];
  const tlsOn = env.bool(oc('TLS'), false);
  return Object.freeze({
    hostPorts: Object.freeze(hostPorts),
    srv,
    srvRefreshMs: env.duration(oc('SRV_REFRESH'), 0),
    maxIdleConns: env.int(oc('MAX_IDLE_CONNS'), 2, { min: 1, max: 1024 }),
    timeoutMs,
    tls: tlsOn
      ? Object.freeze({
          clientCert: env.optionalString(oc('TLS_CLIENT_CERT')),
          clientKey: env.optionalString(oc('TLS_CLIENT_KEY')),
          caCert: env.optionalString(oc('TLS_CACERT')),
          skipHostnameVerification: env.bool(oc('TLS_SKIP_HOSTNAME_VERIFICATION'), false),
        })
      : undefined,
  });
}

export function loadStoreSettings(env: EnvReader): StoreSettings {
  const backendFound = env.lookup('BACKEND_TYPE');
  let backend: BackendType;
  if (!backendFound) {
    // An upstream deployment sets only REDIS_URL; it should get Redis, not the embedded table.
    backend = env.has(kv('KVSTORE', 'URL')) ? 'redis' : 'memory';
  } else {
    const word = backendFound.value.trim().toLowerCase();
    if (word === 'memory' || word === 'redis') backend = word;
    else if (word === 'objcache' || word === 'memcache') backend = 'objcache';
    else throw new SettingsError(backendFound.name, backendFound.value, 'one of memory, redis, objcache');
  }
  const perSecondOn = env.bool(kv('KVSTORE', 'PERSECOND'), false);
  if (perSecondOn && backend !== 'redis') {
    throw new SettingsError(
      kv('KVSTORE', 'PERSECOND')[0]!,
      'true',
      `false unless the Redis backend is used (BACKEND_TYPE=${backend})`,
    );
  }
  const redis = backend === 'redis' ? loadRedis(env, 'KVSTORE') : undefined;
  return Object.freeze({
    backend,
    redis,
    perSecond: perSecondOn ? loadRedis(env, 'KVSTORE_PERSECOND') : undefined,
    objcache:
      backend === 'objcache' ? loadObjcache(env, env.duration(kv('KVSTORE', 'TIMEOUT'), 10_000)) : undefined,
    localCacheSizeBytes: env.int(['LOCAL_CACHE_SIZE_IN_BYTES', 'LocalCacheSizeInBytes'], 0, {
      min: 0,
      max: 2 ** 40,
    }),
    failureMode: env.enumeration(kv('KVSTORE', 'FAILURE_MODE'), ['open', 'closed'] as const, 'open'),
    healthCheckActiveConnection: env.bool(kv('KVSTORE', 'HEALTH_CHECK_ACTIVE_CONNECTION'), false),
    expirationJitterMaxSeconds: env.int('EXPIRATION_JITTER_MAX_SECONDS', 300, { min: 0, max: 86_400 * 365 }),
  });
}
