// Service-level errors with the reference's issue codes; the HTTP layer maps them to statuses.

export interface Issue {
  field: string;
  message: string;
  code: string;
  severity?: 'error' | 'warning';
}

export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly issues: Issue[] = [],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export const notFound = (what: string, field = '<root>') =>
  new ServiceError(404, 'not_found', `${what} not found`, [
    { field, message: `${what} not found`, code: 'not_found' },
  ]);

export const invalid = (field: string, message: string, code = 'invalid_value') =>
  new ServiceError(400, code, message, [{ field, message, code }]);
