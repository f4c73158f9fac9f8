// The HTTP core's public contract. Services see only these types; uWebSockets.js stays inside
// src/core/http (see docs/architecture.md, "HTTP core").

import { CodedError } from '../errors.js';

/** Builds a service's JSON error body. Each service chooses its own envelope shape. */
export type ErrorBodyFactory = (error: {
  status: number;
  code: string;
  message: string;
  requestId: string;
  details?: unknown;
}) => unknown;

/** An HTTP error a handler throws (or the core raises) to answer with the service's error envelope. */
export class HttpError extends CodedError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(code, message);
  }
}

export interface HttpRequest {
  readonly method: string; // upper case
  readonly path: string; // without query string, percent-decoded per segment for params
  readonly rawQuery: string;
  readonly query: URLSearchParams;
  /** Header names are lower case. Read synchronously by the core before the handler runs. */
  readonly headers: Readonly<Record<string, string>>;
  /** Path parameters from `:name` segments (decoded) and the `*` tail as `params['*']`. */
  readonly params: Readonly<Record<string, string>>;
  readonly requestId: string;
  readonly remoteAddress: string;
  /** Set by the auth middleware when the route requires a key. */
  principal?: import('../auth/types.js').Principal;
  /** Whole body, bounded by the route's limit (413 past it, also for chunked bodies). */
  body(): Promise<Buffer>;
  /**
   * Whole body through a callback, called as soon as the body is complete (inside the network
   * callback, without a promise hop): for hot paths. Errors (413, client gone) come as HttpError.
   */
  readBody(callback: (error: HttpError | undefined, body: Buffer) => void): void;
  /** Body parsed as JSON (400 on a parse error, 415 unless the content type is one of `types`). */
  json<T = unknown>(types?: readonly string[]): Promise<T>;
  /** As json(), with the body's bytes too (for handlers that keep parts of the text as sent). */
  jsonWithBytes<T = unknown>(types?: readonly string[]): Promise<{ value: T; bytes: Buffer }>;
  /** Streams the body chunk by chunk (for uploads); the limit still applies. Chunks are copies. */
  bodyStream(): AsyncIterable<Buffer>;
  /** True once the client went away. */
  readonly aborted: boolean;
  onAbort(listener: () => void): void;
}

export interface StreamWriter {
  /** Resolves when the chunk was accepted by the socket (backpressure); rejects once aborted. */
  write(chunk: Buffer | string): Promise<void>;
  end(chunk?: Buffer | string): void;
  readonly aborted: boolean;
}

export interface HttpResponse {
  readonly sent: boolean;
  status(code: number): this;
  header(name: string, value: string): this;
  /** Ends the response with a JSON body (content-type application/json unless set). */
  json(body: unknown, status?: number): void;
  /** Ends the response with raw bytes or text. */
  send(body?: Buffer | string | Uint8Array, status?: number): void;
  /** Ends the response with the service's JSON error envelope. */
  error(status: number, code: string, message: string, details?: unknown): void;
  /** Starts a streamed (chunked) response; headers and status are sent first. */
  stream(status?: number): StreamWriter;
}

export type Handler = (req: HttpRequest, res: HttpResponse) => void | Promise<void>;

export interface RouteOptions {
  /** Body size limit in bytes for this route (default: the server's maxBodyBytes). */
  maxBodyBytes?: number;
  /** Scope the bearer key must carry; `false` marks a public route (no auth). Default: server's. */
  scope?: string | false;
}

export interface WebSocketHandlers {
  /** Called on upgrade; return per-socket user data or throw HttpError to refuse. */
  upgrade(req: HttpRequest): Promise<Record<string, unknown>> | Record<string, unknown>;
  open?(ws: WebSocketConnection): void;
  message?(ws: WebSocketConnection, message: Buffer, isBinary: boolean): void;
  drain?(ws: WebSocketConnection): void;
  close?(ws: WebSocketConnection, code: number, reason: string): void;
}

export interface WebSocketConnection {
  readonly data: Record<string, unknown>;
  /** Returns false when the message was buffered over the backpressure limit. */
  send(message: string | Buffer, isBinary?: boolean): boolean;
  bufferedAmount(): number;
  close(code?: number, reason?: string): void;
  readonly closed: boolean;
}
