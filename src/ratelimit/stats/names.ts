// Statistic names of the spec (the upstream's statsd names), and the handles the engine adds to.

import type { SharedStatsTable, StatHandle } from './shared-table.js';

export const RULE_PREFIX = 'ratelimit.service.rate_limit.';
export const STAT = {
  configLoadSuccess: 'ratelimit.service.config_load_success',
  configLoadError: 'ratelimit.service.config_load_error',
  globalShadowMode: 'ratelimit.service.global_shadow_mode',
  callError: (kind: string) => `ratelimit.service.call.should_rate_limit.${kind}`,
  serverTotalRequests: (method: string) => `ratelimit_server.${method}.total_requests`,
  serverResponseTimeCount: (method: string) => `ratelimit_server.${method}.response_time.count`,
  serverResponseTimeTotalUs: (method: string) => `ratelimit_server.${method}.response_time.total_us`,
  domainNotFound: (domain: string) => `${RULE_PREFIX}${sanitize(domain)}.domain_not_found`,
  memoryStoreFull: 'ratelimit.memory_store.full',
} as const;

/** `:` and `|` break statsd lines; dots of an IPv4 address would split the path. */
export function sanitize(name: string): string {
  let out = name.replace(/[:|]/g, '_');
  if (/\d\.\d/.test(out)) out = out.replace(/\b(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\b/g, '$1_$2_$3_$4');
  return out;
}

export interface RuleStats {
  readonly totalHits: StatHandle;
  readonly overLimit: StatHandle;
  readonly nearLimit: StatHandle;
  readonly withinLimit: StatHandle;
  readonly shadowMode: StatHandle;
}

export function ruleStats(table: SharedStatsTable, metricKey: string): RuleStats {
  const base = RULE_PREFIX + sanitize(metricKey) + '.';
  return {
    totalHits: table.handle(base + 'total_hits'),
    overLimit: table.handle(base + 'over_limit'),
    nearLimit: table.handle(base + 'near_limit'),
    withinLimit: table.handle(base + 'within_limit'),
    shadowMode: table.handle(base + 'shadow_mode'),
  };
}
