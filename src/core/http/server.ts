// The uWS server: one App per service per thread, one catch-all uWS route that dispatches through
// our Router (so 404/405 bodies and headers are ours), auth before the handler, the error
// envelope for every failure, request ids, and a draining close that stops listening first
// (uWS aborts the process if it exits with live listen sockets).

import uWS from 'uWebSockets.js';
import type { Logger } from '../log.js';
import {
  AUTH_CHALLENGE,
  BASIC_CHALLENGE,
  bearerFromSubprotocols,
  parseAuthorization,
} from '../auth/credentials.js';
import { hasScope, type Authenticator } from '../auth/types.js';
import { requestIdFrom } from '../ids.js';
import { BodyReader, tooLarge } from './body.js';
import { corsFor, type CorsPolicy } from './cors.js';
import { Exchange } from './exchange.js';
import { safeDecode, type Router } from './router.js';
import { HttpError, type ErrorBodyFactory, type WebSocketConnection } from './types.js';

export interface HttpServerOptions {
  /** Service name, used in logs. */
  name: string;
  host: string;
  /** 0 picks a free port. */
  port: number;
  router: Router;
  errorBody: ErrorBodyFactory;
  /** Default request body limit (bytes); routes may override. Default 1 MiB. */
  maxBodyBytes?: number;
  /** When given, every route requires a bearer key unless its options say `scope: false`. */
  authenticator?: Authenticator;
  /** Scope required by routes that name none; a function may pick it by method. */
  defaultScope?: string | false | ((method: string) => string | false);
  log?: Logger;
  /** Origins of other pages allowed to call this server (the console under `sluice serve`). */
  cors?: CorsPolicy;
}

export interface HttpServerHandle {
  readonly host: string;
  readonly port: number;
  readonly url: string;
  /** Stops listening, lets in-flight requests finish for up to `graceMs`, then closes what is left. */
  close(graceMs?: number): Promise<void>;
}

const DEFAULT_MAX_BODY = 1024 * 1024;
const textDecoder = new TextDecoder();

