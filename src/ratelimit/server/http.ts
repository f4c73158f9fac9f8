// The HTTP front end of the service (every front-end thread): `POST /json` and
// `GET /healthcheck`. Public routes, as upstream: the spec shows no authentication here.

import { isUtf8 } from 'node:buffer';
import type { Logger } from '../../core/log.js';
import type { HealthRegistry } from '../../core/health.js';
import {
  HttpError,
  Router,
  startHttpServer,
  type HttpResponse,
  type HttpServerHandle,
} from '../../core/http/index.js';
import { RateLimitRequestError, Code, type RateLimitRequest, type RateLimitResponse } from '../types.js';
import type { Decider } from './decider.js';
import { decodeRequest, encodeResponse, JsonRequestError } from './json-codec.js';

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
        // Go's protojson refuses invalid UTF-8; decoding it with replacement characters would
        // count the request under a different descriptor value. One native scan of the body.
        if (!isUtf8(raw)) throw new HttpError(400, 'bad_request', 'request body is not valid UTF-8');
        let request;
        try {
          request = decodeRequest(JSON.parse(raw.toString('utf8')) as unknown);
        } catch (error) {
          if (error instanceof SyntaxError)
            throw new HttpError(400, 'bad_request', `request body is not valid JSON: ${error.message}`);
          if (error instanceof JsonRequestError) throw new HttpError(400, 'bad_request', error.message);
          throw error;
        }
        const result = decide(decider, request, req.headers['traceparent']);
        if (result instanceof Promise) {
          result.then(
            (response) => answer(res, response),
            (error: unknown) => {
              const failure = asHttpError(error);
              if (failure instanceof HttpError) res.error(failure.status, failure.code, failure.message);
              else res.error(500, 'internal', `rate limit decision failed: ${String(failure)}`);
            },
          );
        } else {
          answer(res, result);
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

function decide(
  decider: Decider,
  request: RateLimitRequest,
  traceparent: string | undefined,
): RateLimitResponse | Promise<RateLimitResponse> {
  try {
    return decider.decide(request, 'json', traceparent);
  } catch (error) {
    throw asHttpError(error);
  }
}

/** Refused calls are the caller's problem (empty domain, no configuration …): 400 with the
 * upstream text, never a 5xx for anything the request contained; a failed store is a 500. */
function asHttpError(error: unknown): unknown {
  if (error instanceof RateLimitRequestError && error.kind === 'store_error')
    return new HttpError(500, 'store_unavailable', error.message);
  if (error instanceof RateLimitRequestError) return new HttpError(400, 'bad_request', error.message);
  return error;
}

function answer(res: HttpResponse, response: RateLimitResponse): void {
  res
    .header('content-type', 'application/json')
    .send(encodeResponse(response), response.overallCode === Code.OVER_LIMIT ? 429 : 200);
}

export function startRatelimitHttp(options: RatelimitHttpOptions): Promise<HttpServerHandle> {
  return startHttpServer({
    name: 'ratelimit',
    host: options.host,
    port: options.port,
    router: ratelimitRouter(options.decider, options.health),
    errorBody,
    maxBodyBytes: options.maxRequestBytes,
    log: options.log,
  });
}
