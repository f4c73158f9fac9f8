// One HTTP exchange with retries, time-outs and error mapping, on Node's global fetch.
import { setTimeout as sleep } from 'node:timers/promises';
import { errorFromResponse, ClientError, ClientTimeoutError } from './errors.js';
import type { ApiErrorEnvelope } from './errors.js';
import type { ResolvedClientOptions } from './options.js';
import { buildQuery } from './query.js';
import type { QueryInput } from './query.js';
import { parseRetryAfter, retryDelayMs, shouldRetryNetworkError, shouldRetryStatus } from './retry.js';

/** Per-call options every client method accepts. */
export interface CallOptions {
  /** Cancels the call (and any retry wait); the promise rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Overrides the client's per-request time-out for this call. */
  timeoutSeconds?: number;
  /** Extra headers for this call. */
  headers?: Record<string, string>;
  /**
   * Sent as `Idempotency-Key`. With it, a POST that failed with a 5xx or a dropped connection
   * is retried like a GET; without it, only 429s and failures to connect are retried.
   */
  idempotencyKey?: string;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path under `/api/v1`, starting with `/`, already encoded. */
  path: string;
  /**
   * An absolute URL that replaces apiRoot + path (an upload URL handed out by the server).
   * `path` then only names the request in error messages.
   */
  absoluteUrl?: string;
  /** A raw body (bytes sent as is, e.g. a storage PUT); its content type goes in `contentType`. */
  raw?: Blob | undefined;
  contentType?: string;
  query?: QueryInput | undefined;
  json?: unknown;
  form?: FormData | undefined;
  /** Headers the operation itself needs (a storage PUT's signed headers). */
  headers?: Readonly<Record<string, string>> | undefined;
  /** False for requests authorised another way (the signed artifact ZIP token). */
  auth?: boolean;
  accept?: string;
  /** The operation is idempotent even though its method is POST (sync, cancel). */
  idempotent?: boolean;
  call?: CallOptions | undefined;
}

export interface StreamResponse {
  body: ReadableStream<Uint8Array>;
  requestId: string | undefined;
  /** Restarts the idle timer; call when bytes arrive. */
  touch: () => void;
  /** Stops the idle timer; call when the stream ends. */
  finish: () => void;
  /** Maps an error thrown while reading the body (time-out, reset) to a client error. */
  mapError: (error: unknown) => unknown;
}

const USER_AGENT = 'sluice-automation-client/0.1 (node)';

function requestIdOf(response: Response, envelope?: ApiErrorEnvelope): string | undefined {
  return (
    response.headers.get('x-request-id') ??
    (typeof envelope?.requestId === 'string' ? envelope.requestId : undefined)
  );
}

function asEnvelope(value: unknown): ApiErrorEnvelope | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as ApiErrorEnvelope)
    : undefined;
}

/** An armed time-out that can be restarted (for streams, where it bounds silence, not duration). */
class Deadline {
  readonly controller = new AbortController();
  private readonly reason = new DOMException('request timed out', 'TimeoutError');
  private timer: NodeJS.Timeout | undefined;
  private readonly unlink: () => void;

  constructor(
    private readonly ms: number,
    signal: AbortSignal | undefined,
  ) {
    const forward = (): void => this.controller.abort(signal?.reason);
    if (signal?.aborted) forward();
    else signal?.addEventListener('abort', forward, { once: true });
    // A caller's long-lived signal would otherwise collect one listener per request.
    this.unlink = () => signal?.removeEventListener('abort', forward);
    this.restart();
  }

  restart(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.controller.abort(this.reason), this.ms);
  }

  clear(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.unlink();
  }

  get timedOut(): boolean {
    return this.controller.signal.aborted && this.controller.signal.reason === this.reason;
  }
}

export class Transport {
  constructor(readonly options: ResolvedClientOptions) {}

  url(path: string, query?: QueryInput): string {
    return `${this.options.apiRoot}${path}${buildQuery(query)}`;
  }

  private headers(spec: RequestSpec): Headers {
    const headers = new Headers({ 'user-agent': USER_AGENT, accept: spec.accept ?? 'application/json' });
    for (const [k, v] of Object.entries(this.options.headers)) headers.set(k, v);
    if (spec.auth !== false && this.options.apiKey !== undefined)
      headers.set('authorization', `Bearer ${this.options.apiKey}`);
    if (spec.json !== undefined) headers.set('content-type', 'application/json');
    if (spec.contentType !== undefined) headers.set('content-type', spec.contentType);
    // fetch computes Content-Length itself and refuses a caller's.
    for (const [k, v] of Object.entries(spec.headers ?? {}))
      if (k.toLowerCase() !== 'content-length') headers.set(k, v);
    if (spec.call?.idempotencyKey !== undefined) headers.set('idempotency-key', spec.call.idempotencyKey);
    for (const [k, v] of Object.entries(spec.call?.headers ?? {})) headers.set(k, v);
    return headers;
  }

  private timeoutMs(spec: RequestSpec): number {
    const seconds = spec.call?.timeoutSeconds;
    if (seconds === undefined) return this.options.timeoutMs;
    if (!Number.isFinite(seconds) || seconds <= 0) {
      throw new ClientError(
        `timeoutSeconds must be a positive number, got ${String(seconds)}`,
        'configuration_error',
      );
    }
    return seconds * 1000;
  }