export async function startHttpServer(options: HttpServerOptions): Promise<HttpServerHandle> {
  const app = uWS.App();
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const log = options.log;
  const inflight = new Set<Exchange>();
  const sockets = new Set<uWS.WebSocket<WsData>>();
  let draining = false;
  let drained: (() => void) | undefined;

  const hooks = {
    errorBody: options.errorBody,
    draining: () => draining,
    finished(exchange: Exchange) {
      inflight.delete(exchange);
      if (draining && inflight.size === 0) drained?.();
    },
    failed(exchange: Exchange, error: unknown) {
      answerError(exchange, error);
    },
  };

  const authenticate = (exchange: Exchange, scope: string | false): HttpError | undefined => {
    if (!options.authenticator || scope === false) return undefined;
    const credentials = parseAuthorization(exchange.request.headers['authorization']);
    if (credentials.kind === 'missing') {
      return new HttpError(
        401,
        'unauthorized',
        'missing API key: send Authorization: Bearer <API key> (or HTTP Basic with the key as the password)',
        undefined,
        { 'www-authenticate': AUTH_CHALLENGE },
      );
    }
    if (credentials.kind === 'malformed') {
      return new HttpError(401, 'unauthorized', credentials.reason, undefined, {
        'www-authenticate': BASIC_CHALLENGE,
      });
    }
    const principal = options.authenticator.authenticate(credentials.key);
    if (!principal) {
      return new HttpError(401, 'unauthorized', 'invalid or revoked API key', undefined, {
        'www-authenticate': credentials.scheme === 'basic' ? BASIC_CHALLENGE : 'Bearer error="invalid_token"',
      });
    }
    if (!hasScope(principal, scope)) {
      return new HttpError(403, 'forbidden', `this API key lacks the scope ${scope}`);
    }
    exchange.request.principal = principal;
    return undefined;
  };

  const scopeFor = (method: string, routeScope: string | false | undefined): string | false => {
    if (routeScope !== undefined) return routeScope;
    const def = options.defaultScope;
    if (typeof def === 'function') return def(method);
    return def ?? false;
  };

  const runHandler = (exchange: Exchange, handler: () => void | Promise<void>): void => {
    let result: void | Promise<void>;
    try {
      result = handler();
    } catch (error) {
      answerError(exchange, error);
      return;
    }
    if (result && typeof result.then === 'function') {
      result.then(undefined, (error: unknown) => answerError(exchange, error));
    }
  };

  const answerError = (exchange: Exchange, error: unknown): void => {
    if (error instanceof HttpError) {
      if (exchange.sent) return;
      exchange.fail(error);
      return;
    }
    log?.error(
      { err: error, requestId: exchange.requestId, path: exchange.request.path },
      'request handler failed',
    );
    if (!exchange.sent)
      exchange.error(
        500,
        'internal',
        'internal server error; see the server log for request ' + exchange.requestId,
      );
  };

  for (const wsRoute of options.router.webSocketRoutes()) {
    app.ws<WsData>(wsRoute.pattern, {
      maxPayloadLength: wsRoute.options.maxPayloadBytes ?? 64 * 1024,
      maxBackpressure: wsRoute.options.maxBackpressureBytes ?? 1024 * 1024,
      idleTimeout: wsRoute.options.idleTimeoutS ?? 120,
      upgrade: (res, req, context) => {
        const headers: Record<string, string> = {};
        req.forEach((k, v) => (headers[k] = v));
        // A browser's key comes as a subprotocol (credentials.ts); the answer then names only
        // the plain protocol, and the key is handled as if it came in an Authorization header.
        const subprotocolKey = bearerFromSubprotocols(headers['sec-websocket-protocol']);
        if (subprotocolKey) {
          headers['sec-websocket-protocol'] = subprotocolKey.reply;
          if (headers['authorization'] === undefined)
            headers['authorization'] = `Bearer ${subprotocolKey.key}`;
        }
        const url = req.getUrl();
        const exchange = new Exchange(
          res,
          'GET',
          url,
          req.getQuery() ?? '',
          headers,
          requestIdFrom(headers['x-request-id']),
          hooks,
        );
        // onAborted first: uWS aborts the process if a handler returns without it and without answering.
        res.onAborted(() => exchange.handleAbort());
        inflight.add(exchange);
        exchange.request.params = paramsFromPattern(wsRoute.pattern, url);
        const key = headers['sec-websocket-key'] ?? '';
        const protocol = headers['sec-websocket-protocol'] ?? '';
        const extensions = headers['sec-websocket-extensions'] ?? '';
        runHandler(exchange, async () => {
          const denied = authenticate(exchange, scopeFor('GET', wsRoute.options.scope));
          if (denied) return exchange.fail(denied);
          const data = await wsRoute.handlers.upgrade(exchange.request);
          if (exchange.aborted) return;
          exchange.sent = true;
          res.cork(() =>
            res.upgrade({ route: wsRoute, data, conn: undefined }, key, protocol, extensions, context),
          );
          inflight.delete(exchange);
        });
      },
      open: (ws) => {
        sockets.add(ws);
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
        const state = ws.getUserData();
        if (state.conn) (state.conn as { closed: boolean }).closed = true;
        state.route.handlers.close?.(state.conn!, code, textDecoder.decode(reason));
      },
    });
  }

  app.any('/*', (res, req) => {
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const headers: Record<string, string> = {};
    req.forEach((k, v) => (headers[k] = v));
    const exchange = new Exchange(
      res,
      method,
      path,
      req.getQuery() ?? '',
      headers,
      requestIdFrom(headers['x-request-id']),
      hooks,
    );
    inflight.add(exchange);
    res.onAborted(() => exchange.handleAbort());

    if (options.cors) {
      const cors = corsFor(options.cors, method, headers);
      if (cors) {
        for (const [k, v] of cors.headers) exchange.header(k, v);
        if (cors.preflight) {
          if (cors.allowed) return exchange.send(undefined, 204);
          return exchange.error(
            403,
            'forbidden',
            `cross-origin calls from ${headers['origin']} are not allowed`,
          );
        }
      }
    }

    const match = options.router.match(method, path);
    if (match.kind === 'not-found') {
      return exchange.error(404, 'not_found', `no route for ${method} ${path}`);
    }
    if (match.kind === 'method-not-allowed') {
      exchange.header('allow', match.allow.join(', '));
      return exchange.error(
        405,
        'method_not_allowed',
        `${method} is not allowed on ${path}; allowed: ${match.allow.join(', ')}`,
      );
    }
    const { route, params } = match;
    exchange.request.params = params;

    const declared = headers['content-length'];
    const hasBody =
      (declared !== undefined && declared !== '0') || headers['transfer-encoding'] !== undefined;

    // The key is checked before any body byte is read, so a client without one cannot make the
    // server buffer up to the route's limit. A refused request's body is never read: its
    // connection closes after the answer, so the unread bytes cannot be taken as a request.
    let denied: HttpError | undefined;
    try {
      denied = authenticate(exchange, scopeFor(method, route.options.scope));
    } catch (error) {
      if (hasBody) exchange.closeAfterResponse();
      return answerError(exchange, error);
    }
    if (denied) {
      if (hasBody) exchange.closeAfterResponse();
      return exchange.fail(denied);
    }

    if (hasBody) {
      const limit = route.options.maxBodyBytes ?? maxBody;
      if (declared !== undefined && Number(declared) > limit) {
        return exchange.closeAfterResponse().fail(tooLarge(limit));
      }
      const reader = new BodyReader(res, limit, (error) => {
        if (!exchange.sent) exchange.closeAfterResponse().fail(error);
      });
      reader.attach();
      exchange.request.setBodyReader(reader);
    }

    runHandler(exchange, () => route.handler(exchange.request, exchange));
  });

  const listenSocket = await new Promise<uWS.us_listen_socket>((resolve, reject) => {
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
  const port = uWS.us_socket_local_port(listenSocket);
  const displayHost = options.host === '0.0.0.0' || options.host === '::' ? '127.0.0.1' : options.host;
  let closed = false;

  return {
    host: options.host,
    port,
    url: `http://${displayHost.includes(':') ? `[${displayHost}]` : displayHost}:${port}`,
    async close(graceMs = 10_000) {
      if (closed) return;
      closed = true;
      uWS.us_listen_socket_close(listenSocket);
      draining = true;
      if (inflight.size > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, graceMs).unref();
        });
      }
      for (const exchange of inflight) {
        if (!exchange.aborted) exchange.res.close();
      }
      for (const ws of sockets) ws.close();
      log?.debug({ service: options.name }, 'http server closed');
    },
  };
}

interface WsData {
  route: import('./router.js').WebSocketRoute;
  data: Record<string, unknown>;
  conn: WebSocketConnection | undefined;
}

function wrapSocket(ws: uWS.WebSocket<WsData>): WebSocketConnection {
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

/** Binds `:name` segments of a uWS pattern against a concrete path. */
function paramsFromPattern(pattern: string, path: string): Record<string, string> {
  const names = pattern.split('/');
  const values = path.split('/');
  const params: Record<string, string> = {};
  names.forEach((name, i) => {
    if (name.startsWith(':')) params[name.slice(1)] = safeDecode(values[i] ?? '');
  });
  return params;
}
