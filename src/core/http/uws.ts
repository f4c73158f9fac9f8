// The uWebSockets.js transport: one App per service per thread, one catch-all uWS route that
// hands every request to the shared core (dispatch.ts), WebSocket routes through uWS's own
// WebSocket support, and a close that stops listening first (uWS aborts the process if it exits
// with live listen sockets). The only module that touches uWS; `loadUwsBuild` finds a build that
// loads for the running Node and C library among the installed ones.

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readFileSync } from 'node:fs';
import type uWSTypes from 'uWebSockets.js';
import type { HttpResponse as UwsResponse, WebSocket as UwsWebSocket } from 'uWebSockets.js';
import { requestIdFrom } from '../ids.js';
import type { BodyReader } from './body.js';
import { answeredSubprotocol, type HttpCore } from './dispatch.js';
import { Exchange, statusLine, type ExchangeHooks } from './exchange.js';
import { bindWebSocketPattern, type WebSocketRoute } from './router.js';
import type { HttpServerHandle, HttpServerOptions } from './server.js';
import type { TransportInfo } from './transport.js';
import type { WebSocketConnection } from './types.js';

type Uws = typeof uWSTypes;

export interface UwsBuild {
  readonly uws: Uws;
  /** npm package the binary came from. */
  readonly build: string;
  readonly version: string;
}