  /**
   * Sends the request, retrying as retry.ts decides, and hands the successful response to `read`
   * while the time-out still runs (so a body that stalls also times out). `keepAlive` leaves the
   * deadline armed for the caller (streams).
   */
  private async exchange<T>(
    spec: RequestSpec,
    read: (response: Response, deadline: Deadline) => Promise<T> | T,
    keepAlive = false,
  ): Promise<T> {
    const timeoutMs = this.timeoutMs(spec);
    const url = spec.absoluteUrl ?? this.url(spec.path, spec.query);
    const headers = this.headers(spec);
    const body = spec.form ?? spec.raw ?? (spec.json !== undefined ? JSON.stringify(spec.json) : undefined);
    const retryCtx = {
      method: spec.method,
      markedIdempotent: spec.idempotent === true || spec.call?.idempotencyKey !== undefined,
    };
    const signal = spec.call?.signal;
    for (let attempt = 0; ; attempt++) {
      signal?.throwIfAborted();
      const deadline = new Deadline(timeoutMs, signal);
      let delayMs: number | undefined;
      try {
        const response = await fetch(url, {
          method: spec.method,
          headers,
          body: body ?? null,
          signal: deadline.controller.signal,
        });
        if (response.ok) {
          const result = await read(response, deadline);
          if (!keepAlive) deadline.clear();
          return result;
        }
        const text = await response.text();
        deadline.clear();
        let envelope: ApiErrorEnvelope | undefined;
        try {
          envelope = asEnvelope(JSON.parse(text));
        } catch {
          envelope = undefined;
        }
        const retryAfter = parseRetryAfter(response.headers.get('retry-after'));
        const error = errorFromResponse(response.status, envelope, {
          requestId: requestIdOf(response, envelope),
          retryAfter,
          bodyText: text,
        });
        const allowed = attempt < this.options.maxRetries && shouldRetryStatus(response.status, retryCtx);
        // A server asking for a longer pause than we are willing to sleep gets the error back
        // (with retryAfter) rather than an early retry it would refuse again.
        if (!allowed || (retryAfter !== undefined && retryAfter * 1000 > this.options.retryMaxMs))
          throw error;
        delayMs = retryDelayMs(
          attempt,
          { baseMs: this.options.retryBaseMs, maxMs: this.options.retryMaxMs },
          retryAfter,
        );
      } catch (error) {
        deadline.clear();
        if (error instanceof ClientError) throw error;
        if (deadline.timedOut) {
          throw new ClientTimeoutError(`${spec.method} ${spec.path} timed out after ${timeoutMs / 1000} s`, {
            cause: error,
          });
        }
        if (signal?.aborted) throw signal.reason;
        if (attempt >= this.options.maxRetries || !shouldRetryNetworkError(error, retryCtx)) {
          const detail =
            error instanceof Error
              ? error.cause instanceof Error
                ? error.cause.message
                : error.message
              : String(error);
          throw new ClientError(`${spec.method} ${spec.path} failed: ${detail}`, 'connection_error', {
            cause: error,
          });
        }
        delayMs = retryDelayMs(attempt, { baseMs: this.options.retryBaseMs, maxMs: this.options.retryMaxMs });
      }
      await sleep(delayMs, undefined, signal ? { signal } : undefined).catch(() => {
        throw signal?.reason ?? new Error('aborted');
      });
    }
  }

  /** JSON answer (undefined for an empty body). */
  async json<T>(spec: RequestSpec): Promise<T> {
    return this.exchange(spec, async (response) => {
      const text = await response.text();
      const requestId = requestIdOf(response);
      if (text.length === 0) return undefined as T;
      const type = response.headers.get('content-type')?.toLowerCase() ?? '';
      if (type.includes('html')) {
        throw new ClientError(
          `expected JSON from ${spec.method} ${spec.path} but got ${type}; base_url (${this.options.apiRoot}) probably points at something other than the API`,
          'invalid_response',
          { status: response.status, requestId },
        );
      }
      try {
        return JSON.parse(text) as T;
      } catch (error) {
        throw new ClientError(
          `invalid JSON from ${spec.method} ${spec.path}: ${text.slice(0, 120)}`,
          'invalid_response',
          {
            status: response.status,
            requestId,
            cause: error,
          },
        );
      }
    });
  }

  /** An answer whose body is not read (204, storage PUTs). */
  async empty(spec: RequestSpec): Promise<void> {
    await this.exchange(spec, async (response) => {
      await response.body?.cancel();
    });
  }

  /** Raw bytes (downloads, ZIP archives). */
  async bytes(spec: RequestSpec): Promise<Uint8Array> {
    return this.exchange(
      { accept: '*/*', ...spec },
      async (response) => new Uint8Array(await response.arrayBuffer()),
    );
  }

  /** Text (CSV or JSON exports kept verbatim). */
  async text(spec: RequestSpec): Promise<string> {
    return this.exchange({ accept: '*/*', ...spec }, async (response) => response.text());
  }

  /** A streaming body; the time-out applies to the headers and then to each silence between chunks. */
  async stream(spec: RequestSpec): Promise<StreamResponse> {
    return this.exchange(
      spec,
      (response, deadline) => {
        if (!response.body)
          throw new ClientError(`${spec.method} ${spec.path} answered without a body`, 'invalid_response');
        const timeoutMs = this.timeoutMs(spec);
        return {
          body: response.body,
          requestId: requestIdOf(response),
          touch: () => deadline.restart(),
          finish: () => deadline.clear(),
          mapError: (error: unknown) => {
            if (error instanceof ClientError) return error;
            if (deadline.timedOut) {
              return new ClientTimeoutError(
                `${spec.method} ${spec.path}: no data for ${timeoutMs / 1000} s`,
                { cause: error },
              );
            }
            if (spec.call?.signal?.aborted) return spec.call.signal.reason;
            return new ClientError(
              `${spec.method} ${spec.path} stream failed: ${error instanceof Error ? error.message : String(error)}`,
              'connection_error',
              { cause: error },
            );
          },
        };
      },
      true,
    );
  }
}
