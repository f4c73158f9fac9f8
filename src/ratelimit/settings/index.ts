// Every setting of the rate limit service, read once into one frozen tree. This is the only place
// in src/ratelimit that reads the environment; everything else is handed its section. The section
// files (server, store, observability) hold the names, aliases, defaults and start-time checks,
// and are listed with their variables in docs/ratelimit.md.

import type { EnvReader } from '../../core/settings/index.js';
import {
  loadGrpcTlsSettings,
  loadStatsOutputSettings,
  loadTracingSettings,
  loadXdsSettings,
  type GrpcTlsSettings,
  type StatsOutputSettings,
  type TracingSettings,
  type XdsSettings,
} from './observability.js';
import { loadServerSettings, type ServerSettings } from './server.js';
import { loadStoreSettings, type StoreSettings } from './store.js';

export type { ServerSettings, WindowAlgorithm } from './server.js';
export type * from './store.js';
export type * from './observability.js';
export { toGrpcServerTls } from './grpc-tls.js';

export interface RateLimitSettings {
  /** Listeners, runtime folder, decision behaviour, table sizes. */
  readonly server: ServerSettings;
  /** BACKEND_TYPE and the shared store behind it. */
  readonly store: StoreSettings;
  readonly stats: StatsOutputSettings;
  readonly tracing: TracingSettings;
  /** The management server, used when CONFIG_TYPE=GRPC_XDS_SOTW. */
  readonly xds: XdsSettings;
  /** undefined when GRPC_SERVER_USE_TLS is off. */
  readonly grpcTls: GrpcTlsSettings | undefined;
}

export function loadRateLimitSettings(env: EnvReader): RateLimitSettings {
  return Object.freeze({
    server: loadServerSettings(env),
    store: loadStoreSettings(env),
    stats: loadStatsOutputSettings(env),
    tracing: loadTracingSettings(env),
    xds: loadXdsSettings(env),
    grpcTls: loadGrpcTlsSettings(env),
  });
}
