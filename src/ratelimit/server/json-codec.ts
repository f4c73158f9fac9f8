// The /json body in the protobuf JSON mapping, both ways. Decoding is strict like the upstream
// (protojson): lowerCamelCase or original field names, enums by name or number, integers as
// numbers or numeric strings, null = absent, unknown fields refused. Encoding follows protojson
// defaults: zero values omitted, enums by name, Duration as "<seconds>s".

import {
  CODE_NAMES,
  UNIT_NAMES,
  Unit,
  type DescriptorEntry,
  type DescriptorStatus,
  type RateLimitRequest,
  type RateLimitResponse,
  type RequestDescriptor,
} from '../types.js';
import { CodedError } from '../../core/errors.js';

export class JsonRequestError extends CodedError {
  constructor(message: string) {
    super('invalid_request', message);
  }
}

type Obj = Record<string, unknown>;

interface Fields {
  get(name: string): unknown;
}

/** The object's fields under canonical names; null values dropped (protojson: null = absent). */
function fields(value: unknown, where: string, allowed: Record<string, string>): Fields {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new JsonRequestError(`${where}: expected a JSON object`);
  }
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  const seen: Record<string, true> = Object.create(null) as Record<string, true>;
  const obj = value as Obj;
  for (const name in obj) {
    const canonical = Object.prototype.hasOwnProperty.call(allowed, name) ? allowed[name] : undefined;
    if (canonical === undefined) throw new JsonRequestError(`${where}: unknown field "${name}"`);
    if (seen[canonical]) throw new JsonRequestError(`${where}: field "${canonical}" given twice`);
    seen[canonical] = true;
    const v = obj[name];
    if (v !== null) out[canonical] = v;
  }
  return { get: (name) => out[name] };
}

function str(value: unknown, where: string): string {
  if (value === undefined) return '';
  if (typeof value !== 'string') throw new JsonRequestError(`${where}: expected a string`);
  return value;
}

function uint(value: unknown, where: string, max: number): number | undefined {
  if (value === undefined) return undefined;
  let n: number;
  if (typeof value === 'number') n = value;
  else if (typeof value === 'string' && /^\d+$/.test(value.trim())) n = Number(value.trim());
  else throw new JsonRequestError(`${where}: expected an unsigned integer`);
  if (!Number.isInteger(n) || n < 0 || n > max)
    throw new JsonRequestError(`${where}: expected an unsigned integer up to ${max}`);
  return n;
}

function list(value: unknown, where: string): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new JsonRequestError(`${where}: expected an array`);
  return value;
}

const REQUEST_FIELDS = {
  domain: 'domain',
  descriptors: 'descriptors',
  hitsAddend: 'hitsAddend',
  hits_addend: 'hitsAddend',
};
const DESCRIPTOR_FIELDS = {
  entries: 'entries',
  limit: 'limit',
  hitsAddend: 'hitsAddend',
  hits_addend: 'hitsAddend',
};
const ENTRY_FIELDS = { key: 'key', value: 'value' };
const LIMIT_FIELDS = {
  requestsPerUnit: 'requestsPerUnit',
  requests_per_unit: 'requestsPerUnit',
  unit: 'unit',
};

/** envoy.type.v3.RateLimitUnit names (the override's enum). */
const OVERRIDE_UNITS: Record<string, number> = {
  UNKNOWN: 0,
  SECOND: 1,
  MINUTE: 2,
  HOUR: 3,
  DAY: 4,
  MONTH: 5,
  YEAR: 6,
  WEEK: 7,
};

function unit(value: unknown, where: string): number {
  if (value === undefined) return Unit.UNKNOWN;
  if (typeof value === 'string') {
    const n = OVERRIDE_UNITS[value];
    if (n === undefined) throw new JsonRequestError(`${where}: unknown unit "${value}"`);
    return n;
  }
  if (typeof value === 'number' && Number.isInteger(value)) return value;
  throw new JsonRequestError(`${where}: expected a unit name or number`);
}

export function decodeRequest(body: unknown): RateLimitRequest {
  const f = fields(body, 'request', REQUEST_FIELDS);
  const descriptors = list(f.get('descriptors'), 'descriptors').map((d, i): RequestDescriptor => {
    const where = `descriptors[${i}]`;
    const df = fields(d, where, DESCRIPTOR_FIELDS);
    const entries = list(df.get('entries'), `${where}.entries`).map((e, j): DescriptorEntry => {
      const ef = fields(e, `${where}.entries[${j}]`, ENTRY_FIELDS);
      return {
        key: str(ef.get('key'), `${where}.entries[${j}].key`),
        value: str(ef.get('value'), `${where}.entries[${j}].value`),
      };
    });
    const out: RequestDescriptor = { entries };
    const limit = df.get('limit');
    if (limit !== undefined) {
      const lf = fields(limit, `${where}.limit`, LIMIT_FIELDS);
      out.limit = {
        requestsPerUnit: uint(lf.get('requestsPerUnit'), `${where}.limit.requestsPerUnit`, 0xffffffff) ?? 0,
        unit: unit(lf.get('unit'), `${where}.limit.unit`),
      };
    }
    // UInt64Value maps to a bare number or string in JSON; present means "use it", even 0.
    const hits = uint(df.get('hitsAddend'), `${where}.hitsAddend`, Number.MAX_SAFE_INTEGER);
    if (hits !== undefined) out.hitsAddend = hits;
    return out;
  });
  const request: RateLimitRequest = { domain: str(f.get('domain'), 'domain'), descriptors };
  const hits = uint(f.get('hitsAddend'), 'hitsAddend', 0xffffffff);
  if (hits !== undefined) request.hitsAddend = hits;
  return request;
}

function encodeStatus(s: DescriptorStatus): Obj {
  const out: Obj = { code: CODE_NAMES[s.code] };
  if (s.currentLimit) {
    const limit: Obj = {};
    if (s.currentLimit.requestsPerUnit !== 0) limit.requestsPerUnit = s.currentLimit.requestsPerUnit;
    if (s.currentLimit.unit !== Unit.UNKNOWN) limit.unit = UNIT_NAMES[s.currentLimit.unit];
    if (s.currentLimit.name !== '') limit.name = s.currentLimit.name;
    out.currentLimit = limit;
  }
  if (s.limitRemaining !== 0) out.limitRemaining = s.limitRemaining;
  if (s.durationUntilReset !== undefined) out.durationUntilReset = `${s.durationUntilReset}s`;
  return out;
}

export function encodeResponse(r: RateLimitResponse): string {
  const out: Obj = { overallCode: CODE_NAMES[r.overallCode] };
  if (r.statuses.length > 0) out.statuses = r.statuses.map(encodeStatus);
  if (r.responseHeadersToAdd.length > 0) out.responseHeadersToAdd = r.responseHeadersToAdd;
  return JSON.stringify(out);
}
