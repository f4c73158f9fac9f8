// The rate limit service: `prepareRatelimitShared` (main thread, once) makes the shared counter
// and statistics tables; `startRatelimit` runs on every front-end thread, deciding inline
// against those tables. Every thread serves HTTP on the shared port; thread 0 also serves gRPC
// and the debug server.

import { bindUrl, type HttpServerHandle } from '../core/http/index.js';
import type { RunningGrpcServer } from '../core/grpc/index.js';
import type { RunningService, ServiceContext } from '../core/service.js';
import { consoleCors, mountConsole } from '../core/console/routes.js';
import { ServiceOperations } from '../core/observe/index.js';
import { loadCoreSettings, type EnvReader } from '../core/settings/index.js';
import { ConfigManager } from './config/manager.js';
import { FileConfigProvider, type ConfigProvider } from './config/provider.js';
import { createXdsProvider } from './config/xds.js';
import { startStatsOutputs } from './stats/outputs/index.js';
import { createTracer } from './tracing.js';
import { defaultRuntimeRoot, seedRuntime } from './config/seed.js';
import { EventLoopClock, type TimeSource } from './engine/clock.js';
import { RateLimitEngine } from './engine/engine.js';
import { startDebugServer } from './server/debug.js';
import { Decider } from './server/decider.js';
import { grpcListenerFor, startRatelimitGrpc } from './server/grpc.js';
import { startRatelimitHttp } from './server/http.js';
import { ratelimitConsoleRoutes, ruleTotals } from './server/console-api.js';
import { StatsHistory } from './server/stats-history.js';
import {
  loadRateLimitSettings,
  toGrpcServerTls,
  type RedisSettings,
  type ServerSettings,
  type StoreSettings,
} from './settings/index.js';
import { STAT } from './stats/names.js';
import { createStatsBuffer, SharedStatsTable } from './stats/shared-table.js';
import { createConfiguredStores } from './store/factory.js';
import { registerStoreReadiness } from './store/readiness.js';
import { createMemoryStoreBuffer, MemoryCounterStore } from './store/memory.js';

export { loadRateLimitSettings } from './settings/index.js';
export { runRatelimitClient } from './client.js';

export const SHARED_COUNTERS = 'counters';
export const SHARED_STATS = 'stats';

export function prepareRatelimitShared(env: EnvReader): Record<string, SharedArrayBuffer> {
  const settings = loadRateLimitSettings(env).server;
  if (settings.runtime.root === undefined)
    seedRuntime(defaultRuntimeRoot(loadCoreSettings(env).dataDir), settings.runtime.appDirectory);
  return {
    [SHARED_COUNTERS]: createMemoryStoreBuffer(settings.memoryStoreMaxKeys),
    [SHARED_STATS]: createStatsBuffer(settings.statsMaxKeys),
  };
}

const UNTRACKED_LOG_INTERVAL_MS = 60_000;

export interface RatelimitOptions {
  /**
   * The clock windows are measured on (default: Date.now() read once per event-loop turn).
   * Tests hold it still so a window edge never falls between the hits they count.
   */
  clock?: TimeSource;
}

