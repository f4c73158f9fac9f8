// When to retry and how long to wait. Pure functions, so the policy is testable without a clock.

/** Methods whose repetition cannot change the outcome (RFC 9110 §9.2.2). */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

// Failures that happen before the server could have read the request: safe to repeat for any method.
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

export interface RetryContext {
  method: string;
  /** The request carried an Idempotency-Key, or the operation is idempotent by definition (sync, cancel). */
  markedIdempotent: boolean;
}

function isIdempotent(ctx: RetryContext): boolean {
  return ctx.markedIdempotent || IDEMPOTENT.has(ctx.method.toUpperCase());
}

/**
 * 429 is always retried: the server refused the request without acting on it. A 5xx after a
 * POST or PATCH may have been applied (a run may have started), so it is repeated only when the
 * operation is marked idempotent.
 */
export function shouldRetryStatus(status: number, ctx: RetryContext): boolean {
  if (status === 429) return true;
  if (status >= 500 && status <= 599) return isIdempotent(ctx);
  return false;
}

/** The network error code buried in fetch's `TypeError('fetch failed')`, if any. */
export function networkErrorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && typeof current === 'object' && current !== null; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function shouldRetryNetworkError(error: unknown, ctx: RetryContext): boolean {
  if (isIdempotent(ctx)) return true;
  const code = networkErrorCode(error);
  return code !== undefined && CONNECT_CODES.has(code);
}

/** Retry-After as seconds: delta-seconds or an HTTP date (RFC 9110 §10.2.3). */
export function parseRetryAfter(value: string | null, nowMs: number = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (text.length === 0) return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  // An HTTP date always names a weekday and month; this keeps V8's lenient Date.parse from
  // reading numbers such as "-3" as a year.
  if (!/[a-z]{3}/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, (at - nowMs) / 1000);
}

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

/**
 * Exponential backoff with "equal jitter": half the step is fixed, half random, so clients that
 * failed together spread out but none retries immediately. A server's Retry-After wins over the
 * computed step, capped at maxMs.
 */
export function retryDelayMs(
  attempt: number,
  policy: BackoffPolicy,
  retryAfterSeconds?: number,
  random: () => number = Math.random,
): number {
  if (retryAfterSeconds !== undefined) return Math.min(policy.maxMs, retryAfterSeconds * 1000);
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** attempt);
  return step / 2 + random() * (step / 2);
}
