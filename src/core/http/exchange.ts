// One request/response pair on a uWS connection: the request fields read synchronously (uWS
// invalidates its request object when the callback returns), the body reader, and a response
// writer that corks every write, never touches an aborted response, and applies backpressure to
// streamed bodies.

import { STATUS_CODES } from 'node:http';
import type { HttpResponse as UwsResponse } from 'uWebSockets.js';
import type { Principal } from '../auth/types.js';
import { BodyReader } from './body.js';
import {
  HttpError,
  type ErrorBodyFactory,
  type HttpRequest,
  type HttpResponse,
  type StreamWriter,
} from './types.js';

const textDecoder = new TextDecoder();
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

  /** Decoded on demand: most handlers never ask, and it costs a copy out of uWS. */
  get remoteAddress(): string {
    if (this.exchange.aborted) return '';
    return textDecoder.decode(this.exchange.res.getRemoteAddressAsText());
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
    // The callback may run inside uWS's onData: a throw there must become an error answer,
    // never an exception into the native layer.
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
    if (types && types.length > 0) checkContentType(this.headers['content-type'], types);
    const body = await this.body();
    if (body.length === 0)
      throw new HttpError(400, 'invalid_json', 'request body is empty; a JSON document is required');
    try {
      return JSON.parse(body.toString('utf8')) as T;
    } catch (error) {
      throw new HttpError(400, 'invalid_json', `request body is not valid JSON: ${(error as Error).message}`);
    }
  }

  bodyStream(): AsyncIterable<Buffer> {
    if (!this.reader) return (async function* () {})();
    return this.reader.stream();
  }

  onAbort(listener: () => void): void {
    this.exchange.onAbort(listener);
  }
}

/** The response half, and the owner of the uWS response object. */
export class Exchange implements HttpResponse {
  readonly request: Request;
  sent = false;
  aborted = false;

  private statusCode = 200;
  private headerList: [string, string][] = [];
  private abortListeners: (() => void)[] = [];
  private finishedOnce = false;
  private closing = false;
  private writable: (() => void) | undefined;

  constructor(
    readonly res: UwsResponse,
    method: string,
    path: string,
    rawQuery: string,
    headers: Readonly<Record<string, string>>,
    readonly requestId: string,
    private readonly hooks: ExchangeHooks,
  ) {
    this.request = new Request(this, method, path, rawQuery, headers, requestId);
  }

  onAbort(listener: () => void): void {
    if (this.aborted) listener();
    else this.abortListeners.push(listener);
  }

  hooksFailed(error: unknown): void {
    this.hooks.failed(this, error);
  }

  /** uWS onAborted: the connection is gone; nothing may be written to `res` any more. */
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
   * Closes the connection once the response is written (uWS then sends `Connection: close`
   * itself): for refusals whose request body is not read, so the client stops sending it and
   * its bytes can never be taken for the next request.
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
    const close = this.closing || this.hooks.draining();
    this.res.cork(() => {
      this.writeHead();
      this.endBody(body, close);
    });
    this.finish();
  }

  /** uWS closes after `end` when the client asked for it, but not after `endWithoutBody`. */
  private clientCloses(): boolean {
    return /\bclose\b/i.test(this.request.headers['connection'] ?? '');
  }

  /**
   * A HEAD answer has headers only (RFC 9110, 9.3.2). It goes out without Content-Length, which
   * the RFC allows: this uWS build keeps waiting for the reported bytes when endWithoutBody is
   * given a length, and drops the connection at the next request. uWS also does not close after
   * endWithoutBody, so a HEAD answer that must close ends with an empty body instead.
   */
  private endBody(body: Buffer | string | Uint8Array, close: boolean): void {
    if (this.request.method !== 'HEAD') this.res.end(body, close);
    else if (close || this.clientCloses()) this.res.end('', true);
    else this.res.endWithoutBody();
  }

  error(status: number, code: string, message: string, details?: unknown): void {
    const body = this.hooks.errorBody({
      status,
      code,
      message,
      requestId: this.requestId,
      ...(details === undefined ? {} : { details }),
    });
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
    if (!this.aborted) this.res.cork(() => this.writeHead());
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the writer's getter reads live state
    const exchange = this;
    return {
      write: (chunk) => (this.request.method === 'HEAD' ? Promise.resolve() : this.writeChunk(chunk)),
      end: (chunk) => {
        if (this.aborted) return;
        this.request.releaseBody();
        let close = this.closing || this.hooks.draining();
        if (this.request.method === 'HEAD' && !close && this.clientCloses()) close = true;
        if (this.request.method === 'HEAD')
          this.res.cork(() => (close ? this.res.end('', true) : this.res.endWithoutBody()));
        else this.res.cork(() => this.res.end(chunk ?? '', close));
        this.finish();
      },
      get aborted() {
        return exchange.aborted;
      },
    };
  }

  private writeChunk(chunk: Buffer | string): Promise<void> {
    if (this.aborted) return Promise.reject(new HttpError(499, 'aborted', 'client closed the connection'));
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(chunk);
    });
    if (ok) return Promise.resolve();
    // Backpressure: uWS keeps the chunk; wait until the socket drains before producing more.
    return new Promise((resolve, reject) => {
      this.writable = () =>
        this.aborted ? reject(new HttpError(499, 'aborted', 'client closed the connection')) : resolve();
      this.res.onWritable(() => {
        const wake = this.writable;
        this.writable = undefined;
        wake?.();
        return true;
      });
    });
  }

  private writeHead(): void {
    // uWS writes `200 OK` itself when no status was written: one native call less per answer.
    if (this.statusCode !== 200) this.res.writeStatus(statusLine(this.statusCode));
    this.res.writeHeader('x-request-id', this.requestId);
    for (const [k, v] of this.headerList) this.res.writeHeader(k, v);
  }

  private finish(): void {
    if (this.finishedOnce) return;
    this.finishedOnce = true;
    this.hooks.finished(this);
  }
}

/** 415 unless the request's media type (parameters ignored) is one of `types`. */
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
