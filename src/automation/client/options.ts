// Resolution of the client's options: constructor value first, then the environment, then the
// default. Both the spec's snake_case names and camelCase names are accepted.
import { ClientError } from './errors.js';

/** Options of `new ServiceClient(...)`. Each setting may be spelt snake_case or camelCase. */
export interface ServiceClientOptions {
  /** Bearer API key; default from `SERVICE_API_KEY`. */
  api_key?: string;
  apiKey?: string;
  /** Server root (the client adds `/api/v1`); default from `SERVICE_BASE_URL`, else http://localhost:8083. */
  base_url?: string;
  baseUrl?: string;
  /** Per-request time-out in seconds (float); default 60.0. */
  timeout_seconds?: number;
  timeoutSeconds?: number;
  /** Retries after the first attempt on 429, 5xx and network errors; default 2. */
  max_retries?: number;
  maxRetries?: number;
  /** First backoff step in seconds (doubled per attempt, with jitter); default 0.5. */
  retry_base_seconds?: number;
  retryBaseSeconds?: number;
  /** Ceiling of one backoff wait, including a server's Retry-After; default 30. */
  retry_max_seconds?: number;
  retryMaxSeconds?: number;
  /**
   * Largest multipart run start, in bytes; run files that would push the body past it are
   * uploaded first (files.upload) and referenced as `{ "$fileId": ... }`. `null` keeps every file
   * in the multipart body. Default from `SERVICE_MULTIPART_MAX_BYTES` (`none` means null), else
   * 4.5 MiB, as the product SDK.
   */
  multipart_max_bytes?: number | null;
  multipartMaxBytes?: number | null;
  /** Headers added to every request. */
  headers?: Record<string, string>;
  /** Environment to read defaults from; default `process.env`. */
  env?: Readonly<Record<string, string | undefined>>;
}

export interface ResolvedClientOptions {
  apiKey: string | undefined;
  /** Ends with `/api/v1`, no trailing slash. */
  apiRoot: string;
  timeoutMs: number;
  maxRetries: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** null: no limit, every run file rides in the multipart body. */
  multipartMaxBytes: number | null;
  headers: Record<string, string>;
}

export const DEFAULT_BASE_URL = 'http://localhost:8083';
export const DEFAULT_TIMEOUT_SECONDS = 60.0;
export const DEFAULT_MAX_RETRIES = 2;
/** The product SDK's default: a common serverless request-body ceiling. */
export const DEFAULT_MULTIPART_MAX_BYTES = Math.floor(4.5 * 1024 * 1024);

function pick<T>(a: T | undefined, b: T | undefined): T | undefined {
  return a !== undefined ? a : b;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value !== undefined && value.trim().length > 0 ? value.trim() : undefined;
}

function seconds(name: string, value: number | undefined, def: number, allowZero: boolean): number {
  if (value === undefined) return def;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (!allowZero && value === 0)) {
    throw new ClientError(
      `${name} must be a ${allowZero ? 'non-negative' : 'positive'} number of seconds, got ${String(value)}`,
      'configuration_error',
    );
  }
  return value;
}

function multipartLimit(
  value: number | null | undefined,
  env: Readonly<Record<string, string | undefined>>,
): number | null {
  if (value === null) return null;
  if (value !== undefined) {
    if (!Number.isSafeInteger(value) || value < 0)
      throw new ClientError(
        `multipart_max_bytes must be a non-negative integer or null, got ${String(value)}`,
        'configuration_error',
      );
    return value;
  }
  const raw = nonEmpty(env['SERVICE_MULTIPART_MAX_BYTES'])?.toLowerCase();
  if (raw === undefined) return DEFAULT_MULTIPART_MAX_BYTES;
  if (raw === 'none' || raw === 'null' || raw === 'unlimited') return null;
  const parsed = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(parsed))
    throw new ClientError(
      `SERVICE_MULTIPART_MAX_BYTES must be a non-negative integer or none, got ${JSON.stringify(raw)}`,
      'configuration_error',
    );
  return parsed;
}

/** Accepts a server root, or a URL that already ends in `/api/v1`. */
export function apiRootFrom(baseUrl: string): string {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ClientError(
      `base_url is not an absolute URL: ${JSON.stringify(baseUrl)}`,
      'configuration_error',
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ClientError(`base_url must be http or https, got ${url.protocol}`, 'configuration_error');
  }
  let path = url.pathname.replace(/\/+$/, '');
  if (!path.endsWith('/api/v1')) path += '/api/v1';
  return `${url.origin}${path}`;
}

export function resolveClientOptions(options: ServiceClientOptions = {}): ResolvedClientOptions {
  const env = options.env ?? process.env;
  const apiKey = nonEmpty(pick(options.api_key, options.apiKey)) ?? nonEmpty(env['SERVICE_API_KEY']);
  const baseUrl =
    nonEmpty(pick(options.base_url, options.baseUrl)) ??
    nonEmpty(env['SERVICE_BASE_URL']) ??
    DEFAULT_BASE_URL;
  const timeout = seconds(
    'timeout_seconds',
    pick(options.timeout_seconds, options.timeoutSeconds),
    DEFAULT_TIMEOUT_SECONDS,
    false,
  );
  const retries = pick(options.max_retries, options.maxRetries) ?? DEFAULT_MAX_RETRIES;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new ClientError(
      `max_retries must be a non-negative integer, got ${String(retries)}`,
      'configuration_error',
    );
  }
  const base = seconds(
    'retry_base_seconds',
    pick(options.retry_base_seconds, options.retryBaseSeconds),
    0.5,
    true,
  );
  const max = seconds(
    'retry_max_seconds',
    pick(options.retry_max_seconds, options.retryMaxSeconds),
    30,
    true,
  );
  return {
    apiKey,
    apiRoot: apiRootFrom(baseUrl),
    timeoutMs: timeout * 1000,
    maxRetries: retries,
    retryBaseMs: base * 1000,
    retryMaxMs: max * 1000,
    multipartMaxBytes: multipartLimit(
      options.multipart_max_bytes !== undefined ? options.multipart_max_bytes : options.multipartMaxBytes,
      env,
    ),
    headers: { ...(options.headers ?? {}) },
  };
}
