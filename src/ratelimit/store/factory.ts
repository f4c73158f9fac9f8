// Builds the configured shared store(s) from StoreSettings: Redis (with an optional per-second
// Redis) or the object cache, each behind the failure policy, sharing one local over-limit
// cache, with their health components kept in the registry. The memory backend is the rate
// limit core's (undefined is returned for it).

import { resolveSrv as dnsResolveSrv } from 'node:dns/promises';
import type { Logger } from '../../core/log.js';
import type { HealthRegistry } from '../../core/health.js';
import type { WindowAlgorithm } from '../settings/index.js';
import { STAT } from '../stats/names.js';
import type { SharedStatsTable } from '../stats/shared-table.js';
import type { HostPort, ObjcacheSettings, RedisSettings, StoreSettings } from '../settings/index.js';
import { FailurePolicyStore } from './failure-policy.js';
import { LocalOverLimitCache } from './local-cache.js';
import { MemcachedClient } from './memcached-client.js';
import { MemcachedCounterStore } from './memcached.js';
import { PerSecondRouter } from './per-second.js';
import { tlsOptions, waitReady } from './redis-client.js';
import { RedisPipeliner } from './redis-pool.js';
import { RedisCounterStore } from './redis.js';
import type { CounterStore } from './types.js';

export interface StoreContext {
  algorithm: WindowAlgorithm;
  log?: Logger | undefined;
  health?: HealthRegistry | undefined;
  stats?: SharedStatsTable | undefined;
  /** DNS SRV lookup; tests inject one, since no test DNS server exists. */
  resolveSrv?: (name: string) => Promise<{ name: string; port: number; priority: number; weight: number }[]>;
}

export interface ConfiguredStores {
  readonly store: CounterStore;
  readonly localCache: LocalOverLimitCache | undefined;
  /** The stores under the policy and routing layers, for /stats and tests. */
  readonly redis: RedisCounterStore | undefined;
  readonly redisPerSecond: RedisCounterStore | undefined;
  readonly objcache: MemcachedCounterStore | undefined;
  /** Pool and local-cache gauges under the upstream names, for the debug /stats page and the outputs. */
  gauges(): Record<string, number>;
  close(): Promise<void>;
}

/**
 * ratelimit.service.call.should_rate_limit.<kind>_error — the name the Decider uses for a call
 * that fails with a store error (redis_error as upstream; objcache_error for the object cache).
 */
export function storeErrorStat(kind: string): string {
  return STAT.callError(`${kind}_error`);
}
export const STORE_ERROR_STAT = storeErrorStat('redis');

/** Returns undefined for BACKEND_TYPE=memory (the core's embedded store). */
export async function createConfiguredStores(
  settings: StoreSettings,
  ctx: StoreContext,
): Promise<ConfiguredStores | undefined> {
  if (settings.backend === 'memory') return undefined;
  const localCache =
    settings.localCacheSizeBytes > 0 ? new LocalOverLimitCache(settings.localCacheSizeBytes) : undefined;
  const closers: (() => Promise<void>)[] = [];
  // A failed call that fails the decision (closed) is counted by the Decider, which sees the
  // RateLimitRequestError; one answered anyway (open) is counted here, or nobody would.
  const countCalls = settings.failureMode === 'open';
  const redisError = errorReporter(ctx, storeErrorStat('redis'), countCalls);

  if (settings.backend === 'redis') {
    const main = await openRedis(settings.redis!, settings, ctx, localCache, 'redis');
    closers.push(() => main.close());
    let store: CounterStore = new FailurePolicyStore(main, {
      mode: settings.failureMode,
      timeoutMs: settings.redis!.timeoutMs,
      label: 'redis',
      onError: redisError,
    });
    let perSecond: RedisCounterStore | undefined;
    if (settings.perSecond) {
      perSecond = await openRedis(settings.perSecond, settings, ctx, localCache, 'redis_per_second');
      closers.push(() => perSecond!.close());
      const second = new FailurePolicyStore(perSecond, {
        mode: settings.failureMode,
        timeoutMs: settings.perSecond.timeoutMs,
        label: 'redis_per_second',
        onError: redisError,
      });
      store = new PerSecondRouter(store, second);
    }
    return finish(store, localCache, main, perSecond, undefined, closers);
  }

  const oc = settings.objcache!;
  const nodes = oc.srv !== undefined ? await lookupSrv(oc.srv, ctx) : oc.hostPorts;
  if (nodes.length === 0) throw new Error(`OBJCACHE_SRV ${oc.srv} lists no servers`);
  const client = new MemcachedClient(nodes, {
    connectionsPerNode: oc.maxIdleConns,
    timeoutMs: oc.timeoutMs,
    tls: oc.tls ? tlsOptions(oc.tls) : undefined,
  });
  const objcacheError = errorReporter(ctx, storeErrorStat('objcache'), countCalls);
  const objcache = new MemcachedCounterStore(client, {
    algorithm: ctx.algorithm,
    jitterMaxSeconds: settings.expirationJitterMaxSeconds,
    localCache,
    // The decision was answered before the write failed: count it whatever the policy.
    onBackgroundError: errorReporter(ctx, storeErrorStat('objcache'), true),
  });
  closers.push(() => objcache.close());
  const stopRefresh = startSrvRefresh(oc, client, ctx);
  if (stopRefresh) closers.unshift(async () => stopRefresh());
  ctx.health?.register('objcache', true);
  const store = new FailurePolicyStore(objcache, {
    mode: settings.failureMode,
    timeoutMs: oc.timeoutMs,
    label: 'objcache',
    onError: objcacheError,
  });
  return finish(store, localCache, undefined, undefined, objcache, closers);
}

