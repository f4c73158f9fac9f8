// Statsd name → Prometheus name and labels, with the statsd exporter's mapping-file format
// (the format PULLMETRICS_MAPPER_YAML files are written in) and the upstream service's
// built-in mapping. Supported mapping keys: match, match_type (glob|regex), name, labels, help,
// action (map|drop), match_metric_type (counter|gauge|observer), observer_type/timer_type
// (histogram|summary), scale; `defaults` may set match_type and observer_type/timer_type.
// Keys outside this set are refused, so a mapping that relies on them fails at start instead
// of silently exporting something else.

import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { CodedError } from '../../../core/errors.js';

export type MetricKind = 'counter' | 'observer';
export type ObserverType = 'histogram' | 'summary';

export interface MappingRule {
  readonly regex: RegExp;
  readonly name: string;
  readonly labels: readonly (readonly [string, string])[];
  readonly help: string | undefined;
  readonly drop: boolean;
  readonly metricType: 'counter' | 'gauge' | 'observer' | undefined;
  readonly observerType: ObserverType;
  readonly scale: number | undefined;
}

export interface Mapped {
  name: string;
  labels: Record<string, string>;
  help: string | undefined;
  observerType: ObserverType;
  scale: number | undefined;
}

const RULE_STATS = ['near_limit', 'over_limit', 'total_hits', 'within_limit', 'shadow_mode'];

/** The built-in mapping; responseTimeAsMilliseconds drops the 0.001 scale, keeping the name. */
export function builtinMapping(responseTimeAsMilliseconds: boolean): MappingRule[] {
  const rules: MappingRule[] = [];
  const base = {
    help: undefined,
    drop: false,
    metricType: undefined,
    observerType: 'histogram' as const,
    scale: undefined,
  };
  for (const stat of RULE_STATS) {
    rules.push({
      ...base,
      regex: globToRegex(`ratelimit.service.rate_limit.*.*.${stat}`),
      name: `ratelimit_service_rate_limit_${stat}`,
      labels: [
        ['domain', '$1'],
        ['key1', '$2'],
      ],
    });
  }
  for (const stat of RULE_STATS) {
    rules.push({
      ...base,
      regex: new RegExp(`^ratelimit\\.service\\.rate_limit\\.([^.]*)\\.([^.]*)\\.([^.]*)(\\..*)?\\.${stat}$`),
      name: `ratelimit_service_rate_limit_${stat}`,
      labels: [
        ['domain', '$1'],
        ['key1', '$2'],
        ['key2', '$3'],
      ],
    });
  }
  rules.push({
    ...base,
    regex: globToRegex('ratelimit.service.call.should_rate_limit.*'),
    name: 'ratelimit_service_should_rate_limit_error',
    labels: [['err_type', '$1']],
  });
  rules.push({
    ...base,
    regex: globToRegex('ratelimit_server.*.total_requests'),
    name: 'ratelimit_service_total_requests',
    labels: [['grpc_method', '$1']],
  });
  rules.push({
    ...base,
    regex: globToRegex('ratelimit_server.*.response_time'),
    name: 'ratelimit_service_response_time_seconds',
    labels: [['grpc_method', '$1']],
    scale: responseTimeAsMilliseconds ? undefined : 0.001,
  });
  rules.push({
    ...base,
    regex: globToRegex('ratelimit.service.config_load_success'),
    name: 'ratelimit_service_config_load_success',
    labels: [],
  });
  rules.push({
    ...base,
    regex: globToRegex('ratelimit.service.config_load_error'),
    name: 'ratelimit_service_config_load_error',
    labels: [],
  });
  return rules;
}

/** Glob of the statsd exporter: `*` stands for one dot-free run of characters. */
export function globToRegex(glob: string): RegExp {
  const body = glob
    .split('*')
    .map((part) => part.replace(/[\\^$+?.()|[\]{}]/g, '\\$&'))
    .join('([^.]*)');
  return new RegExp(`^${body}$`);
}

const RULE_KEYS = new Set([
  'match',
  'match_type',
  'name',
  'labels',
  'help',
  'action',
  'match_metric_type',
  'observer_type',
  'timer_type',
  'scale',
]);
const DEFAULT_KEYS = new Set(['match_type', 'observer_type', 'timer_type']);

export class MappingError extends CodedError {
  constructor(message: string) {
    super('invalid_mapping', message);
  }
}

export function loadMappingFile(path: string): MappingRule[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new MappingError(`cannot read metrics mapping ${path}: ${(err as Error).message}`);
  }
  return parseMapping(text, path);
}

