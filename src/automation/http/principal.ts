// Helpers for handlers: the caller's principal and tenant-scoped lookups.

import type { HttpRequest } from '../../core/http/index.js';
import { HttpError } from '../../core/http/index.js';
import type { Principal } from '../../core/auth/types.js';

export function principalOf(req: HttpRequest): Principal {
  if (!req.principal)
    throw new HttpError(
      401,
      'unauthorized',
      'missing bearer token: send Authorization: Bearer <API key>',
      undefined,
      { 'www-authenticate': 'Bearer' },
    );
  return req.principal;
}

/** The caller's tenant: every stored automation resource is keyed by it (docs/security.md). */
export function tenantOf(req: HttpRequest): string {
  return principalOf(req).tenant;
}
