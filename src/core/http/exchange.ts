// One request/response pair, whichever transport carries it: the request fields read up front
// (uWS invalidates its request object when the callback returns), the body reader, and a
// response writer that never touches an aborted response and applies backpressure to streamed
// bodies. What differs per transport (how bytes reach the socket) is the handful of abstract
// methods a transport's subclass implements (uws.ts, node.ts); everything a client can observe
// about status, headers, errors and bodies is decided here, once.

import { STATUS_CODES } from 'node:http';
import type { Principal } from '../auth/types.js';
import type { BodyReader, BodySource } from './body.js';
import {
  HttpError,
  type ErrorBodyFactory,
  type HttpRequest,
  type HttpResponse,
  type StreamWriter,
} from './types.js';

const statusLines = new Map<number, string>();
export function statusLine(code: number): string {
  let line = statusLines.get(code);
  if (!line) {
    line = `${code} ${STATUS_CODES[code] ?? 'Unknown'}`;
    statusLines.set(code, line);
  }
  return line;
}

export interface ExchangeHooks {
  errorBody: ErrorBodyFactory;
  /** Called once as the exchange is made (the request head has arrived). */
  started(exchange: Exchange): void;
  /** Called once when the response is complete or the client went away. */
  finished(exchange: Exchange): void;
  /** True while the server drains: responses then close their connection. */
  draining(): boolean;
  /** A handler continuation failed outside the handler's own promise (readBody callbacks). */
  failed(exchange: Exchange, error: unknown): void;
}

/** The request half: fields read up front, body on demand. */
export class Request implements HttpRequest {
  params: Readonly<Record<string, string>> = {};
  principal?: Principal;
  private reader: BodyReader | undefined;
  private parsedQuery: URLSearchParams | undefined;

  constructor(
    private readonly exchange: Exchange,
    readonly method: string,
    readonly path: string,
    readonly rawQuery: string,
    readonly headers: Readonly<Record<string, string>>,
    readonly requestId: string,
  ) {}

  /** Parsed on first use: the hot paths (decisions, produce) never read a query string. */
  get query(): URLSearchParams {
    this.parsedQuery ??= new URLSearchParams(this.rawQuery);
    return this.parsedQuery;
  }

  get aborted(): boolean {
    return this.exchange.aborted;
  }

  /** Read on demand: most handlers never ask, and on uWS it costs a copy. */
  get remoteAddress(): string {
    if (this.exchange.aborted) return '';
    return this.exchange.remoteAddressText();
  }

  setBodyReader(reader: BodyReader): void {
    this.reader = reader;
  }

  abortBody(): void {
    this.reader?.abort();
  }

  /** The response is being written: an unread rest of the body is dropped, not buffered. */
  releaseBody(): void {
    if (this.reader && !this.reader.settled) this.reader.discard();
  }

  body(): Promise<Buffer> {
    if (!this.reader) return Promise.resolve(Buffer.alloc(0));
    return this.reader.whole();
  }

  readBody(callback: (error: HttpError | undefined, body: Buffer) => void): void {
    // The callback may run inside the transport's data callback (uWS's onData): a throw there
    // must become an error answer, never an exception into the native layer.
    const guarded = (error: HttpError | undefined, body: Buffer): void => {
      try {
        callback(error, body);
      } catch (thrown) {
        this.exchange.hooksFailed(thrown);
      }
    };
    if (!this.reader) return guarded(undefined, Buffer.alloc(0));
    this.reader.complete(guarded);
  }

  async json<T = unknown>(types?: readonly string[]): Promise<T> {
    return (await this.jsonWithBytes<T>(types)).value;
  }

  async jsonWithBytes<T = unknown>(types?: readonly string[]): Promise<{ value: T; bytes: Buffer }> {
    if (types && types.length > 0) checkContentType(this.headers['content-type'], types);
    const bytes = await this.body();
    return { value: parseJsonBody(bytes) as T, bytes };
  }

