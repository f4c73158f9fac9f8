// Error classes of the client. Every class carries a stable `code` and a `Symbol.for` brand, so a
// caller holding two copies of the library (or an error that crossed a worker boundary as a plain
// object) can still classify it without `instanceof`.

import { CodedError } from '../../core/errors.js';
/** One problem reported by the server in an error envelope. */
export interface ApiIssue {
  field?: string;
  message?: string;
  code?: string;
  severity?: 'error' | 'warning' | (string & {});
  [key: string]: unknown;
}

/** The server's JSON error body (`ApiErrorEnvelope`), kept raw on every error. */
export interface ApiErrorEnvelope {
  issues?: ApiIssue[];
  requestId?: string;
  hint?: string;
  docsUrl?: string;
  [key: string]: unknown;
}

export type ClientErrorCode =
  | 'validation_error'
  | 'auth_error'
  | 'forbidden'
  | 'not_found'
  | 'rate_limited'
  | 'server_error'
  | 'timeout'
  | 'http_error'
  | 'connection_error'
  | 'invalid_response'
  | 'configuration_error'
  | 'invalid_argument';

export interface ClientErrorInit {
  status?: number;
  requestId?: string | undefined;
  envelope?: ApiErrorEnvelope | undefined;
  retryAfter?: number | undefined;
  cause?: unknown;
}

const BRAND = Symbol.for('sluice.automation.client.ClientError');

/** Base class of every error the client throws. */
export class ClientError extends CodedError {
  /** Stable machine-readable kind; safe to compare across library copies. */
  declare readonly code: ClientErrorCode;
  /** HTTP status, or 0 when no response was received. */
  readonly status: number;
  /** From the `x-request-id` response header (or the envelope when the header is absent). */
  readonly requestId: string | undefined;
  /** The raw error body when it was JSON. */
  readonly envelope: ApiErrorEnvelope | undefined;
  /** Seconds the server asked the client to wait (429, and 5xx carrying Retry-After). */
  readonly retryAfter: number | undefined;

  constructor(message: string, code: ClientErrorCode = 'http_error', init: ClientErrorInit = {}) {
    super(code, message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'ClientError';
    this.status = init.status ?? 0;
    this.requestId = init.requestId ?? init.envelope?.requestId;
    this.envelope = init.envelope;
    this.retryAfter = init.retryAfter;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** The envelope's issues (empty when the server sent none). */
  get issues(): ApiIssue[] {
    return Array.isArray(this.envelope?.issues) ? this.envelope.issues : [];
  }
}

export class ClientValidationError extends ClientError {
  constructor(message: string, init: ClientErrorInit = {}) {
    super(message, 'validation_error', init);
    this.name = 'ClientValidationError';
  }
}

export class ClientAuthError extends ClientError {
  constructor(message: string, init: ClientErrorInit = {}) {
    super(message, 'auth_error', init);
    this.name = 'ClientAuthError';
  }
}

export class ClientForbiddenError extends ClientError {
  constructor(message: string, init: ClientErrorInit = {}) {
    super(message, 'forbidden', init);
    this.name = 'ClientForbiddenError';
  }
}

export class ClientNotFoundError extends ClientError {
  constructor(message: string, init: ClientErrorInit = {}) {
    super(message, 'not_found', init);
    this.name = 'ClientNotFoundError';
  }
}

export class ClientRateLimitError extends ClientError {
  constructor(message: string, init: ClientErrorInit = {}) {
    super(message, 'rate_limited', init);
    this.name = 'ClientRateLimitError';
  }
}

export class ClientServerError extends ClientError {
  constructor(message: string, init: ClientErrorInit = {}) {
    super(message, 'server_error', init);
    this.name = 'ClientServerError';
  }
}

export class ClientTimeoutError extends ClientError {
  /** Set by `run_and_wait` when the run was started but did not finish in time. */
  readonly runId: string | undefined;

  constructor(message: string, init: ClientErrorInit & { runId?: string } = {}) {
    super(message, 'timeout', init);
    this.name = 'ClientTimeoutError';
    this.runId = init.runId;
  }
}

/** True for any error thrown by this client, even from another copy of the library. */
export function isClientError(value: unknown): value is ClientError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
}

function describe(status: number, envelope: ApiErrorEnvelope | undefined, fallback: string): string {
  const messages = (envelope?.issues ?? [])
    .map((issue) =>
      issue.field && issue.field !== '<root>' ? `${issue.field}: ${issue.message}` : issue.message,
    )
    .filter((m): m is string => typeof m === 'string' && m.length > 0);
  const detail = messages.length > 0 ? messages.join('; ') : fallback;
  return `HTTP ${status}: ${detail}`;
}

/** Maps a non-2xx answer to the error class of the spec's table. */
export function errorFromResponse(
  status: number,
  envelope: ApiErrorEnvelope | undefined,
  init: { requestId?: string | undefined; retryAfter?: number | undefined; bodyText?: string },
): ClientError {
  const fallback = init.bodyText && init.bodyText.length > 0 ? init.bodyText.slice(0, 200) : 'request failed';
  const message = describe(status, envelope, fallback);
  const errInit: ClientErrorInit = {
    status,
    requestId: init.requestId,
    envelope,
    retryAfter: init.retryAfter,
  };
  if (status === 400) return new ClientValidationError(message, errInit);
  if (status === 401) return new ClientAuthError(message, errInit);
  if (status === 403) return new ClientForbiddenError(message, errInit);
  if (status === 404) return new ClientNotFoundError(message, errInit);
  if (status === 429) return new ClientRateLimitError(message, errInit);
  if (status >= 500) return new ClientServerError(message, errInit);
  return new ClientError(message, 'http_error', errInit);
}