export async function startRatelimit(
  ctx: ServiceContext,
  options: RatelimitOptions = {},
): Promise<RunningService> {
  const all = loadRateLimitSettings(ctx.env);
  const settings = all.server;
  const log = ctx.log;
  const primary = ctx.thread.index === 0;
  const counters = ctx.shared[SHARED_COUNTERS] ?? createMemoryStoreBuffer(settings.memoryStoreMaxKeys);
  const stats = new SharedStatsTable(ctx.shared[SHARED_STATS] ?? createStatsBuffer(settings.statsMaxKeys));
  const memory = new MemoryCounterStore(counters, settings.windowAlgorithm);
  // BACKEND_TYPE / KVSTORE_URL choose a shared store (Redis, memcached); the factory registers
  // its own health components. Without one, the shared-memory table is the store.
  const shared = await createConfiguredStores(all.store, {
    algorithm: settings.windowAlgorithm,
    log,
    health: ctx.health,
    stats,
  });
  const store = shared?.store ?? memory;
  // Every thread serves the HTTP port: /metrics sums the threads (core/observe/metrics.ts).
  const ops = new ServiceOperations({
    service: 'ratelimit',
    settings: ctx.core.observe,
    log,
    thread: { index: ctx.thread.index, serviceThreads: ctx.thread.count },
  });
  registerStoreReadiness(ops.readiness, shared);

  let lastUntrackedLog = 0;
  const fullStat = stats.handle(STAT.memoryStoreFull);
  const engine = new RateLimitEngine({
    store,
    stats,
    clock: options.clock ?? new EventLoopClock(),
    settings,
    onUntracked: () => {
      stats.add(fullStat, 1);
      const now = Date.now();
      if (now - lastUntrackedLog >= UNTRACKED_LOG_INTERVAL_MS) {
        lastUntrackedLog = now;
        log.warn(
          { capacity: memory.stats().capacity },
          'rate limit counter table is full: requests on new keys pass uncounted; raise MEMORY_STORE_MAX_KEYS',
        );
      }
    },
  });
  const tracer = createTracer(all.tracing);
  const decider = new Decider(engine, stats, store.kind, tracer);

  const health = ctx.health;
  if (!shared) health.register('cache_store', memory.healthy());
  health.register('sigterm', true);
  if (settings.healthyWithAtLeastOneConfigLoaded) health.register('config', false);

  const compile = { mergeDomainConfig: settings.mergeDomainConfig, nearLimitRatio: settings.nearLimitRatio };
  // Every front-end thread runs its own provider (as with files): N streams to the management server.
  const provider: ConfigProvider =
    settings.configType === 'GRPC_XDS_SOTW'
      ? createXdsProvider({
          settings: all.xds,
          compile,
          waitForFirstConfig: !settings.forceStartWithoutInitialConfig,
          log,
        })
      : new FileConfigProvider(runtimeLayout(settings, ctx.core.dataDir));
  const config = new ConfigManager({
    provider,
    compile,
    onRules: (rules) => engine.setRules(rules),
    stats,
    countStats: primary,
    ...(settings.healthyWithAtLeastOneConfigLoaded
      ? { onDomainsLoaded: (n: number) => health.set('config', n > 0) }
      : {}),
    log,
  });
  const initial = config.start();
  // Upstream waits for the first configuration event before serving unless forced; a failed first
  // load is still an event (calls then fail with "no rate limit configuration loaded").
  if (!settings.forceStartWithoutInitialConfig) await initial;
  else
    initial.catch((error: unknown) => log.error({ err: error }, 'rate limit configuration provider failed'));

  const servers: { close(): Promise<void> }[] = [];
  const history = new StatsHistory({ read: () => ruleTotals(stats) }).start();
  servers.push(history);
  const addresses: Record<string, string> = {};
  try {
    const http: HttpServerHandle = await startRatelimitHttp({
      host: settings.http.host,
      port: settings.http.port,
      maxRequestBytes: settings.maxRequestBytes,
      decider,
      health,
      log,
      transport: ctx.core.httpTransport,
      thread: ctx.thread.index,
      authenticator: ctx.auth,
      observer: ops.observer,
      extend: (router) => {
        ops.mount(router);
        ratelimitConsoleRoutes(router, { engine, stats, history });
        mountConsole(router, { self: 'ratelimit', ctx });
      },
      cors: consoleCors('ratelimit', ctx),
    });
    servers.push(http);
    // Where node:http cannot share the port between threads, thread 0 alone serves it.
    if (http.listening) {
      addresses.http = bindUrl(http.host, http.port);
      ctx.directory?.publish('ratelimit', http.port);
    }
    // gRPC on thread 0, or on every thread: one shared port (reusePort) or one port each.
    const grpcListener = grpcListenerFor(settings.grpc, ctx.thread);
    if (grpcListener) {
      const grpc: RunningGrpcServer = await startRatelimitGrpc({
        ...settings.grpc,
        ...grpcListener,
        tls: toGrpcServerTls(all.grpcTls),
        decider,
        stats,
        health,
        log,
      });
      servers.push(grpc);
      addresses.grpc = grpc.address;
    }
    if (primary) {
      const debug = await startDebugServer({
        host: settings.debug.host,
        port: settings.debug.port,
        profiling: settings.debug.profiling,
        log,
        transport: ctx.core.httpTransport,
        sources: {
          rules: () => engine.ruleSet,
          stats,
          gauges: () => {
            const s = memory.stats();
            const mem = process.memoryUsage();
            return {
              ...shared?.gauges(),
              'ratelimit.memory_store.capacity': s.capacity,
              'ratelimit.memory_store.keys_claimed': s.keys,
              'ratelimit.memory_store.slots_reused': s.reused,
              'ratelimit.memory_store.full_events': s.fullEvents,
              'ratelimit.memory_store.window_algorithm': settings.windowAlgorithm,
              'http.transport': http.transport.transport,
              ...(http.transport.build
                ? { 'http.uws_build': `${http.transport.build}@${http.transport.version}` }
                : {}),
              'ratelimit.config.files': engine.ruleSet?.files.join(',') ?? '',
              'ratelimit.config.last_error': config.error?.message.replace(/\n/g, ' ') ?? '',
              'process.heap_used_bytes': mem.heapUsed,
              'process.rss_bytes': mem.rss,
              cmdline: JSON.stringify(process.argv),
            };
          },
        },
      });
      servers.push(debug);
      addresses.debug = bindUrl(debug.host, debug.port);
      // The stats table holds process totals: one output per process, on thread 0.
      const outputs = await startStatsOutputs(stats, all.stats, { log });
      servers.push(outputs);
      if (outputs.pullUrl) addresses.metrics = outputs.pullUrl;
    }
  } catch (error) {
    await Promise.allSettled(servers.map((s) => s.close()));
    await config.close();
    await tracer.close();
    await shared?.close();
    ops.close();
    throw error;
  }

  return {
    name: 'ratelimit',
    addresses,
    backends: describeStores(all.store),
    beginShutdown() {
      health.set('sigterm', false);
      ops.beginShutdown();
    },
    async close() {
      health.set('sigterm', false);
      ops.beginShutdown();
      await Promise.allSettled(servers.map((s) => s.close()));
      await config.close();
      await tracer.close();
      await shared?.close();
      await memory.close();
      ops.close();
    },
  };
}

function runtimeLayout(settings: ServerSettings, dataDir: string) {
  const r = settings.runtime;
  if (r.root !== undefined) return { ...r, root: r.root };
  const root = defaultRuntimeRoot(dataDir);
  seedRuntime(root, r.appDirectory);
  // The seeded folder is a plain directory the user edits in place: watch its content.
  return { ...r, root, subdirectory: '', watchRoot: false };
}

/** Where the counters live, for the start banner (addresses only; credentials are never shown). */
function describeStores(store: StoreSettings): Record<string, string> {
  const redis = (r: RedisSettings) =>
    `redis ${r.topology} ${r.socketPath ?? r.nodes.map((n) => `${n.host}:${n.port}`).join(',')}`;
  if (store.backend === 'redis' && store.redis) {
    return {
      counters: redis(store.redis),
      ...(store.perSecond ? { 'per-second counters': redis(store.perSecond) } : {}),
    };
  }
  if (store.backend === 'objcache' && store.objcache) {
    const c = store.objcache;
    return {
      counters: `memcached ${c.srv ? `SRV ${c.srv}` : c.hostPorts.map((n) => `${n.host}:${n.port}`).join(',')}`,
    };
  }
  return { counters: 'memory (shared by the front-end threads of this process)' };
}
