// The caller's principal, for handlers that need more than the route context's tenant().

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
