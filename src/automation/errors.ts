// API errors with the reference's issue codes and an HTTP status; the HTTP layer answers them
// with the error envelope.

import { CodedError } from '../core/errors.js';

export interface Issue {
  field: string;
  message: string;
  code: string;
  severity?: 'error' | 'warning';
}

export class ApiError extends CodedError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    readonly issues: Issue[] = [],
    readonly headers?: Record<string, string>,
  ) {
    super(code, message);
  }
}

export const notFound = (what: string, field = '<root>') =>
  new ApiError(404, 'not_found', `${what} not found`, [
    { field, message: `${what} not found`, code: 'not_found' },
  ]);

export const invalid = (field: string, message: string, code = 'invalid_value') =>
  new ApiError(400, code, message, [{ field, message, code }]);
