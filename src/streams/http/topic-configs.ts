// Topic configs on the wire: Kafka's names (`retention.ms`, `retention.bytes`) in either
// Confluent v3's list form `[{"name": "retention.ms", "value": "60000"}]` or a plain map
// `{"retention.ms": 60000}`. Values are integers (JSON numbers or decimal strings, as v3 sends
// strings); -1 means unlimited, as in Kafka. A bad value or an unknown name is 400 / 40002
// (Confluent's number for a topic request Kafka refuses, e.g. an invalid config).

import { ErrorCodes, StreamsError } from '../errors.js';
import type { TopicConfigs } from '../log/types.js';

/** Kafka's config name → our field. */
const NAMES = { 'retention.ms': 'retentionMs', 'retention.bytes': 'retentionBytes' } as const;
type ConfigName = keyof typeof NAMES;
export const CONFIG_NAMES = Object.keys(NAMES) as ConfigName[];

/** Changes asked for: a value, or null to go back to the service's default (Kafka's DELETE op). */
export type ConfigChanges = Partial<Record<keyof TopicConfigs, number | null>>;

const bad = (message: string): StreamsError => new StreamsError(400, ErrorCodes.topicInvalid, message);

/** Reads a `configs` field (list or map). `allowNull`: a null value resets the config (PATCH). */
export function parseConfigs(raw: unknown, allowNull: boolean): ConfigChanges {
  const entries: Array<[string, unknown]> = [];
  if (Array.isArray(raw)) {
    raw.forEach((item, i) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item))
        throw bad(`configs[${i}] must be an object like {"name":"retention.ms","value":"60000"}`);
      const { name, value, ...rest } = item as Record<string, unknown>;
      const extra = Object.keys(rest);
      if (extra.length > 0)
        throw bad(`configs[${i}] has an unknown field '${extra[0]}'; accepted: name, value`);
      if (typeof name !== 'string') throw bad(`configs[${i}].name must be a string`);
      entries.push([name, value]);
    });
  } else if (typeof raw === 'object' && raw !== null) {
    entries.push(...Object.entries(raw));
  } else {
    throw bad(
      'configs must be a list like [{"name":"retention.ms","value":"60000"}] or an object like {"retention.ms":60000}',
    );
  }
  const out: ConfigChanges = {};
  for (const [name, value] of entries) {
    if (!(name in NAMES)) {
      throw bad(`unknown topic config '${name}'; supported: ${CONFIG_NAMES.join(', ')}`);
    }
    const field = NAMES[name as ConfigName];
    if (field in out) throw bad(`topic config '${name}' is given twice`);
    out[field] = configValue(name, value, allowNull);
  }
  return out;
}

function configValue(name: string, value: unknown, allowNull: boolean): number | null {
  if (value === null || value === undefined) {
    if (allowNull) return null;
    throw bad(`topic config '${name}' needs a value`);
  }
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && /^-?\d{1,16}$/.test(value)
        ? Number(value)
        : NaN;
  if (!Number.isSafeInteger(n) || (n < 1 && n !== -1)) {
    throw bad(
      `topic config '${name}' must be a positive integer or -1 (unlimited), got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

/** The configs after applying `changes` to `base`; a null change takes the default. */
export function applyConfigs(
  base: TopicConfigs,
  changes: ConfigChanges,
  defaults: TopicConfigs,
): TopicConfigs {
  const pick = (field: keyof TopicConfigs): number => {
    const change = changes[field];
    return change === undefined ? base[field] : change === null ? defaults[field] : change;
  };
  return { retentionMs: pick('retentionMs'), retentionBytes: pick('retentionBytes') };
}

/** Confluent v3's shape of a topic's configs, for the describe answers. */
export function renderConfigs(configs: TopicConfigs): Array<{ name: string; value: string }> {
  return [
    { name: 'retention.ms', value: String(configs.retentionMs) },
    { name: 'retention.bytes', value: String(configs.retentionBytes) },
  ];
}

/** Confluent v2's shape (`GET /topics/{t}`): a map of config name → value text. */
export function configMap(configs: TopicConfigs): Record<string, string> {
  return Object.fromEntries(renderConfigs(configs).map((c) => [c.name, c.value]));
}
