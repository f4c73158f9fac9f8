// Descriptors → rules → counter operations → statuses (the upstream service pipeline, §3 of
// the reference notes). Synchronous whenever the store is; awaits only a store that returns a
// promise.

import { nearThreshold } from '../config/compile.js';
import type { Rule, RuleSet } from '../config/rules.js';
import { ruleStats, STAT, type RuleStats } from '../stats/names.js';
import type { SharedStatsTable } from '../stats/shared-table.js';
import { UNTRACKED, type CounterOp, type CounterStore, type Counts } from '../store/types.js';
import {
  Code,
  MAX_UINT32,
  RateLimitRequestError,
  UNIT_SECONDS,
  type DescriptorStatus,
  type HeaderValue,
  type RateLimitRequest,
  type RateLimitResponse,
  type RequestDescriptor,
  type Unit,
} from '../types.js';
import type { TimeSource } from './clock.js';
import { matchRule, metricKeyOf } from './match.js';

export interface EngineSettings {
  shadowMode: boolean;
  quotaMode: boolean;
  nearLimitRatio: number;
  stopCacheKeyIncrementWhenOverlimit: boolean;
  cacheKeyPrefix: string;
  responseHeaders: { enabled: boolean; limit: string; remaining: string; reset: string };
}

export interface EngineOptions {
  store: CounterStore;
  stats: SharedStatsTable;
  clock: TimeSource;
  settings: EngineSettings;
  /** Called when the store could not count a descriptor (memory table full). */
  onUntracked?: () => void;
}

/** One counted descriptor of a request; it is also the store operation (one object, not two). */
interface Counted extends CounterOp {
  readonly index: number;
  readonly rule: Rule;
  readonly stats: RuleStats;
}

const DYNAMIC_STATS_LIMIT = 10_000;

export class RateLimitEngine {
  private rules: RuleSet | undefined;
  private readonly staticStats = new WeakMap<Rule, RuleStats>();
  private dynamicStats = new Map<string, RuleStats>();
  private readonly store: CounterStore;
  private readonly stats: SharedStatsTable;
  private readonly clock: TimeSource;
  private readonly settings: EngineSettings;
  private readonly onUntracked: (() => void) | undefined;

  constructor(options: EngineOptions) {
    this.store = options.store;
    this.stats = options.stats;
    this.clock = options.clock;
    this.settings = options.settings;
    this.onUntracked = options.onUntracked;
  }

  /** Swaps the whole rule set in one assignment; requests in flight keep the set they started with. */
  setRules(rules: RuleSet | undefined): void {
    this.rules = rules;
    this.dynamicStats = new Map();
  }

  get ruleSet(): RuleSet | undefined {
    return this.rules;
  }

  shouldRateLimit(request: RateLimitRequest): RateLimitResponse | Promise<RateLimitResponse> {
    if (request.domain === '') throw new RateLimitRequestError('rate limit domain must not be empty');
    if (request.descriptors.length === 0)
      throw new RateLimitRequestError('rate limit descriptor list must not be empty');
    const rules = this.rules;
    if (!rules) throw new RateLimitRequestError('no rate limit configuration loaded');

    const descriptors = request.descriptors;
    const n = descriptors.length;
    const statuses: DescriptorStatus[] = new Array(n);
    const domain = rules.domains.get(request.domain);
    const requestHits = request.hitsAddend && request.hitsAddend > 1 ? request.hitsAddend : 1;

    // Match every descriptor first: `replaces` works across the whole request.
    const matched: (Rule | undefined)[] = new Array(n);
    const metricKeys: (string | undefined)[] = new Array(n);
    const cacheKeys: (string | undefined)[] = new Array(n);
    let replaced: Set<string> | undefined;
    if (domain === undefined) {
      this.stats.inc(STAT.domainNotFound(request.domain));
    } else {
      for (let i = 0; i < n; i++) {
        const d = descriptors[i]!;
        if (d.limit) {
          const rule = overrideRule(d, this.settings.nearLimitRatio);
          matched[i] = rule;
          metricKeys[i] = overrideMetricKey(request.domain, d);
          cacheKeys[i] = this.cacheKey(request.domain, d, undefined);
          continue;
        }
        const m = d.entries.length > 0 ? matchRule(domain, d.entries) : undefined;
        if (!m) continue;
        matched[i] = m.rule;
        metricKeys[i] = m.rule.dynamicMetric ? metricKeyOf(request.domain, m, d.entries) : undefined;
        if (!m.rule.unlimited) cacheKeys[i] = this.cacheKey(request.domain, d, m.path);
        if (m.rule.replaces.length > 0) {
          replaced ??= new Set();
          for (const name of m.rule.replaces) replaced.add(name);
        }
      }
    }

    const counted: Counted[] = [];
    const ops: CounterOp[] = counted;
    for (let i = 0; i < n; i++) {
      const rule = matched[i];
      if (rule === undefined || (replaced !== undefined && rule.name !== '' && replaced.has(rule.name))) {
        statuses[i] = { code: Code.OK, limitRemaining: 0 };
        continue;
      }
      const d = descriptors[i]!;
      const hits = d.hitsAddend !== undefined ? d.hitsAddend : requestHits;
      const stats = this.statsFor(rule, metricKeys[i]);
      if (rule.unlimited) {
        // Unlimited rules (docs/ratelimit.md): answered without the store, statistics still collected.
        this.stats.add(stats.totalHits, hits);
        this.stats.add(stats.withinLimit, hits);
        statuses[i] = { code: Code.OK, limitRemaining: MAX_UINT32 };
        continue;
      }
      counted.push({
        key: cacheKeys[i]!,
        divider: rule.divider,
        hits,
        limit: rule.requestsPerUnit,
        index: i,
        rule,
        stats,
      });
    }

    if (counted.length === 0) return this.finish(statuses, descriptors, matched);

    if (this.settings.stopCacheKeyIncrementWhenOverlimit && counted.length > 1) {
      const peeked = this.store.peek(ops, this.clock.nowMs());
      if (isPromise(peeked)) {
        return peeked.then((current) => {
          const adjusted = holdBack(ops, counted, current);
          return this.countAsync(
            this.store.increment(adjusted, this.clock.nowMs()),
            counted,
            statuses,
            descriptors,
            matched,
          );
        });
      }
      return this.countAsync(
        this.store.increment(holdBack(ops, counted, peeked), this.clock.nowMs()),
        counted,
        statuses,
        descriptors,
        matched,
      );
    }
    return this.countAsync(
      this.store.increment(ops, this.clock.nowMs()),
      counted,
      statuses,
      descriptors,
      matched,
    );
  }

