// RateLimitConfig messages from a management server → the same documents the file loader
// produces, so both sources go through one validator and one compiler. The message's `name`
// stands where a file name would in error messages; the unit enum's name is handed to the
// validator as written, so UNKNOWN on a limited rule fails with `invalid rate limit unit 'UNKNOWN'`.

import { ConfigError } from './errors.js';
import type { YamlDescriptor, YamlDomainConfig, YamlRateLimit } from './parse.js';

/** ratelimit.config.ratelimit.v3.RateLimitUnit numbers (WEEK is 7 on the wire). */
const UNIT_NAMES: Readonly<Record<number, string>> = {
  0: 'UNKNOWN',
  1: 'SECOND',
  2: 'MINUTE',
  3: 'HOUR',
  4: 'DAY',
  5: 'MONTH',
  6: 'YEAR',
  7: 'WEEK',
};

/** The decoded message shape (protobufjs toObject: camelCase, enums as numbers, unset = absent). */
export interface XdsRateLimitConfig {
  name?: string;
  domain?: string;
  descriptors?: XdsDescriptor[];
}

export interface XdsDescriptor {
  key?: string;
  value?: string;
  rateLimit?: XdsPolicy | null;
  descriptors?: XdsDescriptor[];
  shadowMode?: boolean;
  detailedMetric?: boolean;
  quotaMode?: boolean;
}

export interface XdsPolicy {
  unit?: number;
  requestsPerUnit?: number;
  unlimited?: boolean;
  name?: string;
  replaces?: { name?: string }[];
}

export function toDomainConfig(message: XdsRateLimitConfig): YamlDomainConfig {
  const file = message.name ?? '';
  const domain = message.domain ?? '';
  if (domain === '') throw new ConfigError(file, 'config file cannot have empty domain');
  return { file, domain, descriptors: (message.descriptors ?? []).map(toDescriptor) };
}

function toDescriptor(d: XdsDescriptor): YamlDescriptor {
  return {
    key: d.key ?? '',
    value: d.value ?? '',
    rateLimit: d.rateLimit ? toRateLimit(d.rateLimit) : undefined,
    descriptors: (d.descriptors ?? []).map(toDescriptor),
    shadowMode: d.shadowMode ?? false,
    quotaMode: d.quotaMode ?? false,
    detailedMetric: d.detailedMetric ?? false,
    // Not part of the management-server message.
    valueToMetric: false,
    shareThreshold: false,
    line: 0,
  };
}

function toRateLimit(p: XdsPolicy): YamlRateLimit {
  const unit = p.unit ?? 0;
  return {
    unit: UNIT_NAMES[unit] ?? String(unit),
    requestsPerUnit: p.requestsPerUnit ?? 0,
    unlimited: p.unlimited ?? false,
    name: p.name ?? '',
    replaces: (p.replaces ?? []).map((r) => r.name ?? ''),
  };
}
