// What every transport shares once a request has arrived: routing through our Router (so 404/405
// bodies and headers are ours), auth before the handler and before any body byte is read, body
// limits, the error envelope for every failure, and the bookkeeping of a draining close. A
// transport builds an Exchange for each request and hands it to `handle` (or to `upgrade` for a
// WebSocket request); the behaviour a client sees therefore cannot differ between transports.

import {
  AUTH_CHALLENGE,
  BASIC_CHALLENGE,
  bearerFromSubprotocols,
  parseAuthorization,
} from '../auth/credentials.js';
import { hasScope } from '../auth/types.js';
import { BodyReader, tooLarge } from './body.js';
import { corsFor } from './cors.js';
import { RefusalLog } from './refusal-log.js';
import type { Exchange, ExchangeHooks } from './exchange.js';
import { NO_ROUTE, type RequestObserver } from './observer.js';
import type { WebSocketRoute } from './router.js';
import type { HttpServerHandle, HttpServerOptions } from './server.js';
import { displayUrl, type TransportInfo } from './transport.js';
import { HttpError } from './types.js';
import { StorageFullError } from '../disk/reserve.js';

const DEFAULT_MAX_BODY = 1024 * 1024;

/**
 * The subprotocol a WebSocket answer names: a browser offering its key as a subprotocol
 * (credentials.ts) gets the plain protocol back, never the key; otherwise the first offered.
 */
export function answeredSubprotocol(offered: string | undefined): string {
  const key = bearerFromSubprotocols(offered);
  if (key) return key.reply;
  return offered?.split(',')[0]?.trim() ?? '';
}

/** 507 Insufficient Storage, naming the store; `details.store` reaches error bodies that show it. */
export function insufficientStorage(error: StorageFullError): HttpError {
  return new HttpError(507, error.code, error.message, { store: error.store });
}

/** The servers of this thread that are draining now (a forced stop cuts their wait short). */
const drainingCores = new Set<HttpCore>();

/**
 * Ends every draining wait of this thread at once: in-flight requests are closed now instead of
 * at the end of the grace, so the servers' closes finish and the thread can end by itself (a
 * second stop signal). A server that starts draining afterwards drains without a wait.
 */
export function endDrainsNow(): void {
  drainsCut = true;
  for (const core of drainingCores) core.cutDrain();
}
let drainsCut = false;

export class HttpCore {
  readonly inflight = new Set<Exchange>();
  /**
   * Handlers whose promise has not settled yet. A handler may go on after its answer is out
   * (or after its client left); the drain waits for it too, so no handler still uses a store
   * when the service closes it.
   */
  private handlersRunning = 0;
  readonly hooks: ExchangeHooks;
  private readonly maxBody: number;
  private readonly refusals: RefusalLog;
  private isDraining = false;
  private drained: (() => void) | undefined;
  private readonly observer: RequestObserver | undefined;

  constructor(readonly options: HttpServerOptions) {
    this.maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
    const observer = (this.observer = options.observer);
    this.refusals = new RefusalLog(options.log, options.name);
    this.hooks = {
      errorBody: options.errorBody,
      draining: () => this.isDraining,
      started: observer ? () => observer.requestStarted() : () => undefined,
      finished: (exchange) => {
        this.inflight.delete(exchange);
        if (observer) this.observe(observer, exchange);
        this.settleDrain();
      },
      failed: (exchange, error) => this.answerError(exchange, error),
    };
  }

  get draining(): boolean {
    return this.isDraining;
  }

  /** A WebSocket was accepted (the transports call this and socketClosed, once each). */
  socketOpened(): void {
    this.observer?.socketOpened();
  }

  socketClosed(): void {
    this.observer?.socketClosed();
  }

  private observe(observer: RequestObserver, exchange: Exchange): void {
    const request = exchange.request;
    observer.requestFinished({
      method: request.method,
      route: exchange.route || NO_ROUTE,
      status: exchange.sent || exchange.statusSent === 101 ? exchange.statusSent : 499,
      durationSeconds: (performance.now() - exchange.startedAt) / 1000,
      bytes: exchange.bytesWritten,
      requestId: exchange.requestId,
      tenant: request.principal?.tenant,
    });
  }

