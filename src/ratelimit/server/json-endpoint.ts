// The `/json` exchange without the network: request bytes in, status and response text out.
// The HTTP route (http.ts) runs it inside uWS's body callback; bench/ measures it in process.

import { isUtf8 } from 'node:buffer';
import { HttpError } from '../../core/http/types.js';
import { Code, RateLimitRequestError, type RateLimitRequest, type RateLimitResponse } from '../types.js';
import type { Decider } from './decider.js';
import { decodeRequest, encodeResponse, JsonRequestError } from './json-codec.js';

export interface JsonAnswer {
  /** 200, or 429 when the overall code is OVER_LIMIT. */
  readonly status: number;
  /** proto3 JSON of the RateLimitResponse. */
  readonly body: string;
}

/**
 * Decides one `/json` body. Bodies the caller got wrong (not UTF-8, not JSON, wrong shape, a
 * refused call) throw — or reject with — an HttpError 400; a failed shared store is a 500.
 */
export function answerJson(
  decider: Decider,
  raw: Buffer,
  traceparent?: string,
): JsonAnswer | Promise<JsonAnswer> {
  // Go's protojson refuses invalid UTF-8; decoding it with replacement characters would
  // count the request under a different descriptor value. One native scan of the body.
  const request = decodeJsonBody(raw);
  let result: RateLimitResponse | Promise<RateLimitResponse>;
  try {
    result = decider.decide(request, 'json', traceparent);
  } catch (error) {
    throw asHttpError(error);
  }
  if (result instanceof Promise)
    return result.then(toAnswer, (error: unknown) => {
      throw asHttpError(error);
    });
  return toAnswer(result);
}

/** A `/json` body as a request; 400 for anything the client got wrong (also used by dry runs). */
export function decodeJsonBody(raw: Buffer): RateLimitRequest {
  if (!isUtf8(raw)) throw new HttpError(400, 'bad_request', 'request body is not valid UTF-8');
  try {
    return decodeRequest(JSON.parse(raw.toString('utf8')) as unknown);
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new HttpError(400, 'bad_request', `request body is not valid JSON: ${error.message}`);
    if (error instanceof JsonRequestError) throw new HttpError(400, 'bad_request', error.message);
    throw error;
  }
}

function toAnswer(response: RateLimitResponse): JsonAnswer {
  return {
    status: response.overallCode === Code.OVER_LIMIT ? 429 : 200,
    body: encodeResponse(response),
  };
}

/** Refused calls are the caller's problem (empty domain, no configuration …): 400 with the
 * upstream text, never a 5xx for anything the request contained; a failed store is a 500. */
export function asHttpError(error: unknown): unknown {
  if (error instanceof RateLimitRequestError && error.kind === 'store_error')
    return new HttpError(500, 'store_unavailable', error.message);
  if (error instanceof RateLimitRequestError) return new HttpError(400, 'bad_request', error.message);
  return error;
}
