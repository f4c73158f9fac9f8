// The reference's ApiErrorEnvelope: {issues:[{field,message,code,severity}], requestId, hint?}.

import type { ErrorBodyFactory } from '../../core/http/index.js';
import { asStorageFull } from '../../core/disk/reserve.js';
import { HttpError } from '../../core/http/index.js';
import { ApiError, type Issue } from '../errors.js';

const HINTS: Record<number, string> = {
  401: 'Send Authorization: Bearer <API key>.',
  403: 'The API key needs the scope automation:read (GET) or automation:write (other methods).',
  413: 'The request body is larger than this service accepts; see AUTOMATION_MAX_UPLOAD_BYTES.',
  429: 'Retry after the number of seconds in the Retry-After header.',
  507: 'The server is out of disk space for this store; nothing was stored. Retry once space is freed.',
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

/**
 * A write that failed for want of space, as a StorageFullError naming the store: PostgreSQL's
 * disk_full (SQLSTATE 53100) names the database, anything else the data directory (`dataDir`).
 */
export function storageFailure(err: unknown, dataDir: string): unknown {
  if ((err as { code?: unknown } | null)?.code === '53100')
    return asStorageFull(err, 'automation database (PostgreSQL)', 'AUTOMATION_DATABASE_URL');
  return asStorageFull(err, 'automation store', dataDir);
}