function finish(
  store: CounterStore,
  localCache: LocalOverLimitCache | undefined,
  redis: RedisCounterStore | undefined,
  redisPerSecond: RedisCounterStore | undefined,
  objcache: MemcachedCounterStore | undefined,
  closers: (() => Promise<void>)[],
): ConfiguredStores {
  return {
    store,
    localCache,
    redis,
    redisPerSecond,
    objcache,
    gauges() {
      const out: Record<string, number> = {};
      const pool = (prefix: string, s: RedisCounterStore | undefined): void => {
        if (!s) return;
        const p = s.pool.stats();
        out[`${prefix}.cx_active`] = p.active;
        out[`${prefix}.cx_total`] = p.total;
        out[`${prefix}.cx_overflow_created`] = p.overflowCreated;
        out[`${prefix}.cx_local_close`] = p.localClose;
      };
      pool('ratelimit.redis_pool', redis);
      pool('ratelimit.redis_per_second_pool', redisPerSecond);
      if (objcache) out['ratelimit.objcache.connected_servers'] = objcache.client.connectedNodes();
      if (localCache) {
        const c = localCache.stats();
        out['ratelimit.localcache.hitCount'] = c.hitCount;
        out['ratelimit.localcache.missCount'] = c.missCount;
        out['ratelimit.localcache.lookupCount'] = c.lookupCount;
        out['ratelimit.localcache.entryCount'] = c.entryCount;
        out['ratelimit.localcache.evacuateCount'] = c.evacuateCount;
        out['ratelimit.localcache.expiredCount'] = c.expiredCount;
        out['ratelimit.localcache.overwriteCount'] = c.overwriteCount;
      }
      return out;
    },
    async close() {
      for (const close of closers) await close();
    },
  };
}

async function openRedis(
  s: RedisSettings,
  settings: StoreSettings,
  ctx: StoreContext,
  localCache: LocalOverLimitCache | undefined,
  component: string,
): Promise<RedisCounterStore> {
  const pool = new RedisPipeliner(s);
  const store = new RedisCounterStore(pool, {
    algorithm: ctx.algorithm,
    jitterMaxSeconds: settings.expirationJitterMaxSeconds,
    localCache,
    healthCheckActiveConnection: settings.healthCheckActiveConnection,
  });
  const health = ctx.health;
  if (health) {
    health.register(component, store.healthy());
    store.onHealthChange((healthy) => health.set(component, healthy));
  }
  // Said whatever the health policy: the first connection, each loss, and each return with how
  // long no connection was up.
  let lostAt: number | undefined;
  let connected = false;
  pool.onChange(() => {
    const up = pool.activeConnections() > 0;
    if (up && !connected) {
      connected = true;
      if (lostAt === undefined) ctx.log?.info({ store: component }, 'cache store connected');
      else ctx.log?.info({ store: component, awayMs: Date.now() - lostAt }, 'cache store reconnected');
      lostAt = undefined;
    } else if (!up && connected) {
      connected = false;
      lostAt = Date.now();
      ctx.log?.warn({ store: component }, 'cache store has no active connection; reconnecting');
    }
  });
  // Like the upstream service, confirm the connection at start; unlike it, do not block the
  // start forever: decisions follow the failure policy until Redis answers.
  const ready = await Promise.all(pool.clients().map((c) => waitReady(c, s.timeoutMs)));
  if (!ready.some(Boolean)) {
    ctx.log?.warn(
      { store: component, target: describe(s) },
      `cache store not reachable within ${s.timeoutMs} ms; still trying in the background`,
    );
  }
  return store;
}

function describe(s: RedisSettings): string {
  if (s.socketPath !== undefined) return s.socketPath;
  const list = s.nodes.map((n) => `${n.host}:${n.port}`).join(',');
  return s.masterName !== undefined ? `${s.masterName}@${list}` : list;
}

/** Counts store failures (when `count`); logs at most one line per 10 s so an outage does not flood the log. */
function errorReporter(ctx: StoreContext, stat: string, count: boolean): (error: Error) => void {
  let suppressed = 0;
  let lastLog = 0;
  return (error) => {
    if (count) ctx.stats?.inc(stat);
    const now = Date.now();
    if (now - lastLog < 10_000) {
      suppressed++;
      return;
    }
    ctx.log?.warn({ err: error.message, suppressed }, 'cache store call failed');
    lastLog = now;
    suppressed = 0;
  };
}

async function lookupSrv(name: string, ctx: StoreContext): Promise<HostPort[]> {
  const resolve = ctx.resolveSrv ?? dnsResolveSrv;
  const records = await resolve(name);
  // A stable order: crc32(key) mod n must pick the same node on every instance.
  return records
    .map((r) => ({ host: r.name, port: r.port }))
    .sort((a, b) => (a.host === b.host ? a.port - b.port : a.host < b.host ? -1 : 1));
}

function startSrvRefresh(
  oc: ObjcacheSettings,
  client: MemcachedClient,
  ctx: StoreContext,
): (() => void) | undefined {
  if (oc.srv === undefined || oc.srvRefreshMs <= 0) return undefined;
  const srv = oc.srv;
  const timer = setInterval(() => {
    lookupSrv(srv, ctx).then(
      (nodes) => {
        if (nodes.length === 0) return;
        const before = client
          .addresses()
          .map((n) => `${n.host}:${n.port}`)
          .join(',');
        const after = nodes.map((n) => `${n.host}:${n.port}`).join(',');
        if (before === after) return;
        client.setNodes(nodes);
        ctx.log?.info({ srv, servers: after }, 'object cache servers changed');
      },
      (error: unknown) =>
        ctx.log?.warn(
          { srv, err: String(error) },
          'object cache SRV refresh failed; keeping the current servers',
        ),
    );
  }, oc.srvRefreshMs);
  timer.unref();
  return () => clearInterval(timer);
}