  /**
   * A request that arrives once the close has begun: on a connection kept alive from before
   * (uWS and node:http both keep serving those after they stop listening). Its handler must not
   * run — the service is about to close the stores it would use — so it gets a 503 and its
   * connection closes.
   */
  private refuseWhileClosing(exchange: Exchange): void {
    exchange
      .closeAfterResponse()
      .header('retry-after', '1')
      .error(503, 'shutting_down', `the ${this.options.name} service is shutting down; retry`);
  }

  /** An HTTP request whose head has arrived: route, authenticate, attach the body, run the handler. */
  handle(exchange: Exchange): void {
    this.inflight.add(exchange);
    if (this.isDraining) return this.refuseWhileClosing(exchange);
    const { method, path, headers } = exchange.request;
    if (this.options.cors) {
      const cors = corsFor(this.options.cors, method, headers);
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
    const match = this.options.router.match(method, path);
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
    exchange.route = route.pattern;

    const declared = headers['content-length'];
    const hasBody =
      (declared !== undefined && declared !== '0') || headers['transfer-encoding'] !== undefined;

    // The key is checked before any body byte is read, so a client without one cannot make the
    // server buffer up to the route's limit. A refused request's body is never read: its
    // connection closes after the answer, so the unread bytes cannot be taken as a request.
    let denied: HttpError | undefined;
    try {
      denied = this.authenticate(exchange, route.pattern, this.scopeFor(method, route.options.scope));
    } catch (error) {
      if (hasBody) exchange.closeAfterResponse();
      return this.answerError(exchange, error);
    }
    if (denied) {
      if (hasBody) exchange.closeAfterResponse();
      return exchange.fail(denied);
    }

    if (hasBody) {
      const limit = route.options.maxBodyBytes ?? this.maxBody;
      if (declared !== undefined && Number(declared) > limit) {
        return exchange.closeAfterResponse().fail(tooLarge(limit));
      }
      const reader = new BodyReader(exchange, limit, (error) => {
        if (!exchange.sent) exchange.closeAfterResponse().fail(error);
      });
      exchange.attachBody(reader);
      exchange.request.setBodyReader(reader);
    }

    this.run(exchange, () => route.handler(exchange.request, exchange));
  }

  /**
   * A WebSocket upgrade request for `route` (params already bound): authenticate, ask the
   * route's `upgrade` handler for the socket's data, then `accept` it — unless the client left
   * or the handler refused (that answer goes out through the exchange).
   */
  upgrade(exchange: Exchange, route: WebSocketRoute, accept: (data: Record<string, unknown>) => void): void {
    this.inflight.add(exchange);
    exchange.route = route.pattern;
    if (this.isDraining) return this.refuseWhileClosing(exchange);
    // Browsers cannot set an Authorization header on a WebSocket; their key may come as a
    // subprotocol instead (credentials.ts), taken as if it were that header.
    const headers = exchange.request.headers;
    const offered = bearerFromSubprotocols(headers['sec-websocket-protocol']);
    const authorization = headers['authorization'] ?? (offered ? `Bearer ${offered.key}` : undefined);
    this.run(exchange, async () => {
      const denied = this.authenticate(
        exchange,
        route.pattern,
        this.scopeFor('GET', route.options.scope),
        authorization,
      );
      if (denied) return exchange.fail(denied);
      const data = await route.handlers.upgrade(exchange.request);
      if (exchange.aborted) return;
      exchange.sent = true;
      accept(data);
      exchange.upgraded();
    });
  }

  /**
   * Marks the server draining (answers from now on close their connection, and a request that
   * arrives now is refused with 503), waits up to `graceMs` for in-flight requests and running
   * handlers, then closes the connections of the requests still open. The transport stops
   * listening before calling this.
   */
  async drain(graceMs: number): Promise<void> {
    this.isDraining = true;
    if (!this.idle() && !drainsCut) {
      drainingCores.add(this);
      await new Promise<void>((resolve) => {
        this.drained = resolve;
        setTimeout(resolve, graceMs).unref();
      });
      drainingCores.delete(this);
    }
    for (const exchange of this.inflight) {
      if (!exchange.aborted) exchange.forceClose();
    }
  }

  private idle(): boolean {
    return this.inflight.size === 0 && this.handlersRunning === 0;
  }

  /** Ends the draining wait once no request is in flight and no handler runs. */
  private settleDrain(): void {
    if (this.isDraining && this.idle()) this.drained?.();
  }

  /** Ends this server's draining wait now (see endDrainsNow). */
  cutDrain(): void {
    this.drained?.();
  }

  /**
   * The handle a transport returns. Its close runs once: `stopListening`, the draining wait,
   * then `closeRest` for what is still open (WebSockets, idle connections).
   */
  serverHandle(
    port: number,
    transport: TransportInfo,
    stopListening: () => void,
    closeRest: () => void,
  ): HttpServerHandle {
    const { host, name, log } = this.options;
    let closed = false;
    return {
      host,
      port,
      url: displayUrl(host, port),
      listening: true,
      transport,
      close: async (graceMs = 10_000) => {
        if (closed) return;
        closed = true;
        stopListening();
        await this.drain(graceMs);
        closeRest();
        log?.debug({ service: name }, 'http server closed');
      },
    };
  }

  answerError(exchange: Exchange, error: unknown): void {
    if (error instanceof HttpError) {
      if (exchange.sent) return;
      exchange.fail(error);
      return;
    }
    if (error instanceof StorageFullError) {
      // A refusal by the reserve is logged once by the reserve (reserve.ts); a write that failed
      // for want of space is logged here, each time.
      const fields = { store: error.store, path: error.path, requestId: exchange.requestId };
      if (error.cause === undefined) this.options.log?.debug(fields, 'write refused: insufficient storage');
      else this.options.log?.warn({ ...fields, err: error.cause }, 'write failed: insufficient storage');
      if (!exchange.sent) exchange.fail(insufficientStorage(error));
      return;
    }
    this.options.log?.error(
      { err: error, requestId: exchange.requestId, path: exchange.request.path },
      'request handler failed',
    );
    if (!exchange.sent)
      exchange.error(
        500,
        'internal',
        'internal server error; see the server log for request ' + exchange.requestId,
      );
  }

  private run(exchange: Exchange, handler: () => void | Promise<void>): void {
    let result: void | Promise<void>;
    try {
      result = handler();
    } catch (error) {
      this.answerError(exchange, error);
      return;
    }
    if (result && typeof result.then === 'function') {
      this.handlersRunning++;
      const done = () => {
        this.handlersRunning--;
        this.settleDrain();
      };
      result.then(undefined, (error: unknown) => this.answerError(exchange, error)).then(done, done);
    }
  }

  private authenticate(
    exchange: Exchange,
    route: string,
    scope: string | false,
    authorization = exchange.request.headers['authorization'],
  ): HttpError | undefined {
    const authenticator = this.options.authenticator;
    if (!authenticator || scope === false) return undefined;
    const credentials = parseAuthorization(authorization);
    const method = exchange.request.method;
    if (credentials.kind !== 'key') {
      this.refusals.note({ method, route, reason: credentials.kind, token: undefined });
    }
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
    const principal = authenticator.authenticate(credentials.key);
    if (!principal) {
      const reason = authenticator.refusal(credentials.key);
      this.refusals.note({ method, route, reason, token: credentials.key });
      return new HttpError(401, 'unauthorized', 'invalid or revoked API key', undefined, {
        'www-authenticate': credentials.scheme === 'basic' ? BASIC_CHALLENGE : 'Bearer error="invalid_token"',
      });
    }
    if (!hasScope(principal, scope)) {
      this.refusals.note({ method, route, reason: 'scope', scope, token: credentials.key });
      return new HttpError(403, 'forbidden', `this API key lacks the scope ${scope}`);
    }
    exchange.request.principal = principal;
    return undefined;
  }

  private scopeFor(method: string, routeScope: string | false | undefined): string | false {
    if (routeScope !== undefined) return routeScope;
    const def = this.options.defaultScope;
    if (typeof def === 'function') return def(method);
    return def ?? false;
  }
}
