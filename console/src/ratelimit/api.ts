// The rate limit service's console views (docs/ratelimit.md, "Console views"), typed.

import { api } from '../api.js';
import { serviceUrl } from '../services.js';

export interface RuleView {
  source: 'config' | 'request';
  metricKey: string;
  name: string;
  requestsPerUnit: number | null;
  unit: string | null;
  unlimited: boolean;
  shadowMode: boolean;
  quotaMode: boolean;
  replaces: string[];
}

export interface DescriptorView {
  key: string;
  value: string;
  rule: RuleView | null;
  shareThreshold: boolean;
  valueToMetric: boolean;
  descriptors: DescriptorView[];
}

export interface ConfigView {
  loaded: boolean;
  loadedAt?: string;
  files: string[];
  domains: { domain: string; descriptors: DescriptorView[] }[];
}

export interface RuleCounters {
  key: string;
  total_hits: number;
  over_limit: number;
  near_limit: number;
  within_limit: number;
  shadow_mode: number;
  /** A configured rule (listed with zeros before its first hit). */
  configured?: boolean;
  /** Increases per `historyStepMs`, oldest first (the service's own ring). */
  history?: Record<'total_hits' | 'over_limit' | 'near_limit', number[]>;
}

export interface StatsAnswer {
  at: string;
  historyStepMs?: number;
  historyPoints?: number;
  rules: RuleCounters[];
}

export interface DryRunStatus {
  code: 'OK' | 'OVER_LIMIT' | 'UNKNOWN';
  currentLimit?: { requestsPerUnit?: number; unit?: string; name?: string };
  limitRemaining?: number;
  durationUntilReset?: string;
  matchedRule: RuleView | null;
  hitsInWindow: number | null;
}

export interface DryRunAnswer {
  dryRun: true;
  overallCode: 'OK' | 'OVER_LIMIT' | 'UNKNOWN';
  statuses?: DryRunStatus[];
}

export interface DryRunRequest {
  domain: string;
  descriptors: { entries: { key: string; value: string }[] }[];
  hitsAddend?: number;
}

export const loadConfig = (signal?: AbortSignal) =>
  api<ConfigView>(serviceUrl('ratelimit', '/json/config'), signal ? { signal } : {});

export const loadStats = (signal?: AbortSignal) =>
  api<StatsAnswer>(serviceUrl('ratelimit', '/json/stats'), signal ? { signal } : {});

export const dryRun = (body: DryRunRequest) =>
  api<DryRunAnswer>(serviceUrl('ratelimit', '/json/dry-run'), { method: 'POST', body });
