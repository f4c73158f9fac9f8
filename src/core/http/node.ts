// The node:http transport, for runtimes where no uWebSockets.js build loads (or when
// SLUICE_HTTP_TRANSPORT=node): every request goes through the same core as on uWS (dispatch.ts,
// exchange.ts), WebSocket routes through the `ws` package in noServer mode on the server's
// 'upgrade' event. Hot-path notes: the server is created with its own IncomingMessage and
// ServerResponse classes that carry the exchange, so the per-request listeners are shared
// functions (no closure per request); a whole answer is one writeHead with a flat header list
// and an explicit Content-Length, then one end.

import {
  createServer,
  IncomingMessage,
  ServerResponse,
  validateHeaderName,
  validateHeaderValue,
  type Server,
} from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { requestIdFrom } from '../ids.js';
import type { BodyReader } from './body.js';
import { answeredSubprotocol, type HttpCore } from './dispatch.js';
import { Exchange, statusLine, type ExchangeHooks } from './exchange.js';
import { bindWebSocketPattern, type WebSocketRoute } from './router.js';
import type { HttpServerHandle, HttpServerOptions } from './server.js';
import type { TransportInfo } from './transport.js';
import { HttpError, type WebSocketConnection } from './types.js';

const EMPTY = Buffer.alloc(0);

/** Statuses whose answers carry no body and must not announce one (RFC 9110, 8.6). */
function bodiless(status: number): boolean {
  return status === 204 || status === 304 || status < 200;
}

class SluiceIncoming extends IncomingMessage {
  exchange: NodeExchange | undefined = undefined;
}

class SluiceResponse extends ServerResponse<SluiceIncoming> {
  exchange: NodeExchange | undefined = undefined;
}

// Listeners shared by every request: `this` is the emitter, which carries its exchange.
function onResponseClose(this: SluiceResponse): void {
  // 'close' follows 'finish' on every answer; before it, the connection went away.
  if (!this.writableFinished) this.exchange?.handleAbort();
}
function onResponseDrain(this: SluiceResponse): void {
  this.exchange?.drained();
}
function onRequestData(this: SluiceIncoming, chunk: Buffer): void {
  this.exchange?.reader?.push(chunk, false, true);
}
function onRequestEnd(this: SluiceIncoming): void {
  this.exchange?.reader?.push(EMPTY, true, true);
}

class NodeExchange extends Exchange {
  reader: BodyReader | undefined = undefined;
  /** The streamed answer's head already said `Connection: close`. */
  private headCloses = false;

  constructor(
    private readonly req: SluiceIncoming,
    private readonly res: SluiceResponse,
    method: string,
    path: string,
    rawQuery: string,
    headers: Readonly<Record<string, string>>,
    requestId: string,
    hooks: ExchangeHooks,
  ) {
    super(method, path, rawQuery, headers, requestId, hooks);
  }

  drained(): void {
    this.writableAgain();
  }

  /** The whole answer was handed to node:http. */
  get answered(): boolean {
    return this.res.writableEnded;
  }

  private head(close: boolean, length: number | undefined): string[] {
    const fields = ['x-request-id', this.requestId];
    for (const [k, v] of this.headerList) fields.push(k, v);
    if (length !== undefined && !bodiless(this.statusCode)) fields.push('content-length', String(length));
    if (close) fields.push('connection', 'close');
    return fields;
  }

  /**
   * node:http refuses header names and values uWS would write as they are (control characters):
   * such an answer becomes a 500 naming the header, never an exception after `sent` was set.
   */
  private writeHeadSafely(close: boolean, length: number | undefined): boolean {
    try {
      this.res.writeHead(this.statusCode, this.head(close, length));
      return true;
    } catch (error) {
      const body = JSON.stringify(
        this.hooksErrorBody(
          500,
          'internal',
          `the handler set an invalid header: ${(error as Error).message}`,
        ),
      );
      this.res.writeHead(500, [
        'x-request-id',
        this.requestId,
        'content-type',
        'application/json',
        'content-length',
        String(Buffer.byteLength(body)),
        'connection',
        'close',
      ]);
      this.res.end(body);
      return false;
    }
  }

  protected writeWhole(body: Buffer | string | Uint8Array, close: boolean): void {
    const length = typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength;
    // node:http leaves out the body of a HEAD answer itself and keeps the Content-Length of the
    // GET answer, as RFC 9110 (9.3.2) suggests.
    if (this.writeHeadSafely(close, length)) this.res.end(body);
  }

