// Descriptors → rules → counter operations → statuses (the upstream service pipeline, §3 of
// the reference notes). Synchronous whenever the store is; awaits only a store that returns a
// promise.
//
// Two paths share the rules, statistics and status logic:
//  - the memory store (the default): counter slots are found from key hashes pieced together
//    from segments precomputed when the rules are installed (key-hash.ts), so no cache-key string
//    is built, and the per-descriptor working state lives in buffers the engine reuses;
//  - network stores (Redis, memcached): they need the upstream key text, so the keys are built
//    as strings and handed over as one batch.

import { nearThreshold } from '../config/compile.js';
import type { DescriptorNode, DomainRules, Level, Rule, RuleSet } from '../config/rules.js';
import { ruleStats, STAT, type RuleStats } from '../stats/names.js';
import type { SharedStatsTable } from '../stats/shared-table.js';
import { KeyHasher, segmentOf, type Segment } from '../store/key-hash.js';
import { MemoryCounterStore } from '../store/memory.js';
import { UNTRACKED, type CounterOp, type CounterStore, type Counts } from '../store/types.js';
import {
  Code,
  MAX_UINT32,
  RateLimitRequestError,
  UNIT_SECONDS,
  type DescriptorEntry,
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

/** One counted descriptor of a request on the network-store path; it is also the store operation. */
interface Counted extends CounterOp {
  readonly index: number;
  readonly rule: Rule;
  readonly stats: RuleStats;
}

/** A domain of the installed rules, with its key prefix as text and (memory store) as a hash segment. */
interface DomainView {
  readonly rules: DomainRules;
  /** CACHE_KEY_PREFIX + domain + `_`. */
  readonly keyPrefix: string;
  readonly prefixSegment: Segment | undefined;
}

/**
 * Everything derived from one rule set, swapped in one assignment with it: a decision reads
 * `this.installed` once, so it sees the old or the new rules with their own tables, never a mix.
 */
interface Installed {
  readonly rules: RuleSet | undefined;
  readonly domains: ReadonlyMap<string, DomainView>;
  /** Statistic handles per rule id, resolved the first time the rule is hit. */
  readonly ruleStats: (RuleStats | undefined)[];
  /** Runtime-valued metric keys (detailed_metric, value_to_metric, overrides) → handles. */
  readonly dynamicStats: Map<string, RuleStats>;
  /** Per node id: hash segments of `key + "_"` and `value + "_"` (memory store only). */
  readonly keySegments: readonly Segment[];
  readonly valueSegments: readonly Segment[];
}

/** A dry run's answer: the response `shouldRateLimit` would give, and per descriptor its rule. */
export interface DryRunResult {
  readonly response: RateLimitResponse;
  /** The rule that matched each descriptor (undefined: none; a limit override has id -1). */
  readonly rules: readonly (Rule | undefined)[];
  /** Hits the matched rule's current window holds (undefined: not counted, or not tracked). */
  readonly inWindow: readonly (number | undefined)[];
}

const DYNAMIC_STATS_LIMIT = 10_000;
const UNDERSCORE = 0x5f;
const NO_HEADERS: HeaderValue[] = Object.freeze([]) as unknown as HeaderValue[];

export class RateLimitEngine {
  private installed: Installed;
  private readonly store: CounterStore;
  /** The store when it is the shared memory table: the hashed, string-free path. */
  private readonly memory: MemoryCounterStore | undefined;
  private readonly hasher: KeyHasher | undefined;
  private readonly stats: SharedStatsTable;
  private readonly clock: TimeSource;
  private readonly settings: EngineSettings;
  private readonly onUntracked: (() => void) | undefined;

  // Per-descriptor working state of the memory path, reused by every decision (a decision on
  // that path runs to its end synchronously, so one set per engine is enough).
  private path: DescriptorNode[] = [];
  private matched: (Rule | undefined)[] = [];
  private ruleStatsOf: (RuleStats | undefined)[] = [];
  private fpA = new Uint32Array(8);
  private fpB = new Uint32Array(8);
  private hits = new Float64Array(8);
  private counts = new Float64Array(8);

  constructor(options: EngineOptions) {
    this.store = options.store;
    this.memory = options.store instanceof MemoryCounterStore ? options.store : undefined;
    this.hasher = this.memory ? new KeyHasher(this.memory.bases) : undefined;
    this.stats = options.stats;
    this.clock = options.clock;
    this.settings = options.settings;
    this.onUntracked = options.onUntracked;
    this.installed = this.install(undefined);
  }

  /** Swaps the whole rule set in one assignment; requests in flight keep the set they started with. */
  setRules(rules: RuleSet | undefined): void {
    this.installed = this.install(rules);
  }

  get ruleSet(): RuleSet | undefined {
    return this.installed.rules;
  }

  private install(rules: RuleSet | undefined): Installed {
    const domains = new Map<string, DomainView>();
    const keySegments: Segment[] = [];
    const valueSegments: Segment[] = [];
    const bases = this.memory?.bases;
    if (rules) {
      for (const [name, domain] of rules.domains) {
        const keyPrefix = this.settings.cacheKeyPrefix + name + '_';
        domains.set(name, {
          rules: domain,
          keyPrefix,
          prefixSegment: bases ? segmentOf(bases, keyPrefix) : undefined,
        });
        if (bases) {
          const visit = (level: Level): void => {
            for (const node of level.exact.values()) {
              keySegments[node.id] = segmentOf(bases, node.key + '_');
              valueSegments[node.id] = segmentOf(bases, node.value + '_');
              if (node.children) visit(node.children);
            }
          };
          visit(domain.root);
        }
      }
    }
    return {
      rules,
      domains,
      ruleStats: new Array<RuleStats | undefined>(rules?.ruleCount ?? 0),
      dynamicStats: new Map(),
      keySegments,
      valueSegments,
    };
  }

  shouldRateLimit(request: RateLimitRequest): RateLimitResponse | Promise<RateLimitResponse> {
    const installed = this.accept(request);
    if (this.memory) return this.decideInMemory(installed, this.memory, request);
    return this.decideWithStore(installed, request);
  }

  /** The installed rules a request is judged by; refuses what the upstream refuses. */
  private accept(request: RateLimitRequest): Installed {
    if (request.domain === '') throw new RateLimitRequestError('rate limit domain must not be empty');
    if (request.descriptors.length === 0)
      throw new RateLimitRequestError('rate limit descriptor list must not be empty');
    const installed = this.installed;
    if (!installed.rules) throw new RateLimitRequestError('no rate limit configuration loaded');
    return installed;
  }

  // ---- the memory store path ----------------------------------------------------------------

  private decideInMemory(
    installed: Installed,
    memory: MemoryCounterStore,
    request: RateLimitRequest,
  ): RateLimitResponse {
    const descriptors = request.descriptors;
    const n = descriptors.length;
    if (this.fpA.length < n) this.grow(n);
    const statuses: DescriptorStatus[] = new Array(n);
    const matched = this.matched;
    const statsOf = this.ruleStatsOf;
    const domain = installed.domains.get(request.domain);
    const requestHits = request.hitsAddend && request.hitsAddend > 1 ? request.hitsAddend : 1;

    // Match every descriptor first: `replaces` works across the whole request.
    let replaced: Set<string> | undefined;
    for (let i = 0; i < n; i++) matched[i] = undefined;
    if (domain === undefined) {
      this.stats.inc(STAT.domainNotFound(request.domain));
    } else {
      const path = this.path;
      for (let i = 0; i < n; i++) {
        const d = descriptors[i]!;
        const entries = d.entries;
        let rule: Rule | undefined;
        if (d.limit) {
          rule = overrideRule(d, this.settings.nearLimitRatio);
          statsOf[i] = this.dynamicStatsFor(installed, overrideMetricKey(request.domain, d));
          this.hashRuntimeKey(domain, entries, rule.divider, i);
        } else {
          rule = entries.length > 0 ? matchRule(domain.rules, entries, path) : undefined;
          if (rule === undefined) continue;
          statsOf[i] = rule.dynamicMetric
            ? this.dynamicStatsFor(installed, metricKeyOf(request.domain, rule, path, entries))
            : this.staticStatsFor(installed, rule);
          if (!rule.unlimited) this.hashMatchedKey(installed, domain, entries, path, rule.divider, i);
          if (rule.replaces.length > 0) {
            replaced ??= new Set();
            for (const name of rule.replaces) replaced.add(name);
          }
        }
        matched[i] = rule;
      }
    }

    // Which descriptors count, with how many hits; the rest are answered here.
    const hits = this.hits;
    let counted = 0;
    for (let i = 0; i < n; i++) {
      const rule = matched[i];
      if (rule === undefined || (replaced !== undefined && rule.name !== '' && replaced.has(rule.name))) {
        matched[i] = undefined;
        statuses[i] = { code: Code.OK, limitRemaining: 0 };
        continue;
      }
      const h = descriptors[i]!.hitsAddend;
      hits[i] = h !== undefined ? h : requestHits;
      if (rule.unlimited) {
        // Unlimited rules (docs/ratelimit.md): answered without the store, statistics still collected.
        const s = statsOf[i]!;
        this.stats.add(s.totalHits, hits[i]!);
        this.stats.add(s.withinLimit, hits[i]!);
        statuses[i] = { code: Code.OK, limitRemaining: MAX_UINT32 };
        continue;
      }
      counted++;
    }

    if (counted > 0) {
      const nowMs = this.clock.nowMs();
      const counts = this.counts;
      const fpA = this.fpA;
      const fpB = this.fpB;
      // STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: when one descriptor would go over, only the
      // descriptors that would exceed consume quota (peek first, then add 0 to the others).
      let holdBack = false;
      if (this.settings.stopCacheKeyIncrementWhenOverlimit && counted > 1) {
        for (let i = 0; i < n; i++) {
          const rule = matched[i];
          if (rule === undefined || rule.unlimited) continue;
          const current = memory.peekHashed(fpA[i]!, fpB[i]!, rule.divider, nowMs);
          const exceeds = current !== UNTRACKED && current + hits[i]! > rule.requestsPerUnit;
          counts[i] = exceeds ? 1 : 0;
          if (exceeds) holdBack = true;
        }
      }
      for (let i = 0; i < n; i++) {
        const rule = matched[i];
        if (rule === undefined || rule.unlimited) continue;
        const add = holdBack && counts[i] === 0 ? 0 : hits[i]!;
        counts[i] = memory.incrementHashed(fpA[i]!, fpB[i]!, rule.divider, add, nowMs);
      }
      const nowS = Math.floor(this.clock.nowMs() / 1000);
      for (let i = 0; i < n; i++) {
        const rule = matched[i];
        if (rule === undefined || rule.unlimited) continue;
        statuses[i] = this.status(rule, statsOf[i]!, hits[i]!, counts[i]!, nowS);
      }
    }
    const response = this.finish(statuses, matched);
    for (let i = 0; i < n; i++) {
      matched[i] = undefined;
      statsOf[i] = undefined;
    }
    return response;
  }

  private grow(n: number): void {
    let size = this.fpA.length;
    while (size < n) size *= 2;
    this.fpA = new Uint32Array(size);
    this.fpB = new Uint32Array(size);
    this.hits = new Float64Array(size);
    this.counts = new Float64Array(size);
  }

  /** Fingerprint of the upstream key shape for a matched rule, from precomputed segments. */
  private hashMatchedKey(
    installed: Installed,
    domain: DomainView,
    entries: readonly DescriptorEntry[],
    path: readonly DescriptorNode[],
    divider: number,
    i: number,
  ): void {
    const h = this.hasher!.reset().segment(domain.prefixSegment!);
    for (let j = 0; j < entries.length; j++) {
      const e = entries[j]!;
      const node = path[j]!;
      // key + "_": the configured key's segment when the request spells it the same way.
      if (e.key === node.key) h.segment(installed.keySegments[node.id]!);
      else h.text(e.key).unit(UNDERSCORE);
      // value + "_": share_threshold counts under the configured pattern; an explicit value is
      // the configured text; otherwise (key-only, wildcard) the runtime value.
      if (node.shareThreshold || e.value === node.value) h.segment(installed.valueSegments[node.id]!);
      else h.text(e.value).unit(UNDERSCORE);
    }
    this.fpA[i] = h.fingerprintA(divider);
    this.fpB[i] = h.fingerprintB(divider);
  }

  /** Fingerprint of a key made of runtime values only (limit overrides). */
  private hashRuntimeKey(
    domain: DomainView,
    entries: readonly DescriptorEntry[],
    divider: number,
    i: number,
  ): void {
    const h = this.hasher!.reset().segment(domain.prefixSegment!);
    for (let j = 0; j < entries.length; j++) {
      const e = entries[j]!;
      h.text(e.key).unit(UNDERSCORE).text(e.value).unit(UNDERSCORE);
    }
    this.fpA[i] = h.fingerprintA(divider);
    this.fpB[i] = h.fingerprintB(divider);
  }

  // ---- the network store path ---------------------------------------------------------------

  private decideWithStore(
    installed: Installed,
    request: RateLimitRequest,
  ): RateLimitResponse | Promise<RateLimitResponse> {
    const descriptors = request.descriptors;
    const n = descriptors.length;
    const statuses: DescriptorStatus[] = new Array(n);
    const requestHits = request.hitsAddend && request.hitsAddend > 1 ? request.hitsAddend : 1;

    const { matched, statsOf, cacheKeys, replaced } = this.matchWithKeys(installed, request, true);

    const counted: Counted[] = [];
    const ops: CounterOp[] = counted;
    for (let i = 0; i < n; i++) {
      const rule = matched[i];
      if (rule === undefined || (replaced !== undefined && rule.name !== '' && replaced.has(rule.name))) {
        matched[i] = undefined;
        statuses[i] = { code: Code.OK, limitRemaining: 0 };
        continue;
      }
      const d = descriptors[i]!;
      const hits = d.hitsAddend !== undefined ? d.hitsAddend : requestHits;
      const stats = statsOf[i]!;
      if (rule.unlimited) {
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

    if (counted.length === 0) return this.finish(statuses, matched);

    if (this.settings.stopCacheKeyIncrementWhenOverlimit && counted.length > 1) {
      const peeked = this.store.peek(ops, this.clock.nowMs());
      if (isPromise(peeked)) {
        return peeked.then((current) => {
          const adjusted = holdBack(ops, counted, current);
          return this.countAsync(
            this.store.increment(adjusted, this.clock.nowMs()),
            counted,
            statuses,
            matched,
          );
        });
      }
      return this.countAsync(
        this.store.increment(holdBack(ops, counted, peeked), this.clock.nowMs()),
        counted,
        statuses,
        matched,
      );
    }
    return this.countAsync(this.store.increment(ops, this.clock.nowMs()), counted, statuses, matched);
  }

  /**
   * The rule and the upstream key text of every descriptor (network-store path and dry runs).
   * `withStats` false: no statistic is touched (a dry run leaves every counter where it was).
   */
  private matchWithKeys(
    installed: Installed,
    request: RateLimitRequest,
    withStats: boolean,
  ): {
    matched: (Rule | undefined)[];
    statsOf: (RuleStats | undefined)[];
    cacheKeys: (string | undefined)[];
    replaced: Set<string> | undefined;
  } {
    const descriptors = request.descriptors;
    const n = descriptors.length;
    const domain = installed.domains.get(request.domain);
    const matched: (Rule | undefined)[] = new Array(n);
    const statsOf: (RuleStats | undefined)[] = new Array(n);
    const cacheKeys: (string | undefined)[] = new Array(n);
    const path: DescriptorNode[] = [];
    let replaced: Set<string> | undefined;
    if (domain === undefined) {
      if (withStats) this.stats.inc(STAT.domainNotFound(request.domain));
      return { matched, statsOf, cacheKeys, replaced };
    }
    for (let i = 0; i < n; i++) {
      const d = descriptors[i]!;
      if (d.limit) {
        matched[i] = overrideRule(d, this.settings.nearLimitRatio);
        if (withStats) statsOf[i] = this.dynamicStatsFor(installed, overrideMetricKey(request.domain, d));
        cacheKeys[i] = cacheKey(domain.keyPrefix, d.entries, undefined);
        continue;
      }
      const rule = d.entries.length > 0 ? matchRule(domain.rules, d.entries, path) : undefined;
      if (!rule) continue;
      matched[i] = rule;
      if (withStats)
        statsOf[i] = rule.dynamicMetric
          ? this.dynamicStatsFor(installed, metricKeyOf(request.domain, rule, path, d.entries))
          : this.staticStatsFor(installed, rule);
      if (!rule.unlimited) cacheKeys[i] = cacheKey(domain.keyPrefix, d.entries, path);
      if (rule.replaces.length > 0) {
        replaced ??= new Set();
        for (const name of rule.replaces) replaced.add(name);
      }
    }
    return { matched, statsOf, cacheKeys, replaced };
  }

  // ---- dry runs -----------------------------------------------------------------------------

  /**
   * What `shouldRateLimit` would answer, without counting: the counters are read (peek), never
   * incremented, and no statistic moves. Each status also names the rule that matched and how
   * many hits its window holds now. Every descriptor is judged as if it were counted alone
   * (STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT does not change a dry run's statuses).
   */
  dryRun(request: RateLimitRequest): DryRunResult | Promise<DryRunResult> {
    const installed = this.accept(request);
    const descriptors = request.descriptors;
    const n = descriptors.length;
    const requestHits = request.hitsAddend && request.hitsAddend > 1 ? request.hitsAddend : 1;
    const { matched, cacheKeys, replaced } = this.matchWithKeys(installed, request, false);
    const rules: (Rule | undefined)[] = [...matched];
    const statuses: DescriptorStatus[] = new Array(n);
    const ops: CounterOp[] = [];
    const opIndex: number[] = [];
    const hits: number[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const rule = matched[i];
      if (rule === undefined || (replaced !== undefined && rule.name !== '' && replaced.has(rule.name))) {
        matched[i] = undefined;
        statuses[i] = { code: Code.OK, limitRemaining: 0 };
        continue;
      }
      hits[i] = descriptors[i]!.hitsAddend ?? requestHits;
      if (rule.unlimited) {
        statuses[i] = { code: Code.OK, limitRemaining: MAX_UINT32 };
        continue;
      }
      ops.push({ key: cacheKeys[i]!, divider: rule.divider, hits: 0, limit: rule.requestsPerUnit });
      opIndex.push(i);
    }
    const judge = (current: Counts): DryRunResult => {
      const nowS = Math.floor(this.clock.nowMs() / 1000);
      const inWindow: (number | undefined)[] = new Array(n);
      for (let j = 0; j < opIndex.length; j++) {
        const i = opIndex[j]!;
        const now = current[j]!;
        inWindow[i] = now === UNTRACKED ? undefined : now;
        statuses[i] = statusOf(matched[i]!, now === UNTRACKED ? UNTRACKED : now + hits[i]!, nowS);
      }
      return { response: this.finish(statuses, matched, false), rules, inWindow };
    };
    if (ops.length === 0) return judge([]);
    const peeked = this.store.peek(ops, this.clock.nowMs());
    if (isPromise(peeked))
      return peeked.then(judge, (error: unknown) => {
        throw new RateLimitRequestError(
          error instanceof Error ? error.message : String(error),
          'store_error',
        );
      });
    return judge(peeked);
  }

  private countAsync(
    result: Counts | Promise<Counts>,
    counted: Counted[],
    statuses: DescriptorStatus[],
    matched: (Rule | undefined)[],
  ): RateLimitResponse | Promise<RateLimitResponse> {
    if (isPromise(result)) {
      return result.then(
        (counts) => this.decide(counts, counted, statuses, matched),
        (error: unknown) => {
          if (error instanceof RateLimitRequestError) throw error;
          throw new RateLimitRequestError(
            error instanceof Error ? error.message : String(error),
            'store_error',
          );
        },
      );
    }
    return this.decide(result, counted, statuses, matched);
  }

  private decide(
    counts: Counts,
    counted: Counted[],
    statuses: DescriptorStatus[],
    matched: (Rule | undefined)[],
  ): RateLimitResponse {
    const nowS = Math.floor(this.clock.nowMs() / 1000);
    for (let j = 0; j < counted.length; j++) {
      const { index, rule, stats, hits } = counted[j]!;
      statuses[index] = this.status(rule, stats, hits, counts[j]!, nowS);
    }
    return this.finish(statuses, matched);
  }

  // ---- shared by both paths -----------------------------------------------------------------

  /** The status of a counted descriptor from its count after the increment, with its statistics. */
  private status(rule: Rule, stats: RuleStats, hits: number, after: number, nowS: number): DescriptorStatus {
    const t = this.stats;
    const limit = rule.requestsPerUnit;
    t.add(stats.totalHits, hits);
    if (after === UNTRACKED) {
      // Table full: fail open, visibly (memory_store_full stat, warning log), never block.
      this.onUntracked?.();
      t.add(stats.withinLimit, hits);
      return statusOf(rule, after, nowS);
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
      if (rule.shadowMode) t.add(stats.shadowMode, before >= limit ? hits : after - limit);
      return statusOf(rule, after, nowS);
    }
    t.add(stats.withinLimit, hits);
    if (after > near) t.add(stats.nearLimit, before >= near ? hits : after - near);
    return statusOf(rule, after, nowS);
  }

  /** `matched[i]` is the counted rule of status i (undefined when none applied). */
  private finish(
    statuses: DescriptorStatus[],
    matched: readonly (Rule | undefined)[],
    countStats = true,
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
    const responseHeadersToAdd = this.settings.responseHeaders.enabled
      ? this.headers(statuses, matched)
      : NO_HEADERS;
    if (overallCode === Code.OVER_LIMIT && this.settings.shadowMode) {
      overallCode = Code.OK;
      if (countStats) this.stats.inc(STAT.globalShadowMode);
    }
    return { overallCode, statuses, responseHeadersToAdd };
  }

  /** Limit, remaining and reset of the most restrictive status (upstream choice, §3.5). */
  private headers(statuses: DescriptorStatus[], matched: readonly (Rule | undefined)[]): HeaderValue[] {
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
    if (!chosen?.currentLimit) return NO_HEADERS;
    const h = this.settings.responseHeaders;
    return [
      { key: h.limit, value: String(chosen.currentLimit.requestsPerUnit) },
      { key: h.remaining, value: String(chosen.limitRemaining) },
      { key: h.reset, value: String(chosen.durationUntilReset ?? 0) },
    ];
  }

  private staticStatsFor(installed: Installed, rule: Rule): RuleStats {
    let s = installed.ruleStats[rule.id];
    if (s === undefined) {
      s = ruleStats(this.stats, rule.fullKey);
      installed.ruleStats[rule.id] = s;
    }
    return s;
  }

  private dynamicStatsFor(installed: Installed, metricKey: string): RuleStats {
    const cache = installed.dynamicStats;
    let s = cache.get(metricKey);
    if (!s) {
      s = ruleStats(this.stats, metricKey);
      if (cache.size >= DYNAMIC_STATS_LIMIT) cache.clear();
      cache.set(metricKey, s);
    }
    return s;
  }
}

/** The status of a rule whose window holds `after` hits once this request's `hits` are in. */
function statusOf(rule: Rule, after: number, nowS: number): DescriptorStatus {
  const limit = rule.requestsPerUnit;
  const currentLimit = rule.currentLimit;
  const durationUntilReset = rule.divider - (nowS % rule.divider);
  if (after === UNTRACKED) return { code: Code.OK, currentLimit, limitRemaining: limit, durationUntilReset };
  if (after > limit) {
    if (rule.shadowMode) return { code: Code.OK, currentLimit, limitRemaining: 0, durationUntilReset };
    return { code: Code.OVER_LIMIT, currentLimit, limitRemaining: 0, durationUntilReset };
  }
  return { code: Code.OK, currentLimit, limitRemaining: limit - after, durationUntilReset };
}

/** Upstream key shape without the window: prefix + domain_ + Σ key_value_ (share_threshold → pattern). */
function cacheKey(
  keyPrefix: string,
  entries: readonly DescriptorEntry[],
  path: readonly DescriptorNode[] | undefined,
): string {
  let key = keyPrefix;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i]!;
    const node = path?.[i];
    key += e.key + '_' + (node?.shareThreshold ? node.value : e.value) + '_';
  }
  return key;
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
    id: -1,
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
    currentLimit: { requestsPerUnit: limit.requestsPerUnit, unit: limit.unit as Unit, name: '' },
  };
}

function overrideMetricKey(domain: string, d: RequestDescriptor): string {
  let key = domain;
  for (const e of d.entries) key += '.' + (e.value === '' ? e.key : e.key + '_' + e.value);
  return key;
}