  bodyStream(): AsyncIterable<Buffer> {
    if (!this.reader) return (async function* () {})();
    return this.reader.stream();
  }

  onAbort(listener: () => void): void {
    this.exchange.onAbort(listener);
  }
}

/**
 * The response half. A transport subclasses it with the primitives that write to its socket;
 * the subclass is also the body's flow control (pause/resume) and is told of aborts through
 * `handleAbort`.
 */
export abstract class Exchange implements HttpResponse, BodySource {
  readonly request: Request;
  sent = false;
  aborted = false;
  /** When the request head arrived (performance.now()), for the request observer. */
  readonly startedAt = performance.now();
  /** The matched route's pattern, set by the core once routed (empty: no route matched). */
  route = '';
  /** Body bytes handed to the socket. */
  bytesWritten = 0;

  protected statusCode = 200;
  protected headerList: [string, string][] = [];
  private abortListeners: (() => void)[] = [];
  private finishedOnce = false;
  private closing = false;
  private writable: (() => void) | undefined;

  constructor(
    method: string,
    path: string,
    rawQuery: string,
    headers: Readonly<Record<string, string>>,
    readonly requestId: string,
    private readonly hooks: ExchangeHooks,
  ) {
    this.request = new Request(this, method, path, rawQuery, headers, requestId);
    hooks.started(this);
  }

  /** The status of the answer (as set so far; final once finished). */
  get statusSent(): number {
    return this.statusCode;
  }

  /** The request became a WebSocket: its HTTP exchange is over (101 Switching Protocols). */
  upgraded(): void {
    this.statusCode = 101;
    this.finish();
  }

  // ---- what a transport provides ----

  /** Writes status, headers (x-request-id first, then `headerList`) and the whole body. */
  protected abstract writeWhole(body: Buffer | string | Uint8Array, close: boolean): void;
  /** Writes status and headers of a streamed (chunked) answer. */
  protected abstract writeStreamHead(close: boolean): void;
  /** Writes one chunk; false when the socket buffers it (then `awaitWritable` follows). */
  protected abstract writeStreamChunk(chunk: Buffer | string): boolean;
  /** Calls `writableAgain` once the socket drained. */
  protected abstract awaitWritable(): void;
  /** Ends a streamed answer (HEAD: no bytes), closing the connection when `close`. */
  protected abstract writeStreamEnd(chunk: Buffer | string | undefined, close: boolean): void;
  /** Registers for the body's chunks (pushed into `reader`); called while the request arrives. */
  abstract attachBody(reader: BodyReader): void;
  abstract remoteAddressText(): string;
  abstract pauseBody(): void;
  abstract resumeBody(): void;
  /** Closes the connection now, whatever is in flight (the end of a draining close). */
  abstract forceClose(): void;

  onAbort(listener: () => void): void {
    if (this.aborted) listener();
    else this.abortListeners.push(listener);
  }

  hooksFailed(error: unknown): void {
    this.hooks.failed(this, error);
  }

  /** The connection is gone; nothing may be written any more. */
  handleAbort(): void {
    if (this.aborted) return;
    this.aborted = true;
    this.request.abortBody();
    const wake = this.writable;
    this.writable = undefined;
    wake?.();
    for (const listener of this.abortListeners) {
      try {
        listener();
      } catch {
        // a listener's failure must not stop the others
      }
    }
    this.abortListeners = [];
    this.finish();
  }

  /**
   * Closes the connection once the response is written (with `Connection: close`): for
   * refusals whose request body is not read, so the client stops sending it and its bytes can
   * never be taken for the next request.
   */
  closeAfterResponse(): this {
    this.closing = true;
    return this;
  }

  // ---- response side ----

  status(code: number): this {
    this.statusCode = code;
    return this;
  }

  header(name: string, value: string): this {
    this.headerList.push([name, value]);
    return this;
  }

  json(body: unknown, status?: number): void {
    if (status !== undefined) this.statusCode = status;
    if (!this.headerList.some(([k]) => k.toLowerCase() === 'content-type')) {
      this.headerList.push(['content-type', 'application/json']);
    }
    this.send(JSON.stringify(body));
  }