  private countAsync(
    result: Counts | Promise<Counts>,
    counted: Counted[],
    statuses: DescriptorStatus[],
    descriptors: readonly RequestDescriptor[],
    matched: (Rule | undefined)[],
  ): RateLimitResponse | Promise<RateLimitResponse> {
    if (isPromise(result)) {
      return result.then(
        (counts) => this.decide(counts, counted, statuses, descriptors, matched),
        (error: unknown) => {
          if (error instanceof RateLimitRequestError) throw error;
          throw new RateLimitRequestError(
            error instanceof Error ? error.message : String(error),
            'store_error',
          );
        },
      );
    }
    return this.decide(result, counted, statuses, descriptors, matched);
  }

  private decide(
    counts: Counts,
    counted: Counted[],
    statuses: DescriptorStatus[],
    descriptors: readonly RequestDescriptor[],
    matched: (Rule | undefined)[],
  ): RateLimitResponse {
    const nowS = Math.floor(this.clock.nowMs() / 1000);
    const t = this.stats;
    for (let j = 0; j < counted.length; j++) {
      const { index, rule, stats, hits } = counted[j]!;
      const after = counts[j]!;
      const limit = rule.requestsPerUnit;
      const currentLimit = { requestsPerUnit: limit, unit: rule.unit, name: rule.name };
      const durationUntilReset = rule.divider - (nowS % rule.divider);
      t.add(stats.totalHits, hits);
      if (after === UNTRACKED) {
        // Table full: fail open, visibly (memory_store_full stat, warning log), never block.
        this.onUntracked?.();
        t.add(stats.withinLimit, hits);
        statuses[index] = { code: Code.OK, currentLimit, limitRemaining: limit, durationUntilReset };
        continue;
      }
      const before = after - hits;
      const near = rule.nearThreshold;
      if (after > limit) {
        if (before >= limit) {
          t.add(stats.overLimit, hits);
        } else {
          t.add(stats.overLimit, after - limit);
          t.add(stats.nearLimit, limit - Math.max(near, before));
        }
        if (rule.shadowMode) {
          t.add(stats.shadowMode, before >= limit ? hits : after - limit);
          statuses[index] = { code: Code.OK, currentLimit, limitRemaining: 0, durationUntilReset };
        } else {
          statuses[index] = { code: Code.OVER_LIMIT, currentLimit, limitRemaining: 0, durationUntilReset };
        }
      } else {
        t.add(stats.withinLimit, hits);
        if (after > near) t.add(stats.nearLimit, before >= near ? hits : after - near);
        statuses[index] = { code: Code.OK, currentLimit, limitRemaining: limit - after, durationUntilReset };
      }
    }
    return this.finish(statuses, descriptors, matched);
  }

