// The Redis counter store. Fixed mode sends exactly what the upstream service sends for every
// counted descriptor — INCRBY key hits, then EXPIRE key (window + jitter) — so both services can
// share one Redis during a migration. Sliding mode sends one script call per descriptor that
// increments the current window's key, renews its expiry and reads the previous window's key
// (window-keys.ts, redis-scripts.ts): one command, where INCRBY + EXPIRE + GET were three, so a
// sliding decision costs the client no more than a fixed one. Commands of concurrent decisions
// share pipelines (redis-pool.ts).

import type { WindowAlgorithm } from '../settings/index.js';
import type { LocalOverLimitCache } from './local-cache.js';
import { RedisStoreError, type Cmd, type RedisPipeliner } from './redis-pool.js';
import { SLIDING_INCREMENT } from './redis-scripts.js';
import type { CounterOp, CounterStore, Counts } from './types.js';
import { expirySeconds, overLimitUntil, planWindow, slidingCount, type WindowPlan } from './window-keys.js';

export interface RedisStoreOptions {
  algorithm: WindowAlgorithm;
  /** EXPIRATION_JITTER_MAX_SECONDS (upstream default 300; 0 = none). */
  jitterMaxSeconds: number;
  localCache?: LocalOverLimitCache | undefined;
  /** KVSTORE_HEALTH_CHECK_ACTIVE_CONNECTION: unhealthy while no connection is up. */
  healthCheckActiveConnection: boolean;
  random?: () => number;
}

export class RedisCounterStore implements CounterStore {
  readonly kind = 'redis';
  private readonly random: () => number;
  private lastHealthy: boolean;
  private readonly listeners = new Set<(healthy: boolean) => void>();
  /** Cluster: both sliding keys of a descriptor in one slot (the script touches both). */
  private readonly hashTag: boolean;

  constructor(
    readonly pool: RedisPipeliner,
    private readonly options: RedisStoreOptions,
  ) {
    this.random = options.random ?? Math.random;
    this.hashTag = pool.settings.topology === 'cluster';
    this.lastHealthy = this.healthy();
    pool.onChange(() => {
      const now = this.healthy();
      if (now === this.lastHealthy) return;
      this.lastHealthy = now;
      for (const l of this.listeners) l(now);
    });
  }

  /** Health starts red and turns green at the first connection (the upstream's start-up check). */
  healthy(): boolean {
    if (!this.pool.connectedOnce) return false;
    return !this.options.healthCheckActiveConnection || this.pool.activeConnections() > 0;
  }

  onHealthChange(listener: (healthy: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  increment(ops: readonly CounterOp[], nowMs: number): Promise<Counts> {
    const { algorithm, jitterMaxSeconds, localCache } = this.options;
    const out: Counts = new Array<number>(ops.length);
    const plans: (WindowPlan | undefined)[] = new Array(ops.length);
    const cmds: Cmd[] = [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const plan = planWindow(op.key, op.divider, nowMs, algorithm, this.hashTag);
      if (localCache && op.limit !== undefined && localCache.has(plan.current, nowMs)) {
        // Reported as over without a store increment, as the upstream's local cache does.
        out[i] = op.limit + Math.max(op.hits, 1);
        continue;
      }
      plans[i] = plan;
      const expiry = expirySeconds(op.divider, algorithm, jitterMaxSeconds, this.random);
      if (plan.previous !== undefined)
        cmds.push([SLIDING_INCREMENT.name, plan.current, plan.previous, op.hits, expiry]);
      else cmds.push(['incrby', plan.current, op.hits], ['expire', plan.current, expiry]);
    }
    if (cmds.length === 0) return Promise.resolve(out);
    return this.pool.submit(cmds).then((replies) => {
      let r = 0;
      for (let i = 0; i < ops.length; i++) {
        const plan = plans[i];
        if (plan === undefined) continue;
        let current: number;
        let previous = 0;
        if (plan.previous !== undefined) {
          const pair = replies[r++];
          if (!Array.isArray(pair) || pair.length !== 2)
            throw new RedisStoreError(`redis: unexpected reply ${JSON.stringify(pair)} for a sliding window`);
          current = toCount(pair[0]);
          previous = toCount(pair[1]);
        } else {
          current = toCount(replies[r]);
          r += 2;
        }
        const count = plan.previous !== undefined ? slidingCount(current, previous, plan, nowMs) : current;
        out[i] = count;
        const limit = ops[i]!.limit;
        if (localCache && limit !== undefined && count > limit)
          localCache.set(plan.current, overLimitUntil(current, previous, limit, plan), nowMs);
      }
      return out;
    });
  }

  peek(ops: readonly CounterOp[], nowMs: number): Promise<Counts> {
    const plans = ops.map((op) =>
      planWindow(op.key, op.divider, nowMs, this.options.algorithm, this.hashTag),
    );
    const cmds: Cmd[] = [];
    for (const plan of plans) {
      cmds.push(['get', plan.current]);
      if (plan.previous !== undefined) cmds.push(['get', plan.previous]);
    }
    return this.pool.submit(cmds).then((replies) => {
      let r = 0;
      return plans.map((plan) => {
        const current = toCount(replies[r++]);
        if (plan.previous === undefined) return current;
        return slidingCount(current, toCount(replies[r++]), plan, nowMs);
      });
    });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

function toCount(reply: unknown): number {
  if (reply === null || reply === undefined) return 0;
  if (typeof reply === 'number') return reply;
  if (typeof reply === 'string') {
    const n = Number(reply);
    if (Number.isFinite(n)) return n;
  }
  throw new RedisStoreError(`redis: unexpected reply ${JSON.stringify(reply)} for a counter`);
}
