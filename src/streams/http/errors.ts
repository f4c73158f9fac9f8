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

/** Lets handlers throw StreamsError; the core only turns HttpError into a 4xx. */
export function handler(fn: (req: HttpRequest, res: HttpResponse) => Promise<void> | void): Handler {
  return async (req, res) => {
    try {
      await fn(req, res);
    } catch (error) {
      if (error instanceof StreamsError) throw toHttpError(error);
      throw error;
    }
  };
}
