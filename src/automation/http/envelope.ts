// The reference's ApiErrorEnvelope: {issues:[{field,message,code,severity}], requestId, hint?}.

import type { ErrorBodyFactory } from '../../core/http/index.js';
import { HttpError } from '../../core/http/index.js';
import { ApiError, type Issue } from '../errors.js';

const HINTS: Record<number, string> = {
  401: 'Send Authorization: Bearer <API key>.',
  403: 'The API key needs the scope automation:read (GET) or automation:write (other methods).',
  413: 'The request body is larger than this service accepts; see AUTOMATION_MAX_UPLOAD_BYTES.',
  429: 'Retry after the number of seconds in the Retry-After header.',
};

export const errorBody: ErrorBodyFactory = ({ status, code, message, requestId, details }) => {
  const given = (details as { issues?: Issue[] } | undefined)?.issues;
  const issues = (given && given.length > 0 ? given : [{ field: '<root>', message, code }]).map((i) => ({
    field: i.field,
    message: i.message,
    code: i.code,
    severity: i.severity ?? 'error',
  }));
  const body: Record<string, unknown> = { issues, requestId };
  const hint = HINTS[status];
  if (hint) body['hint'] = hint;
  body['docsUrl'] = '/api/v1/openapi.json';
  return body;
};

export function toHttpError(err: unknown): unknown {
  if (err instanceof ApiError)
    return new HttpError(err.status, err.code, err.message, { issues: err.issues }, err.headers);
  return err;
}
