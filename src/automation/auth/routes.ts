// GET /auth/check: who the key in use belongs to (AuthCheckResponse).

import type { ApiRoute } from '../http/api.js';
import { principalOf } from '../http/principal.js';
import { route } from '../http/route.js';
import * as W from '../wire/index.js';

export function authRoutes(): ApiRoute[] {
  return [
    route({
      method: 'GET',
      path: '/auth/check',
      operationId: 'authCheck',
      summary: 'Tenant, user, key and scope of the API key used',
      tag: 'auth',
      responses: { 200: { description: 'the key is valid', schema: W.AuthCheckResponse } },
      handle({ req }): W.AuthCheckResponse {
        const p = principalOf(req);
        // Tenants have no separate slug or display name here: the tenant id serves as both.
        return {
          ok: true,
          tenantId: p.tenant,
          tenantSlug: p.tenant,
          tenantName: p.tenant,
          userId: p.user || null,
          keyId: p.keyId,
          email: null,
          name: p.name || null,
          scope: [...p.scopes],
          wildcardGranted: p.scopes.includes('admin'),
        };
      },
    }),
  ];
}