const require = createRequire(import.meta.url);
const binaryName = () => `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;

function packageVersion(entry: string): string {
  // Both packages keep package.json in the directory of their entry point.
  const json = JSON.parse(readFileSync(join(dirname(entry), 'package.json'), 'utf8')) as { version: string };
  return json.version;
}

/**
 * The installed builds in the order they are tried. The build this repository is tested with
 * on Node 20 comes first (uWS v20.30, binaries for Node ≤ 20 only); the newer build (uWS v20.57,
 * binaries for Node 20/22/24/25, needs glibc ≥ 2.38) serves where the first has no binary.
 * The first is loaded by its binary's path: its package entry, when no binary fits, falls back
 * to a slow JavaScript imitation of uWS with a console warning, which must never serve here.
 */
const CANDIDATES: readonly { build: string; load(): { uws: Uws; version: string } }[] = [
  {
    build: '@trufflesuite/uws-js-unofficial',
    load() {
      const manifest = require.resolve('uWebSockets.js/package.json');
      const uws = require(join(dirname(manifest), 'binaries', binaryName())) as Uws;
      return { uws, version: packageVersion(manifest) };
    },
  },
  {
    build: '@btc-vision/uwebsockets.js',
    load() {
      const entry = require.resolve('@btc-vision/uwebsockets.js');
      return { uws: require(entry) as Uws, version: packageVersion(entry) };
    },
  },
];

/** The first installed build that loads, or the reason each one did not. */
export function loadUwsBuild(): UwsBuild | { failures: string[] } {
  const failures: string[] = [];
  for (const candidate of CANDIDATES) {
    try {
      const { uws, version } = candidate.load();
      if (typeof uws.App !== 'function') throw new Error('the module has no App');
      return { uws, build: candidate.build, version };
    } catch (error) {
      failures.push(`${candidate.build}: ${String((error as Error).message).split('\n')[0]}`);
    }
  }
  return { failures };
}

/** The uWS half of an exchange: writes corked, never after an abort. */
class UwsExchange extends Exchange {
  constructor(
    readonly res: UwsResponse,
    method: string,
    path: string,
    rawQuery: string,
    headers: Readonly<Record<string, string>>,
    requestId: string,
    hooks: ExchangeHooks,
  ) {
    super(method, path, rawQuery, headers, requestId, hooks);
  }

  /** uWS closes after `end` when the client asked for it, but not after `endWithoutBody`. */
  private clientCloses(): boolean {
    return /\bclose\b/i.test(this.request.headers['connection'] ?? '');
  }

  protected writeWhole(body: Buffer | string | Uint8Array, close: boolean): void {
    this.res.cork(() => {
      this.writeHead();
      this.endBody(body, close);
    });
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

  protected writeStreamHead(): void {
    this.res.cork(() => this.writeHead());
  }

  protected writeStreamChunk(chunk: Buffer | string): boolean {
    let ok = true;
    this.res.cork(() => {
      ok = this.res.write(chunk);
    });
    return ok;
  }

  protected awaitWritable(): void {
    this.res.onWritable(() => {
      this.writableAgain();
      return true;
    });
  }

  protected writeStreamEnd(chunk: Buffer | string | undefined, close: boolean): void {
    this.res.cork(() => this.endBody(chunk ?? '', close));
  }

  attachBody(reader: BodyReader): void {
    this.res.onData((chunk, isLast) => reader.push(new Uint8Array(chunk), isLast, false));
  }

  remoteAddressText(): string {
    return textDecoder.decode(this.res.getRemoteAddressAsText());
  }

  pauseBody(): void {
    this.res.pause();
  }

  resumeBody(): void {
    this.res.resume();
  }

  forceClose(): void {
    this.res.close();
  }

  private writeHead(): void {
    // uWS writes `200 OK` itself when no status was written: one native call less per answer.
    if (this.statusCode !== 200) this.res.writeStatus(statusLine(this.statusCode));
    this.res.writeHeader('x-request-id', this.requestId);
    for (const [k, v] of this.headerList) this.res.writeHeader(k, v);
  }
}

const textDecoder = new TextDecoder();

interface WsData {
  route: WebSocketRoute;
  data: Record<string, unknown>;
  conn: WebSocketConnection | undefined;
}

export async function startUwsServer(
  core: HttpCore,
  options: HttpServerOptions,
  loaded: UwsBuild,
  info: TransportInfo,
): Promise<HttpServerHandle> {
  const uWS = loaded.uws;
  const app = uWS.App();
  const sockets = new Set<UwsWebSocket<WsData>>();

  for (const wsRoute of options.router.webSocketRoutes()) {
    app.ws<WsData>(wsRoute.pattern, {
      maxPayloadLength: wsRoute.options.maxPayloadBytes ?? 64 * 1024,
      maxBackpressure: wsRoute.options.maxBackpressureBytes ?? 1024 * 1024,
      idleTimeout: wsRoute.options.idleTimeoutS ?? 120,
      upgrade: (res, req, context) => {
        const exchange = openExchange(res, req, 'GET', core, options);
        if (!exchange) return;
        const { headers, path: url } = exchange.request;
        // uWS matched the route; a path it matched loosely (a trailing slash) binds no parameters.
        exchange.request.params = bindWebSocketPattern(wsRoute.pattern, url) ?? {};
        const key = headers['sec-websocket-key'] ?? '';
        const protocol = answeredSubprotocol(headers['sec-websocket-protocol']);
        const extensions = headers['sec-websocket-extensions'] ?? '';
        core.upgrade(exchange, wsRoute, (data) =>
          res.cork(() =>
            res.upgrade({ route: wsRoute, data, conn: undefined }, key, protocol, extensions, context),
          ),
        );
      },
      open: (ws) => {
        sockets.add(ws);
        core.socketOpened();
        const state = ws.getUserData();
        state.conn = wrapSocket(ws);
        state.route.handlers.open?.(state.conn);
      },
      message: (ws, message, isBinary) => {
        const state = ws.getUserData();
        state.route.handlers.message?.(state.conn!, Buffer.from(new Uint8Array(message)), isBinary);
      },
      drain: (ws) => {
        const state = ws.getUserData();
        state.route.handlers.drain?.(state.conn!);
      },
      close: (ws, code, reason) => {
        sockets.delete(ws);
        core.socketClosed();
        const state = ws.getUserData();
        if (state.conn) (state.conn as { closed: boolean }).closed = true;
        state.route.handlers.close?.(state.conn!, code, textDecoder.decode(reason));
      },
    });
  }

  app.any('/*', (res, req) => {
    const exchange = openExchange(res, req, undefined, core, options);
    if (exchange) core.handle(exchange);
  });

  const listenSocket = await new Promise<uWSTypes.us_listen_socket>((resolve, reject) => {
    app.listen(options.host, options.port, (socket) => {
      if (socket) resolve(socket);
      else
        reject(
          new Error(
            `${options.name}: cannot listen on ${options.host}:${options.port} (address in use or not permitted)`,
          ),
        );
    });
  });
  return core.serverHandle(
    uWS.us_socket_local_port(listenSocket),
    info,
    () => uWS.us_listen_socket_close(listenSocket),
    () => {
      for (const ws of sockets) ws.close();
      closeApp(app);
    },
  );
}

/**
 * Closes every connection the app still has: the keep-alive connections idle between requests,
 * which closing the listen socket leaves open. Left open, a request could still reach the
 * service after its stores closed, and the thread would end with live sockets (Node aborts in
 * uv_loop_close). Both installed builds have `TemplatedApp.close` (the v20.57 typings declare it;
 * the v20.30 binary has it although its typings omit it); it runs the abort handler of every
 * response still open.
 */
/**
 * Reads a request into an exchange, with its abort handler attached before anything that could
 * throw: uWS aborts the whole process when a handler returns (or throws) without answering and
 * without an abort handler. A request that cannot be read is answered 500 (undefined returned).
 * `method`: the one to record instead of the request's (a WebSocket upgrade is a GET).
 */
function openExchange(
  res: UwsResponse,
  req: uWSTypes.HttpRequest,
  method: string | undefined,
  core: HttpCore,
  options: HttpServerOptions,
): UwsExchange | undefined {
  let exchange: UwsExchange | undefined;
  let gone = false;
  res.onAborted(() => {
    gone = true;
    exchange?.handleAbort();
  });
  try {
    const headers: Record<string, string> = {};
    req.forEach((k, v) => (headers[k] = v));
    exchange = new UwsExchange(
      res,
      method ?? req.getCaseSensitiveMethod().toUpperCase(),
      req.getUrl(),
      req.getQuery() ?? '',
      headers,
      requestIdFrom(headers['x-request-id']),
      core.hooks,
    );
    return exchange;
  } catch (error) {
    options.log?.error({ err: error }, 'request could not be read');
    if (!gone) res.cork(() => res.writeStatus('500 Internal Server Error').end('', true));
    return undefined;
  }
}

function closeApp(app: uWSTypes.TemplatedApp): void {
  const closable = app as uWSTypes.TemplatedApp & { close?: () => void };
  closable.close?.();
}

function wrapSocket(ws: UwsWebSocket<WsData>): WebSocketConnection {
  const conn = {
    closed: false,
    get data() {
      return ws.getUserData().data;
    },
    send(message: string | Buffer, isBinary = false) {
      if (conn.closed) return false;
      return ws.send(message, isBinary) === 1;
    },
    bufferedAmount() {
      return conn.closed ? 0 : ws.getBufferedAmount();
    },
    close(code?: number, reason?: string) {
      if (conn.closed) return;
      conn.closed = true;
      if (code === undefined) ws.close();
      else ws.end(code, reason);
    },
  };
  return conn;
}