  protected writeStreamHead(close: boolean): void {
    this.headCloses = close;
    if (this.writeHeadSafely(close, undefined)) this.res.flushHeaders();
  }

  protected writeStreamChunk(chunk: Buffer | string): boolean {
    return this.res.write(chunk);
  }

  protected awaitWritable(): void {
    this.res.once('drain', onResponseDrain);
  }

  protected writeStreamEnd(chunk: Buffer | string | undefined, close: boolean): void {
    if (chunk === undefined || this.request.method === 'HEAD') this.res.end();
    else this.res.end(chunk);
    // The head went out before the server began to drain: close once the answer is written.
    if (close && !this.headCloses) this.res.socket?.destroySoon();
  }

  attachBody(reader: BodyReader): void {
    this.reader = reader;
    this.req.on('data', onRequestData);
    this.req.on('end', onRequestEnd);
  }

  remoteAddressText(): string {
    return this.req.socket.remoteAddress ?? '';
  }

  pauseBody(): void {
    this.req.pause();
  }

  resumeBody(): void {
    this.req.resume();
  }

  forceClose(): void {
    this.res.destroy();
  }
}

/**
 * An exchange on a socket the HTTP parser gave up (an upgrade request): answers are written by
 * hand and always close the connection, since nothing parses a next request on it.
 */
class SocketExchange extends Exchange {
  constructor(
    private readonly socket: Duplex,
    method: string,
    path: string,
    rawQuery: string,
    headers: Readonly<Record<string, string>>,
    requestId: string,
    hooks: ExchangeHooks,
  ) {
    super(method, path, rawQuery, headers, requestId, hooks);
  }

  private head(length: number | undefined): string {
    let head = `HTTP/1.1 ${statusLine(this.statusCode)}\r\nx-request-id: ${this.requestId}\r\n`;
    for (const [k, v] of this.headerList) {
      try {
        validateHeaderName(k);
        validateHeaderValue(k, v);
        head += `${k}: ${v}\r\n`;
      } catch {
        // a header node:http would refuse is left out rather than written into the stream
      }
    }
    if (length !== undefined) head += `content-length: ${length}\r\n`;
    return head + 'connection: close\r\n\r\n';
  }

  protected writeWhole(body: Buffer | string | Uint8Array): void {
    const bytes = typeof body === 'string' ? Buffer.from(body) : body;
    this.socket.write(this.head(bytes.byteLength));
    this.end(this.request.method === 'HEAD' ? EMPTY : bytes);
  }

  /** Ends the connection, and drops it once written (a client that never closes cannot hold it). */
  private end(bytes: Buffer | Uint8Array | string): void {
    this.socket.once('finish', () => this.socket.destroy());
    this.socket.end(bytes);
  }

  protected writeStreamHead(): void {
    // No length and no chunked framing: the body runs until the connection closes.
    this.socket.write(this.head(undefined));
  }

  protected writeStreamChunk(chunk: Buffer | string): boolean {
    return this.socket.write(chunk);
  }

  protected awaitWritable(): void {
    this.socket.once('drain', () => this.writableAgain());
  }

  protected writeStreamEnd(chunk: Buffer | string | undefined): void {
    this.end(chunk === undefined || this.request.method === 'HEAD' ? EMPTY : chunk);
  }

  attachBody(reader: BodyReader): void {
    // Bytes after an upgrade request's head are not HTTP any more; such a body is refused.
    this.closeAfterResponse().fail(
      new HttpError(400, 'bad_request', 'a request that asks for a protocol upgrade cannot carry a body'),
    );
    reader.abort();
  }

  remoteAddressText(): string {
    return (this.socket as Socket).remoteAddress ?? '';
  }

  pauseBody(): void {}
  resumeBody(): void {}

  forceClose(): void {
    this.socket.destroy();
  }
}

/** A `ws` socket behind the core's WebSocketConnection, with uWS's send and drain semantics. */
class NodeSocketConnection implements WebSocketConnection {
  closed = false;
  /** Last frame or pong from the client (idle timeout). */
  lastSeen = Date.now();
  pinged = false;
  private needDrain = false;
  private readonly afterSend: () => void;

  constructor(
    readonly ws: WebSocket,
    readonly data: Record<string, unknown>,
    readonly route: WebSocketRoute,
    private readonly maxBackpressure: number,
  ) {
    // Called when a frame reached the kernel: uWS's `drain` once nothing is left buffered.
    this.afterSend = () => {
      if (this.needDrain && !this.closed && this.ws.bufferedAmount === 0) {
        this.needDrain = false;
        this.route.handlers.drain?.(this);
      }
    };
  }

