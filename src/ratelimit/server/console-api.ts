// Read-only views of the rate limit service for the web console, on the HTTP port beside /json:
//   GET  /json/config   the loaded rules per domain, as a tree
//   GET  /json/stats    the per-rule counters (total, over limit, near limit, within, shadow) of
//                       every rule hit or configured, with a short ring of recent increases
//   POST /json/dry-run  the /json body; the decision it would get, the matched rule and the
//                       remaining quota, without counting it (docs/ratelimit.md)
// Unlike /json they need a key with `ratelimit:read`: they show the configuration and traffic
// figures, which the upstream service shows only on its debug port.

import type { Router } from '../../core/http/index.js';
import type { DescriptorNode, Level, Rule, RuleSet } from '../config/rules.js';
import type { RateLimitEngine } from '../engine/engine.js';
import { RULE_PREFIX, sanitize } from '../stats/names.js';
import type { SharedStatsTable } from '../stats/shared-table.js';
import { UNIT_NAMES } from '../types.js';
import { encodeResponse } from './json-codec.js';
import { asHttpError, decodeJsonBody } from './json-endpoint.js';
import type { StatsHistory } from './stats-history.js';

const READ = { scope: 'ratelimit:read' } as const;
const RULE_STATS = ['total_hits', 'over_limit', 'near_limit', 'within_limit', 'shadow_mode'] as const;
type RuleStat = (typeof RULE_STATS)[number];
const zeroCounters = (): Record<RuleStat, number> =>
  Object.fromEntries(RULE_STATS.map((s) => [s, 0])) as Record<RuleStat, number>;

export interface ConsoleApiSources {
  engine: RateLimitEngine;
  stats: SharedStatsTable;
  /** Recent per-rule increases (the console's sparklines start from them). */
  history?: StatsHistory;
}

export function ratelimitConsoleRoutes(router: Router, sources: ConsoleApiSources): void {
  router.get('/json/config', (_req, res) => res.json(configView(sources.engine.ruleSet)), READ);
  router.get(
    '/json/stats',
    (_req, res) => res.json(statsView(sources.stats, sources.engine.ruleSet, sources.history)),
    READ,
  );
  router.post(
    '/json/dry-run',
    async (req, res) => {
      const request = decodeJsonBody(await req.body());
      let result;
      try {
        result = await sources.engine.dryRun(request);
      } catch (error) {
        throw asHttpError(error);
      }
      const body = JSON.parse(encodeResponse(result.response)) as { statuses?: Record<string, unknown>[] };
      const statuses = (body.statuses ?? []).map((status, i) => ({
        ...status,
        matchedRule: ruleView(result.rules[i]),
        hitsInWindow: result.inWindow[i] ?? null,
      }));
      res.json({ dryRun: true, ...body, statuses });
    },
    READ,
  );
}

function ruleView(rule: Rule | undefined): Record<string, unknown> | null {
  if (rule === undefined) return null;
  return {
    // A limit override from the request has no configured rule (and no metric key of its own).
    source: rule.id < 0 ? 'request' : 'config',
    metricKey: rule.fullKey,
    name: rule.name,
    requestsPerUnit: rule.unlimited ? null : rule.requestsPerUnit,
    unit: rule.unlimited ? null : UNIT_NAMES[rule.unit],
    unlimited: rule.unlimited,
    shadowMode: rule.shadowMode,
    quotaMode: rule.quotaMode,
    replaces: [...rule.replaces],
  };
}

function levelView(level: Level): unknown[] {
  const nodes: DescriptorNode[] = [...level.exact.values()];
  for (const node of level.wildcards) if (!nodes.includes(node)) nodes.push(node);
  return nodes.map((node) => ({
    key: node.key,
    value: node.value,
    rule: ruleView(node.rule),
    shareThreshold: node.shareThreshold,
    valueToMetric: node.valueToMetric,
    descriptors: node.children ? levelView(node.children) : [],
  }));
}

export function configView(rules: RuleSet | undefined): unknown {
  if (!rules) return { loaded: false, files: [], domains: [] };
  return {
    loaded: true,
    loadedAt: new Date(rules.loadedAtMs).toISOString(),
    files: [...rules.files],
    domains: [...rules.domains.values()].map((d) => ({ domain: d.domain, descriptors: levelView(d.root) })),
  };
}

/** Per-rule totals from the shared statistics table (process totals since start). */
export function ruleTotals(stats: SharedStatsTable): Map<string, Record<RuleStat, number>> {
  const rules = new Map<string, Record<RuleStat, number>>();
  for (const [name, value] of stats.snapshot()) {
    if (!name.startsWith(RULE_PREFIX)) continue;
    const dot = name.lastIndexOf('.');
    const stat = name.slice(dot + 1) as RuleStat;
    if (!RULE_STATS.includes(stat)) continue;
    const key = name.slice(RULE_PREFIX.length, dot);
    const entry = rules.get(key) ?? zeroCounters();
    entry[stat] = value;
    rules.set(key, entry);
  }
  return rules;
}

/** The statistics keys of every configured rule (a rule with no hit yet has no counter). */
export function configuredRuleKeys(rules: RuleSet | undefined): string[] {
  const keys = new Set<string>();
  const walk = (level: Level) => {
    for (const node of [...level.exact.values(), ...level.wildcards]) {
      if (node.rule && node.rule.id >= 0) keys.add(sanitize(node.rule.fullKey));
      if (node.children) walk(node.children);
    }
  };
  for (const domain of rules?.domains.values() ?? []) walk(domain.root);
  return [...keys];
}

/**
 * Per-rule counters: every rule with a counter and every configured rule (zeros until hit),
 * sorted by key, each with its recent history (increases per `historyStepMs`, oldest first).
 */
export function statsView(stats: SharedStatsTable, rules?: RuleSet, history?: StatsHistory): unknown {
  const totals = ruleTotals(stats);
  const configured = new Set(configuredRuleKeys(rules));
  const keys = [...new Set([...totals.keys(), ...configured])].sort();
  return {
    at: new Date().toISOString(),
    ...(history ? { historyStepMs: history.stepMs, historyPoints: history.points } : {}),
    rules: keys.map((key) => ({
      key,
      configured: configured.has(key),
      ...(totals.get(key) ?? zeroCounters()),
      ...(history ? { history: history.of(key) } : {}),
    })),
  };
}
