// Confluent-style error bodies: {error_code, message}. Our own failures carry a five-digit code;
// the core's (404 route, 405, 413, 415, 400 bad JSON, 401/403) get the code Confluent uses for
// them (40101/40301) or the HTTP status, as rest-utils does for generic errors. A write refused for
// want of disk space (the core's 507, StorageFullError) is 50701.

import {
  HttpError,
  type ErrorBodyFactory,
  type Handler,
  type HttpRequest,
  type HttpResponse,
} from '../../core/http/index.js';
import { ErrorCodes, StreamsError } from '../errors.js';

export const streamsErrorBody: ErrorBodyFactory = ({ status, code, message }) => ({
  error_code: /^\d{3,5}$/.test(code)
    ? Number(code)
    : status === 401
      ? 40101
      : status === 403
        ? 40301
        : status === 507
          ? ErrorCodes.storageFull
          : status,
  message,
});

export function toHttpError(error: StreamsError): HttpError {
  return new HttpError(error.status, String(error.errorCode), error.message);
}

/**
 * Lets handlers throw StreamsError; the core only turns HttpError into a 4xx (as application/json).
 * With `errorType`, a 4xx a handler throws is answered here in that media type instead: the
 * Confluent paths answer errors in their own type, as rest-utils' mappers do. Other failures
 * (a 5xx, a full disk) still go to the core, which logs them.
 */
export function handler(
  fn: (req: HttpRequest, res: HttpResponse) => Promise<void> | void,
  errorType?: string,
): Handler {
  return async (req, res) => {
    try {
      await fn(req, res);
    } catch (error) {
      const http = error instanceof StreamsError ? toHttpError(error) : error;
      if (errorType === undefined || !(http instanceof HttpError) || http.status >= 500 || res.sent)
        throw http;
      if (http.headers) for (const [name, value] of Object.entries(http.headers)) res.header(name, value);
      const body = streamsErrorBody({
        status: http.status,
        code: http.code,
        message: http.message,
        requestId: '',
      });
      res.header('content-type', errorType).json(body, http.status);
    }
  };
}
