// The HTTP front end of the service (every front-end thread): `POST /json` and
// `GET /healthcheck`. Public routes, as upstream: the spec shows no authentication here. The
// console's views (console-api.ts) are added beside them and need a key.

import type { Logger } from '../../core/log.js';
import type { HealthRegistry } from '../../core/health.js';
import {
  HttpError,
  Router,
  startHttpServer,
  type HttpResponse,
  type HttpServerHandle,
} from '../../core/http/index.js';
import type { HttpTransportSetting } from '../../core/settings/index.js';
import type { CorsPolicy } from '../../core/http/cors.js';
import type { RequestObserver } from '../../core/http/index.js';
import type { Authenticator } from '../../core/auth/types.js';
import type { Decider } from './decider.js';
import { answerJson, type JsonAnswer } from './json-endpoint.js';

export const errorBody = (e: { status: number; code: string; message: string; requestId: string }) => ({
  code: e.code,
  message: e.message,
  requestId: e.requestId,
});

export interface RatelimitHttpOptions {
  host: string;
  port: number;
  maxRequestBytes: number;
  decider: Decider;
  health: HealthRegistry;
  log: Logger;
  /** SLUICE_HTTP_TRANSPORT (default: read from the environment). */
  transport?: HttpTransportSetting;
  /** This front-end thread: every thread serves this port. */
  thread?: number;
  /** Adds routes beside the decision API (the web console). */
  extend?: (router: Router) => void;
  cors?: CorsPolicy | undefined;
  /** Checks keys on the routes that ask for a scope (the console's views); /json asks for none. */
  authenticator?: Authenticator;
  /** Request metrics and the access log (core/observe). */
  observer?: RequestObserver | undefined;
}

export function ratelimitRouter(decider: Decider, health: HealthRegistry): Router {
  const router = new Router();
  router.post(
    '/json',
    (req, res) => {
      // readBody answers inside the network callback when the body is complete: no promise hop
      // on the hot path with the memory store (a network store's promise is awaited below).
      req.readBody((bodyError, raw) => {
        if (bodyError) throw bodyError;
        const answer = answerJson(decider, raw, req.headers['traceparent']);
        if (answer instanceof Promise) {
          answer.then(
            (a) => send(res, a),
            (error: unknown) => {
              if (error instanceof HttpError) res.error(error.status, error.code, error.message);
              else res.error(500, 'internal', `rate limit decision failed: ${String(error)}`);
            },
          );
        } else {
          send(res, answer);
        }
      });
    },
    { scope: false },
  );
  router.get(
    '/healthcheck',
    (_req, res) => {
      const snapshot = health.snapshot();
      if (snapshot.healthy) {
        res.header('content-type', 'text/plain; charset=utf-8').send('OK', 200);
        return;
      }
      const failing = Object.entries(snapshot.components)
        .filter(([, ok]) => !ok)
        .map(([name]) => name);
      res.header('content-type', 'text/plain; charset=utf-8').send(`unhealthy: ${failing.join(', ')}\n`, 500);
    },
    { scope: false },
  );
  return router;
}

function send(res: HttpResponse, answer: JsonAnswer): void {
  res.header('content-type', 'application/json').send(answer.body, answer.status);
}

export function startRatelimitHttp(options: RatelimitHttpOptions): Promise<HttpServerHandle> {
  const router = ratelimitRouter(options.decider, options.health);
  options.extend?.(router);
  return startHttpServer({
    name: 'ratelimit',
    host: options.host,
    port: options.port,
    router,
    ...(options.cors ? { cors: options.cors } : {}),
    ...(options.authenticator ? { authenticator: options.authenticator, defaultScope: false } : {}),
    errorBody,
    maxBodyBytes: options.maxRequestBytes,
    log: options.log,
    ...(options.transport === undefined ? {} : { transport: options.transport }),
    ...(options.thread === undefined ? {} : { thread: options.thread }),
    observer: options.observer,
  });
}