  /** As uWS: true when sent without buffering; false when buffered, or dropped past the limit. */
  send(message: string | Buffer, isBinary = false): boolean {
    if (this.closed) return false;
    if (this.ws.bufferedAmount > this.maxBackpressure) {
      this.needDrain = true;
      return false;
    }
    this.ws.send(message, { binary: isBinary }, this.afterSend);
    if (this.ws.bufferedAmount === 0) return true;
    this.needDrain = true;
    return false;
  }

  bufferedAmount(): number {
    return this.closed ? 0 : this.ws.bufferedAmount;
  }

  close(code?: number, reason?: string): void {
    if (this.closed) return;
    this.closed = true;
    // As uWS's close(): without a code the connection is cut, no close frame.
    if (code === undefined) this.ws.terminate();
    else this.ws.close(code, reason);
  }
}

/** Idle WebSockets are pinged at half their timeout and cut at the timeout, as uWS does. */
const IDLE_CHECK_MS = 4_000;

export async function startNodeServer(
  core: HttpCore,
  options: HttpServerOptions,
  info: TransportInfo,
): Promise<HttpServerHandle> {
  const hooks = core.hooks;
  const server: Server<typeof SluiceIncoming, typeof SluiceResponse> = createServer<
    typeof SluiceIncoming,
    typeof SluiceResponse
  >({
    IncomingMessage: SluiceIncoming,
    ServerResponse: SluiceResponse,
    // node:http's own answer to a missing Host is a 400 without a body; ours carries the envelope.
    requireHostHeader: false,
  });
  /** The last request parsed on each connection, to tell where a parse error happened. */
  const lastRequest = new WeakMap<Duplex, SluiceIncoming>();
  // As uWS's HTTP idle timeout: a keep-alive connection may rest 10 s between requests.
  server.keepAliveTimeout = 10_000;

  server.on('request', (req: SluiceIncoming, res: SluiceResponse) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const headers = req.headers as Record<string, string>;
    const exchange = new NodeExchange(
      req,
      res,
      req.method ?? 'GET',
      q < 0 ? url : url.slice(0, q),
      q < 0 ? '' : url.slice(q + 1),
      headers,
      requestIdFrom(headers['x-request-id']),
      hooks,
    );
    req.exchange = exchange;
    res.exchange = exchange;
    res.on('close', onResponseClose);
    lastRequest.set(req.socket, req);
    if (headers['host'] === undefined && req.httpVersionMinor >= 1 && req.httpVersionMajor === 1) {
      core.inflight.add(exchange);
      return exchange
        .closeAfterResponse()
        .fail(new HttpError(400, 'bad_request', 'an HTTP/1.1 request needs a Host header (RFC 9112, 3.2)'));
    }
    core.handle(exchange);
  });

  // A request node:http cannot parse gets the service's JSON envelope, then the connection
  // closes. Bytes that fail inside the body of a request already handed to the core (a bad chunk
  // size) belong to that request: the connection just closes, as a second answer would follow
  // one nobody asked for. Bytes that fail after a request whose answer is still being made
  // (node's parser reads ahead; uWS waits for a whole head) let that answer go out, closing the
  // connection after it.
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    const current = lastRequest.get(socket);
    if (error.code === 'ECONNRESET' || !socket.writable || (current !== undefined && !current.complete)) {
      socket.destroy();
      return;
    }
    const pending = current?.exchange;
    if (pending !== undefined && !pending.aborted && !pending.answered) {
      pending.closeAfterResponse();
      return;
    }
    const status =
      error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    const code =
      status === 431 ? 'header_fields_too_large' : status === 408 ? 'request_timeout' : 'bad_request';
    const requestId = requestIdFrom(undefined);
    const body = JSON.stringify(
      options.errorBody({
        status,
        code,
        message: `malformed HTTP request (${error.code ?? 'parse error'})`,
        requestId,
      }),
    );
    // A HEAD request gets the headers alone (RFC 9110, 9.3.2).
    const head = error.rawPacket?.subarray(0, 5).toString('latin1') === 'HEAD ';
    socket.end(
      `HTTP/1.1 ${statusLine(status)}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n` +
        `x-request-id: ${requestId}\r\nconnection: close\r\n\r\n${head ? '' : body}`,
    );
  });
  server.on('error', (error) =>
    options.log?.error({ err: error, service: options.name }, 'http server error'),
  );

  const webSockets = options.router.webSocketRoutes();
  const sockets = new Set<NodeSocketConnection>();
  let idleTimer: NodeJS.Timeout | undefined;
  if (webSockets.length > 0) {
    const servers = new Map<WebSocketRoute, WebSocketServer>();
    for (const route of webSockets) {
      servers.set(
        route,
        new WebSocketServer({
          noServer: true,
          clientTracking: false,
          handleProtocols: (offered) => answeredSubprotocol([...offered].join(', ')) || false,
          maxPayload: route.options.maxPayloadBytes ?? 64 * 1024,
        }),
      );
    }
    const open = (ws: WebSocket, route: WebSocketRoute, data: Record<string, unknown>): void => {
      const conn = new NodeSocketConnection(
        ws,
        data,
        route,
        route.options.maxBackpressureBytes ?? 1024 * 1024,
      );
      sockets.add(conn);
      core.socketOpened();
      ws.on('message', (message: Buffer, isBinary: boolean) => {
        conn.lastSeen = Date.now();
        conn.pinged = false;
        route.handlers.message?.(conn, message, isBinary);
      });
      ws.on('pong', () => {
        conn.lastSeen = Date.now();
        conn.pinged = false;
      });
      // Protocol errors (an oversized frame …) close the socket; 'close' follows.
      ws.on('error', () => undefined);
      ws.on('close', (code: number, reason: Buffer) => {
        sockets.delete(conn);
        core.socketClosed();
        conn.closed = true;
        route.handlers.close?.(conn, code, reason.toString('utf8'));
      });
      route.handlers.open?.(conn);
    };

    // Every upgrade request comes here (node:http hands none of them to 'request' while this
    // listener exists); one for a path without a WebSocket route is answered by the core.
    server.on('upgrade', (req: SluiceIncoming, socket: Duplex, head: Buffer) => {
      const url = req.url ?? '/';
      const q = url.indexOf('?');
      const path = q < 0 ? url : url.slice(0, q);
      const headers = req.headers as Record<string, string>;
      const exchange = new SocketExchange(
        socket,
        req.method ?? 'GET',
        path,
        q < 0 ? '' : url.slice(q + 1),
        headers,
        requestIdFrom(headers['x-request-id']),
        hooks,
      );
      socket.on('error', () => undefined);
      socket.once('close', () => exchange.handleAbort());
      let route: WebSocketRoute | undefined;
      let params: Record<string, string> | undefined;
      if (req.method === 'GET' && (headers['upgrade'] ?? '').toLowerCase() === 'websocket') {
        for (const candidate of webSockets) {
          params = bindWebSocketPattern(candidate.pattern, path);
          if (params) {
            route = candidate;
            break;
          }
        }
      }
      if (!route || !params) return core.handle(exchange);
      exchange.request.params = params;
      const wss = servers.get(route)!;
      const matched = route;
      core.upgrade(exchange, matched, (data) =>
        wss.handleUpgrade(req, socket, head, (ws) => open(ws, matched, data)),
      );
    });

    idleTimer = setInterval(() => {
      const now = Date.now();
      for (const conn of sockets) {
        const idleMs = (conn.route.options.idleTimeoutS ?? 120) * 1000;
        if (idleMs <= 0) continue;
        const quiet = now - conn.lastSeen;
        if (quiet >= idleMs) conn.close();
        else if (quiet >= idleMs / 2 && !conn.pinged) {
          conn.pinged = true;
          conn.ws.ping();
        }
      }
    }, IDLE_CHECK_MS).unref();
  }

  await new Promise<void>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `${options.name}: cannot listen on ${options.host}:${options.port} (${error.code ?? error.message})`,
        ),
      );
    server.once('error', failed);
    // Threads that share the port each listen with SO_REUSEPORT (net.Server.listen's
    // `reusePort`, Node ≥ 22.12 / 23.1); the kernel spreads connections, as with uWS.
    const reusePort = options.thread !== undefined && info.sharedPort;
    server.listen(
      { host: options.host, port: options.port, ...(reusePort ? { reusePort: true } : {}) },
      () => {
        server.off('error', failed);
        resolve();
      },
    );
  });
  const address = server.address();
  return core.serverHandle(
    typeof address === 'object' && address ? address.port : options.port,
    info,
    () => {
      // Stops listening; keep-alive connections between requests are closed at once.
      server.close();
      server.closeIdleConnections();
    },
    () => {
      for (const conn of sockets) conn.close();
      if (idleTimer) clearInterval(idleTimer);
      server.closeAllConnections();
    },
  );
}
