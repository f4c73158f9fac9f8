// Query strings: callers may name parameters in camelCase or snake_case; the wire form is the
// product SDK's: camelCase (`batchId`, `exampleIds`, `rollingWindow`), except the few names the
// SDK itself sends in snake_case (`wait_for_completion`).
import { ClientError } from './errors.js';

export type QueryValue = string | number | boolean | Date | readonly (string | number)[] | null | undefined;
export type QueryInput = Readonly<Record<string, QueryValue>>;

/** `batchId` → `batch_id`; names already in snake_case are unchanged. */
export function snakeCase(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** `batch_id` → `batchId`; names already in camelCase are unchanged. */
export function camelCase(name: string): string {
  return name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

// Query names the SDK sends in snake_case (the run start and rerun hold).
const SNAKE_ON_THE_WIRE = new Set(['wait_for_completion']);

/** The spelling the SDK puts on the wire for a query name given in either case. */
export function wireName(name: string): string {
  const snake = snakeCase(name);
  return SNAKE_ON_THE_WIRE.has(snake) ? snake : camelCase(name);
}

function encodeValue(value: Exclude<QueryValue, null | undefined>): string {
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(String).join(',');
  return String(value);
}

/** Builds `?a=1&b=x` (or '' when empty); undefined and null values are left out. */
export function buildQuery(query: QueryInput | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null) continue;
    const encoded = encodeValue(value);
    // An empty list means "no filter", not "match the empty string".
    if (Array.isArray(value) && value.length === 0) continue;
    params.set(wireName(key), encoded);
  }
  const text = params.toString();
  return text.length > 0 ? `?${text}` : '';
}

// `.` and `..` segments (even percent-encoded) are folded away by URL parsing before a request
// leaves the process, so the request would reach a different resource; refuse them instead.
function encodePart(part: string, whole: string): string {
  if (part === '.' || part === '..') {
    throw new ClientError(
      `path ${JSON.stringify(whole)} must not contain '.' or '..' segments`,
      'invalid_argument',
    );
  }
  return encodeURIComponent(part);
}

/** Encodes one path parameter (an id, alias or file name). */
export function segment(value: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ClientError('path parameter must be a non-empty string', 'invalid_argument');
  return encodePart(value, value);
}

/** Encodes a slash-delimited file path, keeping its slashes as separators. */
export function slashPath(value: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new ClientError('file path must be a non-empty string', 'invalid_argument');
  const parts = value.split('/').filter((part) => part.length > 0);
  if (parts.length === 0)
    throw new ClientError(`file path ${JSON.stringify(value)} names no file`, 'invalid_argument');
  return parts.map((part) => encodePart(part, value)).join('/');
}
