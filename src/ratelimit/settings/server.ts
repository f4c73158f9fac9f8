// The rate limit service's own settings: listeners, the runtime (configuration) folder and the
// decision behaviour, with the spec's exact names and defaults. One section of the tree that
// ./index.ts loads; store, statistics, tracing, management-server and TLS settings are the others.

import { SettingsError, type EnvReader } from '../../core/settings/index.js';

export type WindowAlgorithm = 'sliding' | 'fixed';

export interface ServerSettings {
  readonly http: { readonly host: string; readonly port: number };
  readonly grpc: {
    readonly host: string;
    readonly port: number;
    /** Unix socket path; when set, gRPC listens there instead of host:port. */
    readonly uds: string | undefined;
    readonly maxConnectionAgeMs: number;
    readonly maxConnectionAgeGraceMs: number;
    /**
     * GRPC_THREAD_PORTS: every front-end thread serves gRPC on GRPC_PORT + its index, so gRPC
     * gets one event loop per thread (grpc-js caps one loop near 16k calls/s). For Node 20,
     * whose net has no SO_REUSEPORT; newer Node shares GRPC_PORT itself (grpcListenerFor). A
     * proxy lists the ports as endpoints of one cluster.
     */
    readonly threadPorts: boolean;
  };
  readonly debug: {
    readonly host: string;
    readonly port: number;
    /** DEBUG_PROFILING_ENABLED: serve /debug/pprof/heap and /debug/pprof/profile. */
    readonly profiling: boolean;
  };
  readonly configType: 'FILE' | 'GRPC_XDS_SOTW';
  readonly runtime: {
    /** Unset means `<dataDir>/ratelimit/runtime/current`, seeded with an example. */
    readonly root: string | undefined;
    readonly subdirectory: string;
    readonly appDirectory: string;
    readonly ignoreDotFiles: boolean;
    readonly watchRoot: boolean;
  };
  readonly mergeDomainConfig: boolean;
  readonly forceStartWithoutInitialConfig: boolean;
  readonly healthyWithAtLeastOneConfigLoaded: boolean;
  readonly shadowMode: boolean;
  readonly quotaMode: boolean;
  readonly nearLimitRatio: number;
  readonly stopCacheKeyIncrementWhenOverlimit: boolean;
  readonly responseHeaders: {
    readonly enabled: boolean;
    readonly limit: string;
    readonly remaining: string;
    readonly reset: string;
  };
  readonly cacheKeyPrefix: string;
  readonly windowAlgorithm: WindowAlgorithm;
  /** Slots of the shared counter table (rounded up to a power of two). */
  readonly memoryStoreMaxKeys: number;
  /** Slots of the shared statistics table. */
  readonly statsMaxKeys: number;
  /** Largest accepted /json body. */
  readonly maxRequestBytes: number;
}

const PORT = { min: 0, max: 65535 };

export function loadServerSettings(env: EnvReader): ServerSettings {
  const configType = env.enumeration('CONFIG_TYPE', ['FILE', 'GRPC_XDS_SOTW'] as const, 'FILE');
  const maxKeys = env.int('MEMORY_STORE_MAX_KEYS', 1 << 20, { min: 16, max: 1 << 26 });
  const statsKeys = env.int('STATS_MAX_KEYS', 1 << 14, { min: 16, max: 1 << 20 });
  const appDirectory = env.string('RUNTIME_APPDIRECTORY', 'config');
  if (appDirectory.includes('/') || appDirectory === '.' || appDirectory === '..') {
    throw new SettingsError('RUNTIME_APPDIRECTORY', appDirectory, 'a single directory name');
  }
  return Object.freeze({
    http: Object.freeze({ host: env.string('HOST', '0.0.0.0'), port: env.int('PORT', 8080, PORT) }),
    grpc: Object.freeze({
      host: env.string('GRPC_HOST', '0.0.0.0'),
      port: env.int('GRPC_PORT', 8081, PORT),
      uds: env.optionalString('GRPC_UDS'),
      maxConnectionAgeMs: env.duration('GRPC_MAX_CONNECTION_AGE', 24 * 3_600_000),
      maxConnectionAgeGraceMs: env.duration('GRPC_MAX_CONNECTION_AGE_GRACE', 3_600_000),
      threadPorts: env.bool('GRPC_THREAD_PORTS', false),
    }),
    // Loopback and no profiles by default, unlike upstream (0.0.0.0, Go pprof always on): under
    // `sluice serve` this process holds API keys, the admin token and store passwords, and a
    // heap snapshot hands all of them to whoever reaches the port (docs/security.md).
    debug: Object.freeze({
      host: env.string('DEBUG_HOST', '127.0.0.1'),
      port: env.int('DEBUG_PORT', 6070, PORT),
      profiling: env.bool('DEBUG_PROFILING_ENABLED', false),
    }),
    configType,
    runtime: Object.freeze({
      root: env.optionalString('RUNTIME_ROOT'),
      subdirectory: env.string('RUNTIME_SUBDIRECTORY', ''),
      appDirectory,
      ignoreDotFiles: env.bool('RUNTIME_IGNOREDOTFILES', false),
      watchRoot: env.bool('RUNTIME_WATCH_ROOT', true),
    }),
    mergeDomainConfig: env.bool('MERGE_DOMAIN_CONFIG', false),
    forceStartWithoutInitialConfig: env.bool('FORCE_START_WITHOUT_INITIAL_CONFIG', false),
    healthyWithAtLeastOneConfigLoaded: env.bool('HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED', false),
    shadowMode: env.bool('SHADOW_MODE', false),
    quotaMode: env.bool('QUOTA_MODE', false),
    nearLimitRatio: env.float('NEAR_LIMIT_RATIO', 0.8, { min: 0, max: 1 }),
    stopCacheKeyIncrementWhenOverlimit: env.bool('STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT', false),
    responseHeaders: Object.freeze({
      enabled: env.bool('LIMIT_RESPONSE_HEADERS_ENABLED', false),
      limit: header(env, 'LIMIT_LIMIT_HEADER', 'RateLimit-Limit'),
      remaining: header(env, 'LIMIT_REMAINING_HEADER', 'RateLimit-Remaining'),
      reset: header(env, 'LIMIT_RESET_HEADER', 'RateLimit-Reset'),
    }),
    cacheKeyPrefix: env.string('CACHE_KEY_PREFIX', ''),
    windowAlgorithm: env.enumeration('WINDOW_ALGORITHM', ['sliding', 'fixed'] as const, 'sliding'),
    memoryStoreMaxKeys: maxKeys,
    statsMaxKeys: statsKeys,
    maxRequestBytes: env.int('RATELIMIT_MAX_REQUEST_BYTES', 64 * 1024, { min: 1024, max: 64 * 1024 * 1024 }),
  });
}

function header(env: EnvReader, name: string, fallback: string): string {
  const value = env.string(name, fallback);
  // An invalid header name would make Envoy reject the whole response; refuse it at start.
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(value))
    throw new SettingsError(name, value, 'an HTTP header name');
  return value;
}