  send(body: Buffer | string | Uint8Array = '', status?: number): void {
    if (status !== undefined) this.statusCode = status;
    if (this.sent || this.aborted) return;
    this.sent = true;
    this.request.releaseBody();
    if (this.request.method !== 'HEAD') this.bytesWritten += byteLength(body);
    this.writeWhole(body, this.closing || this.hooks.draining());
    this.finish();
  }

  /** The service's error envelope for this request. */
  protected hooksErrorBody(status: number, code: string, message: string, details?: unknown): unknown {
    return this.hooks.errorBody({
      status,
      code,
      message,
      requestId: this.requestId,
      ...(details === undefined ? {} : { details }),
    });
  }

  error(status: number, code: string, message: string, details?: unknown): void {
    const body = this.hooksErrorBody(status, code, message, details);
    this.headerList = this.headerList.filter(([k]) => k.toLowerCase() !== 'content-type');
    this.json(body, status);
  }

  /** Answers with an HttpError (its headers too). */
  fail(error: HttpError): void {
    if (error.headers) for (const [k, v] of Object.entries(error.headers)) this.header(k, v);
    this.error(error.status, error.code, error.message, error.details);
  }

  stream(status?: number): StreamWriter {
    if (status !== undefined) this.statusCode = status;
    if (this.sent) throw new Error('response already sent');
    this.sent = true;
    if (!this.aborted) this.writeStreamHead(this.closing || this.hooks.draining());
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the writer's getter reads live state
    const exchange = this;
    return {
      write: (chunk) => (this.request.method === 'HEAD' ? Promise.resolve() : this.writeChunk(chunk)),
      end: (chunk) => {
        if (this.aborted) return;
        this.request.releaseBody();
        if (chunk !== undefined && this.request.method !== 'HEAD') this.bytesWritten += byteLength(chunk);
        this.writeStreamEnd(chunk, this.closing || this.hooks.draining());
        this.finish();
      },
      get aborted() {
        return exchange.aborted;
      },
    };
  }

  /** The transport's drain signal: a waiting writer continues. */
  protected writableAgain(): void {
    const wake = this.writable;
    this.writable = undefined;
    wake?.();
  }

  private writeChunk(chunk: Buffer | string): Promise<void> {
    if (this.aborted) return Promise.reject(new HttpError(499, 'aborted', 'client closed the connection'));
    this.bytesWritten += byteLength(chunk);
    if (this.writeStreamChunk(chunk)) return Promise.resolve();
    // Backpressure: the socket keeps the chunk; wait until it drains before producing more.
    return new Promise((resolve, reject) => {
      this.writable = () =>
        this.aborted ? reject(new HttpError(499, 'aborted', 'client closed the connection')) : resolve();
      this.awaitWritable();
    });
  }

  private finish(): void {
    if (this.finishedOnce) return;
    this.finishedOnce = true;
    this.hooks.finished(this);
  }
}

function byteLength(body: Buffer | string | Uint8Array): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
}

/** 415 unless the request's media type (parameters ignored) is one of `types`. */
/** A whole request body as JSON, or the 400 that `req.json()` answers for it. */
export function parseJsonBody(bytes: Buffer): unknown {
  if (bytes.length === 0)
    throw new HttpError(400, 'invalid_json', 'request body is empty; a JSON document is required');
  try {
    return JSON.parse(bytes.toString('utf8')) as unknown;
  } catch (error) {
    throw new HttpError(400, 'invalid_json', `request body is not valid JSON: ${(error as Error).message}`);
  }
}

export function checkContentType(header: string | undefined, types: readonly string[]): void {
  const media = (header ?? '').split(';')[0]!.trim().toLowerCase();
  if (!types.some((t) => t.toLowerCase() === media)) {
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Type must be ${types.join(' or ')}${media ? `, got ${media}` : ' (none was sent)'}`,
    );
  }
}
