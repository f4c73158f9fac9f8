// The object cache store (BACKEND_TYPE=objcache), the upstream's memcache behaviour: read every
// key with one multi-get per node, decide from (value read + hits), and increment in the
// background (incr; add with the expiry on a miss; incr again if another instance added first).
// Decisions therefore do not wait for the write, and simultaneous requests can overshoot a
// limit briefly (upstream's documented memcached behaviour, docs/ratelimit.md). Keys are checked first: memcached refuses keys over 250 bytes
// or with whitespace/control characters, and such a descriptor gets a clear error.

import { RateLimitRequestError } from '../types.js';
import type { WindowAlgorithm } from '../settings/index.js';
import type { LocalOverLimitCache } from './local-cache.js';
import { invalidKeyReason, type MemcachedClient } from './memcached-client.js';
import type { CounterOp, CounterStore, Counts } from './types.js';
import { expirySeconds, overLimitUntil, planWindow, slidingCount, type WindowPlan } from './window-keys.js';

/** memcached reads an expiry above 30 days as an absolute Unix time. */
const RELATIVE_EXPIRY_MAX = 2_592_000;

export interface MemcachedStoreOptions {
  algorithm: WindowAlgorithm;
  jitterMaxSeconds: number;
  localCache?: LocalOverLimitCache | undefined;
  random?: () => number;
  /** A background increment failed (counted and logged by the factory; the decision is long gone). */
  onBackgroundError?: (error: Error) => void;
}

export class MemcachedCounterStore implements CounterStore {
  readonly kind = 'objcache';
  private readonly background = new Set<Promise<void>>();
  private readonly random: () => number;

  constructor(
    readonly client: MemcachedClient,
    private readonly options: MemcachedStoreOptions,
  ) {
    this.random = options.random ?? Math.random;
  }

  increment(ops: readonly CounterOp[], nowMs: number): Promise<Counts> {
    const { algorithm, localCache } = this.options;
    const out: Counts = new Array<number>(ops.length);
    const plans: (WindowPlan | undefined)[] = new Array(ops.length);
    const keys: string[] = [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const plan = planWindow(op.key, op.divider, nowMs, algorithm);
      checkKey(plan.current);
      if (localCache && op.limit !== undefined && localCache.has(plan.current, nowMs)) {
        out[i] = op.limit + Math.max(op.hits, 1);
        continue;
      }
      plans[i] = plan;
      keys.push(plan.current);
      if (plan.previous !== undefined) keys.push(plan.previous);
    }
    if (keys.length === 0) return Promise.resolve(out);
    return this.client.getMulti(keys).then((values) => {
      for (let i = 0; i < ops.length; i++) {
        const plan = plans[i];
        if (plan === undefined) continue;
        const op = ops[i]!;
        const current = toCount(values.get(plan.current)) + op.hits;
        const previous = plan.previous !== undefined ? toCount(values.get(plan.previous)) : 0;
        const count = slidingCount(current, previous, plan, nowMs);
        out[i] = count;
        if (localCache && op.limit !== undefined && count > op.limit)
          localCache.set(plan.current, overLimitUntil(current, previous, op.limit, plan), nowMs);
        if (op.hits > 0) this.track(this.addHits(plan.current, op.hits, this.expiry(op.divider, nowMs)));
      }
      return out;
    });
  }

  peek(ops: readonly CounterOp[], nowMs: number): Promise<Counts> {
    const plans = ops.map((op) => planWindow(op.key, op.divider, nowMs, this.options.algorithm));
    const keys: string[] = [];
    for (const plan of plans) {
      checkKey(plan.current);
      keys.push(plan.current);
      if (plan.previous !== undefined) keys.push(plan.previous);
    }
    return this.client
      .getMulti(keys)
      .then((values) =>
        plans.map((plan) =>
          slidingCount(
            toCount(values.get(plan.current)),
            plan.previous !== undefined ? toCount(values.get(plan.previous)) : 0,
            plan,
            nowMs,
          ),
        ),
      );
  }

  healthy(): boolean {
    return true;
  }

  /** Resolves when every background increment started so far has finished. */
  async settled(): Promise<void> {
    while (this.background.size > 0) await Promise.allSettled([...this.background]);
  }

  async close(): Promise<void> {
    await this.settled();
    this.client.close();
  }

  private expiry(divider: number, nowMs: number): number {
    const seconds = expirySeconds(
      divider,
      this.options.algorithm,
      this.options.jitterMaxSeconds,
      this.random,
    );
    return seconds > RELATIVE_EXPIRY_MAX ? Math.floor(nowMs / 1000) + seconds : seconds;
  }

  private async addHits(key: string, hits: number, exptime: number): Promise<void> {
    if ((await this.client.incr(key, hits)) !== undefined) return;
    if (await this.client.add(key, String(hits), exptime)) return;
    // Another instance created the key between our incr and add.
    await this.client.incr(key, hits);
  }

  private track(work: Promise<void>): void {
    const p = work.catch((error: unknown) =>
      this.options.onBackgroundError?.(error instanceof Error ? error : new Error(String(error))),
    );
    this.background.add(p);
    void p.finally(() => this.background.delete(p));
  }
}

function checkKey(key: string): void {
  const reason = invalidKeyReason(key);
  // A request problem, not a store outage: the failure policy passes ServiceErrors through.
  if (reason !== undefined)
    throw new RateLimitRequestError(
      `object cache key ${JSON.stringify(key.length > 80 ? key.slice(0, 80) + '…' : key)} is ${reason}`,
    );
}

function toCount(value: string | undefined): number {
  if (value === undefined) return 0;
  const n = Number(value.trim());
  return Number.isFinite(n) ? n : 0;
}
