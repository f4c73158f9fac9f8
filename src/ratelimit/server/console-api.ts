// Read-only views of the rate limit service for the web console, on the HTTP port beside /json:
//   GET  /json/config   the loaded rules per domain, as a tree
//   GET  /json/stats    the per-rule counters (total, over limit, near limit, within, shadow)
//   POST /json/dry-run  the /json body; the decision it would get, the matched rule and the
//                       remaining quota, without counting it (docs/ratelimit.md)
// Unlike /json they need a key with `ratelimit:read`: they show the configuration and traffic
// figures, which the upstream service shows only on its debug port.

import type { Router } from '../../core/http/index.js';
import type { DescriptorNode, Level, Rule, RuleSet } from '../config/rules.js';
import type { RateLimitEngine } from '../engine/engine.js';
import { RULE_PREFIX } from '../stats/names.js';
import type { SharedStatsTable } from '../stats/shared-table.js';
import { UNIT_NAMES } from '../types.js';
import { encodeResponse } from './json-codec.js';
import { asHttpError, decodeJsonBody } from './json-endpoint.js';

const READ = { scope: 'ratelimit:read' } as const;
const RULE_STATS = ['total_hits', 'over_limit', 'near_limit', 'within_limit', 'shadow_mode'] as const;

export interface ConsoleApiSources {
  engine: RateLimitEngine;
  stats: SharedStatsTable;
}

export function ratelimitConsoleRoutes(router: Router, sources: ConsoleApiSources): void {
  router.get('/json/config', (_req, res) => res.json(configView(sources.engine.ruleSet)), READ);
  router.get('/json/stats', (_req, res) => res.json(statsView(sources.stats)), READ);
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

/** Per-rule counters from the shared statistics table (process totals since start). */
export function statsView(stats: SharedStatsTable): unknown {
  const rules = new Map<string, Record<string, number>>();
  for (const [name, value] of stats.snapshot()) {
    if (!name.startsWith(RULE_PREFIX)) continue;
    const dot = name.lastIndexOf('.');
    const stat = name.slice(dot + 1);
    if (!(RULE_STATS as readonly string[]).includes(stat)) continue;
    const key = name.slice(RULE_PREFIX.length, dot);
    const entry = rules.get(key) ?? Object.fromEntries(RULE_STATS.map((s) => [s, 0]));
    entry[stat] = value;
    rules.set(key, entry);
  }
  return {
    at: new Date().toISOString(),
    rules: [...rules].map(([key, values]) => ({ key, ...values })),
  };
}
