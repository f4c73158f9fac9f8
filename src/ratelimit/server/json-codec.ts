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

function object(value: unknown, where: string): Obj {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new JsonRequestError(`${where}: expected a JSON object`);
  return value as Obj;
}

function unknownField(where: string, name: string): never {
  throw new JsonRequestError(`${where}: unknown field "${name}"`);
}

/** Marks a canonical field as seen (a bit in `seen`); the same field under both names is refused. */
function once(seen: number, bit: number, where: string, canonical: string): number {
  if (seen & bit) throw new JsonRequestError(`${where}: field "${canonical}" given twice`);
  return seen | bit;
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

/** envoy.type.v3.RateLimitUnit names (the override's enum); no prototype, so `toString` is no unit. */
const OVERRIDE_UNITS: Record<string, number> = Object.assign(Object.create(null) as Record<string, number>, {
  UNKNOWN: 0,
  SECOND: 1,
  MINUTE: 2,
  HOUR: 3,
  DAY: 4,
  MONTH: 5,
  YEAR: 6,
  WEEK: 7,
});

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

// The decoder walks JSON.parse's output directly: one pass over each object's own names (unknown
// and doubled names are refused before any value is looked at, in the order the names came),
// then the values in a fixed order, so the first error reported for a body never depends on
// anything but the body.

export function decodeRequest(body: unknown): RateLimitRequest {
  const obj = object(body, 'request');
  let domainValue: unknown;
  let descriptorsValue: unknown;
  let hitsValue: unknown;
  let seen = 0;
  for (const name in obj) {
    const v = obj[name];
    switch (name) {
      case 'domain':
        seen = once(seen, 1, 'request', 'domain');
        if (v !== null) domainValue = v;
        break;
      case 'descriptors':
        seen = once(seen, 2, 'request', 'descriptors');
        if (v !== null) descriptorsValue = v;
        break;
      case 'hitsAddend':
      case 'hits_addend':
        seen = once(seen, 4, 'request', 'hitsAddend');
        if (v !== null) hitsValue = v;
        break;
      default:
        unknownField('request', name);
    }
  }
  const items = list(descriptorsValue, 'descriptors');
  const descriptors: RequestDescriptor[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) descriptors[i] = decodeDescriptor(items[i], i);
  const request: RateLimitRequest = { domain: str(domainValue, 'domain'), descriptors };
  const hits = uint(hitsValue, 'hitsAddend', 0xffffffff);
  if (hits !== undefined) request.hitsAddend = hits;
  return request;
}

function decodeDescriptor(value: unknown, i: number): RequestDescriptor {
  const where = `descriptors[${i}]`;
  const obj = object(value, where);
  let entriesValue: unknown;
  let limitValue: unknown;
  let hitsValue: unknown;
  let seen = 0;
  for (const name in obj) {
    const v = obj[name];
    switch (name) {
      case 'entries':
        seen = once(seen, 1, where, 'entries');
        if (v !== null) entriesValue = v;
        break;
      case 'limit':
        seen = once(seen, 2, where, 'limit');
        if (v !== null) limitValue = v;
        break;
      case 'hitsAddend':
      case 'hits_addend':
        seen = once(seen, 4, where, 'hitsAddend');
        if (v !== null) hitsValue = v;
        break;
      default:
        unknownField(where, name);
    }
  }
  const items = list(entriesValue, `${where}.entries`);
  const entries: DescriptorEntry[] = new Array(items.length);
  for (let j = 0; j < items.length; j++) entries[j] = decodeEntry(items[j], `${where}.entries[${j}]`);
  const out: RequestDescriptor = { entries };
  if (limitValue !== undefined) out.limit = decodeLimit(limitValue, `${where}.limit`);
  // UInt64Value maps to a bare number or string in JSON; present means "use it", even 0.
  const hits = uint(hitsValue, `${where}.hitsAddend`, Number.MAX_SAFE_INTEGER);
  if (hits !== undefined) out.hitsAddend = hits;
  return out;
}

function decodeEntry(value: unknown, where: string): DescriptorEntry {
  const obj = object(value, where);
  let key: unknown;
  let val: unknown;
  let seen = 0;
  for (const name in obj) {
    const v = obj[name];
    if (name === 'key') {
      seen = once(seen, 1, where, 'key');
      if (v !== null) key = v;
    } else if (name === 'value') {
      seen = once(seen, 2, where, 'value');
      if (v !== null) val = v;
    } else {
      unknownField(where, name);
    }
  }
  // Fast path: both strings (the common case) skip the checks' calls.
  if (typeof key === 'string' && typeof val === 'string') return { key, value: val };
  return { key: str(key, `${where}.key`), value: str(val, `${where}.value`) };
}

function decodeLimit(value: unknown, where: string): { requestsPerUnit: number; unit: number } {
  const obj = object(value, where);
  let rpu: unknown;
  let unitValue: unknown;
  let seen = 0;
  for (const name in obj) {
    const v = obj[name];
    if (name === 'requestsPerUnit' || name === 'requests_per_unit') {
      seen = once(seen, 1, where, 'requestsPerUnit');
      if (v !== null) rpu = v;
    } else if (name === 'unit') {
      seen = once(seen, 2, where, 'unit');
      if (v !== null) unitValue = v;
    } else {
      unknownField(where, name);
    }
  }
  return {
    requestsPerUnit: uint(rpu, `${where}.requestsPerUnit`, 0xffffffff) ?? 0,
    unit: unit(unitValue, `${where}.unit`),
  };
}

// The encoder writes the text directly (no object graph for JSON.stringify to walk): names and
// header texts go through JSON.stringify for escaping, numbers are integers.

const CODE_JSON = CODE_NAMES.map((name) => `"${name}"`);

function encodeStatus(s: DescriptorStatus): string {
  let out = '{"code":' + CODE_JSON[s.code];
  const limit = s.currentLimit;
  if (limit) {
    let fields = '';
    if (limit.requestsPerUnit !== 0) fields = '"requestsPerUnit":' + limit.requestsPerUnit;
    if (limit.unit !== Unit.UNKNOWN)
      fields += (fields ? ',"unit":"' : '"unit":"') + UNIT_NAMES[limit.unit] + '"';
    if (limit.name !== '') fields += (fields ? ',"name":' : '"name":') + JSON.stringify(limit.name);
    out += ',"currentLimit":{' + fields + '}';
  }
  if (s.limitRemaining !== 0) out += ',"limitRemaining":' + s.limitRemaining;
  if (s.durationUntilReset !== undefined) out += ',"durationUntilReset":"' + s.durationUntilReset + 's"';
  return out + '}';
}

export function encodeResponse(r: RateLimitResponse): string {
  let out = '{"overallCode":' + CODE_JSON[r.overallCode];
  const statuses = r.statuses;
  if (statuses.length > 0) {
    out += ',"statuses":[' + encodeStatus(statuses[0]!);
    for (let i = 1; i < statuses.length; i++) out += ',' + encodeStatus(statuses[i]!);
    out += ']';
  }
  const headers = r.responseHeadersToAdd;
  if (headers.length > 0) {
    out += ',"responseHeadersToAdd":[';
    for (let i = 0; i < headers.length; i++) {
      const h = headers[i]!;
      out +=
        (i > 0 ? ',{"key":' : '{"key":') +
        JSON.stringify(h.key) +
        ',"value":' +
        JSON.stringify(h.value) +
        '}';
    }
    out += ']';
  }
  return out + '}';
}