export function parseMapping(text: string, source = 'mapping'): MappingRule[] {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new MappingError(`${source}: invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (!isRecord(doc)) throw new MappingError(`${source}: expected a map with a mappings list`);
  for (const key of Object.keys(doc))
    if (key !== 'mappings' && key !== 'defaults')
      throw new MappingError(`${source}: unsupported key '${key}'`);
  const defaults = doc['defaults'] === undefined || doc['defaults'] === null ? {} : doc['defaults'];
  if (!isRecord(defaults)) throw new MappingError(`${source}: defaults must be a map`);
  for (const key of Object.keys(defaults))
    if (!DEFAULT_KEYS.has(key)) throw new MappingError(`${source}: unsupported defaults key '${key}'`);
  const defaultMatchType = matchTypeOf(defaults['match_type'] ?? 'glob', `${source}: defaults.match_type`);
  const defaultObserver = observerTypeOf(
    defaults['observer_type'] ?? defaults['timer_type'] ?? 'histogram',
    `${source}: defaults.observer_type`,
  );
  const list = doc['mappings'] ?? [];
  if (!Array.isArray(list)) throw new MappingError(`${source}: mappings must be a list`);
  return list.map((item, i) => {
    const where = `${source}: mappings[${i}]`;
    if (!isRecord(item)) throw new MappingError(`${where}: expected a map`);
    for (const key of Object.keys(item))
      if (!RULE_KEYS.has(key)) throw new MappingError(`${where}: unsupported key '${key}'`);
    const match = item['match'];
    if (typeof match !== 'string' || match === '') throw new MappingError(`${where}: match is required`);
    const matchType = matchTypeOf(item['match_type'] ?? defaultMatchType, `${where}.match_type`);
    let regex: RegExp;
    try {
      regex = matchType === 'glob' ? globToRegex(match) : new RegExp(match);
    } catch (err) {
      throw new MappingError(`${where}: invalid regex: ${(err as Error).message}`);
    }
    const action = item['action'] ?? 'map';
    if (action !== 'map' && action !== 'drop') throw new MappingError(`${where}: action must be map or drop`);
    const name = item['name'];
    if (action === 'map' && (typeof name !== 'string' || name === ''))
      throw new MappingError(`${where}: name is required`);
    const labelsIn = item['labels'] ?? {};
    if (!isRecord(labelsIn)) throw new MappingError(`${where}: labels must be a map`);
    const labels: [string, string][] = [];
    for (const [key, value] of Object.entries(labelsIn)) {
      if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(key))
        throw new MappingError(`${where}: invalid label name '${key}'`);
      labels.push([key, String(value)]);
    }
    const metricType = item['match_metric_type'];
    if (
      metricType !== undefined &&
      metricType !== 'counter' &&
      metricType !== 'gauge' &&
      metricType !== 'observer'
    ) {
      throw new MappingError(`${where}: match_metric_type must be counter, gauge or observer`);
    }
    const scale = item['scale'];
    if (scale !== undefined && (typeof scale !== 'number' || !Number.isFinite(scale)))
      throw new MappingError(`${where}: scale must be a number`);
    const help = item['help'];
    return {
      regex,
      name: typeof name === 'string' ? name : '',
      labels,
      help: typeof help === 'string' ? help : undefined,
      drop: action === 'drop',
      metricType,
      observerType: observerTypeOf(
        item['observer_type'] ?? item['timer_type'] ?? defaultObserver,
        `${where}.observer_type`,
      ),
      scale,
    };
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function matchTypeOf(value: unknown, where: string): 'glob' | 'regex' {
  if (value === 'glob' || value === 'regex') return value;
  throw new MappingError(`${where} must be glob or regex`);
}

function observerTypeOf(value: unknown, where: string): ObserverType {
  if (value === 'histogram' || value === 'summary') return value;
  throw new MappingError(`${where} must be histogram or summary`);
}

function expand(template: string, groups: RegExpExecArray): string {
  return template.replace(
    /\$\{(\d+)\}|\$(\d+)/g,
    (_whole, braced: string | undefined, bare: string | undefined) => groups[Number(braced ?? bare)] ?? '',
  );
}

/** What the statsd exporter does with a name no rule maps. */
export function escapeMetricName(name: string): string {
  const out = name.replace(/[^a-zA-Z0-9_]/g, '_');
  return /^[0-9]/.test(out) ? '_' + out : out;
}

/** The first matching rule wins; null means the sample is dropped. */
export function mapName(rules: readonly MappingRule[], name: string, kind: MetricKind): Mapped | null {
  for (const rule of rules) {
    if (rule.metricType !== undefined && rule.metricType !== kind) continue;
    const groups = rule.regex.exec(name);
    if (!groups) continue;
    if (rule.drop) return null;
    const labels: Record<string, string> = {};
    for (const [key, value] of rule.labels) labels[key] = expand(value, groups);
    return {
      name: escapeMetricName(expand(rule.name, groups)),
      labels,
      help: rule.help,
      observerType: rule.observerType,
      scale: rule.scale,
    };
  }
  return {
    name: escapeMetricName(name),
    labels: {},
    help: undefined,
    observerType: 'histogram',
    scale: undefined,
  };
}