  private finish(
    statuses: DescriptorStatus[],
    _descriptors: readonly RequestDescriptor[],
    matched: (Rule | undefined)[],
  ): RateLimitResponse {
    let overNonQuota = false;
    let quotaStatuses = 0;
    let quotaOver = 0;
    for (let i = 0; i < statuses.length; i++) {
      const s = statuses[i]!;
      const quota =
        s.currentLimit !== undefined && (this.settings.quotaMode || matched[i]?.quotaMode === true);
      if (quota) {
        quotaStatuses++;
        if (s.code === Code.OVER_LIMIT) quotaOver++;
      } else if (s.code === Code.OVER_LIMIT) {
        overNonQuota = true;
      }
    }
    let overallCode: Code =
      overNonQuota || (quotaStatuses > 0 && quotaOver === quotaStatuses) ? Code.OVER_LIMIT : Code.OK;
    const responseHeadersToAdd = this.settings.responseHeaders.enabled ? this.headers(statuses, matched) : [];
    if (overallCode === Code.OVER_LIMIT && this.settings.shadowMode) {
      overallCode = Code.OK;
      this.stats.inc(STAT.globalShadowMode);
    }
    return { overallCode, statuses, responseHeadersToAdd };
  }

  /** Limit, remaining and reset of the most restrictive status (upstream choice, §3.5). */
  private headers(statuses: DescriptorStatus[], matched: (Rule | undefined)[]): HeaderValue[] {
    let chosen: DescriptorStatus | undefined;
    for (let i = statuses.length - 1; i >= 0; i--) {
      const s = statuses[i]!;
      const quota = this.settings.quotaMode || matched[i]?.quotaMode === true;
      if (s.code === Code.OVER_LIMIT && !quota) {
        chosen = s;
        break;
      }
    }
    if (!chosen) {
      for (const s of statuses) {
        if (s.currentLimit && (chosen === undefined || s.limitRemaining < chosen.limitRemaining)) chosen = s;
      }
    }
    if (!chosen?.currentLimit) return [];
    const h = this.settings.responseHeaders;
    return [
      { key: h.limit, value: String(chosen.currentLimit.requestsPerUnit) },
      { key: h.remaining, value: String(chosen.limitRemaining) },
      { key: h.reset, value: String(chosen.durationUntilReset ?? 0) },
    ];
  }

  private statsFor(rule: Rule, dynamicKey: string | undefined): RuleStats {
    if (dynamicKey === undefined) {
      let s = this.staticStats.get(rule);
      if (!s) {
        s = ruleStats(this.stats, rule.fullKey);
        this.staticStats.set(rule, s);
      }
      return s;
    }
    let s = this.dynamicStats.get(dynamicKey);
    if (!s) {
      s = ruleStats(this.stats, dynamicKey);
      if (this.dynamicStats.size >= DYNAMIC_STATS_LIMIT) this.dynamicStats.clear();
      this.dynamicStats.set(dynamicKey, s);
    }
    return s;
  }

  /** Upstream key shape without the window: prefix + domain_ + Σ key_value_ (share_threshold → pattern). */
  private cacheKey(
    domain: string,
    d: RequestDescriptor,
    path: { shareThreshold: boolean; value: string }[] | undefined,
  ): string {
    let key = this.settings.cacheKeyPrefix + domain + '_';
    const entries = d.entries;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i]!;
      const node = path?.[i];
      key += e.key + '_' + (node?.shareThreshold ? node.value : e.value) + '_';
    }
    return key;
  }
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

/** STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: only descriptors that would exceed consume quota. */
function holdBack(ops: CounterOp[], counted: Counted[], current: Counts): CounterOp[] {
  let anyExceeds = false;
  const exceeds = counted.map((c, j) => {
    const would = current[j]! !== UNTRACKED && current[j]! + c.hits > c.rule.requestsPerUnit;
    if (would) anyExceeds = true;
    return would;
  });
  if (!anyExceeds) return ops;
  return ops.map((op, j) =>
    exceeds[j]
      ? op
      : { key: op.key, divider: op.divider, hits: 0, ...(op.limit === undefined ? {} : { limit: op.limit }) },
  );
}

function overrideRule(d: RequestDescriptor, ratio: number): Rule {
  const limit = d.limit!;
  const divider = UNIT_SECONDS[limit.unit];
  if (divider === undefined)
    throw new RateLimitRequestError(`invalid rate limit unit ${limit.unit} in descriptor limit override`);
  return {
    requestsPerUnit: limit.requestsPerUnit,
    unit: limit.unit as Unit,
    divider,
    unlimited: false,
    shadowMode: false,
    quotaMode: false,
    name: '',
    replaces: [],
    fullKey: '',
    detailedMetric: false,
    dynamicMetric: true,
    nearThreshold: nearThreshold(limit.requestsPerUnit, ratio),
  };
}

function overrideMetricKey(domain: string, d: RequestDescriptor): string {
  let key = domain;
  for (const e of d.entries) key += '.' + (e.value === '' ? e.key : e.key + '_' + e.value);
  return key;
}
