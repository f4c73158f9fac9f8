// /auth/check and /automations routes.

import { hasScope } from '../../core/auth/types.js';
import { invalid, ApiError } from '../errors.js';
import type { AutomationType } from '../registry/manifest.js';
import { automationView } from '../runs/view.js';
import * as S from '../openapi/schemas.js';
import type { ApiDeps, ApiRoute } from './api.js';
import { principalOf } from './principal.js';
import { parseQuery } from './validate.js';

const noVersion = (id: string) => {
  if (id.includes('@'))
    throw invalid('id', 'this endpoint takes an automation without a version', 'versioned_target');
  return id;
};

export function automationRoutes(deps: ApiDeps): ApiRoute[] {
  const { registry, settings } = deps;
  return [
    {
      method: 'GET',
      path: '/auth/check',
      operationId: 'authCheck',
      summary: 'Tenant, user, key and scope of the API key used',
      tag: 'auth',
      responses: { 200: { description: 'the key is valid', schema: S.AuthCheckResponse } },
      handle(req, res) {
        const p = principalOf(req);
        res.json({
          ok: true,
          tenantId: p.tenant,
          tenantSlug: p.tenant,
          tenantName: p.tenant,
          userId: p.user,
          keyId: p.keyId,
          email: null,
          name: p.name,
          scope: [...p.scopes],
          wildcardGranted: p.scopes.includes('admin'),
        });
      },
    },
    {
      method: 'GET',
      path: '/automations',
      operationId: 'listAutomations',
      summary: 'List synced automations',
      tag: 'automations',
      query: S.ListAutomationsQuery,
      responses: { 200: { description: 'a page of automations', schema: S.ListAutomationsResponse } },
      handle(req, res) {
        const q = parseQuery<{ search?: string; type?: AutomationType; limit?: number; offset?: number }>(
          S.ListAutomationsQuery,
          req.query,
        );
        const limit = Math.min(q.limit ?? settings.listDefaultLimit, settings.listMaxLimit);
        const offset = q.offset ?? 0;
        const filter: { search?: string; type?: AutomationType; limit: number; offset: number } = {
          limit,
          offset,
        };
        if (q.search !== undefined) filter.search = q.search;
        if (q.type !== undefined) filter.type = q.type;
        const page = registry.list(filter);
        res.json({ data: page.data.map((a) => automationView(a, false)), total: page.total, limit, offset });
      },
    },
    {
      method: 'GET',
      path: '/automations/{id}',
      operationId: 'getAutomation',
      summary: 'An automation by id or typed alias (workflows.<slug>, agents.<slug>)',
      tag: 'automations',
      responses: { 200: { description: 'the automation', schema: S.AutomationDetail } },
      handle(req, res) {
        res.json(automationView(registry.find(noVersion(req.params['id']!)), true));
      },
    },
    {
      method: 'POST',
      path: '/automations/{id}/sync',
      operationId: 'syncAutomation',
      summary: 'Reconcile the automation with its latest git release (idempotent; never publishes)',
      tag: 'automations',
      responses: {
        200: {
          description: 'what the latest release is and whether anything changed',
          schema: S.SyncResponse,
        },
      },
      async handle(req, res) {
        const p = principalOf(req);
        // Sync needs a key that belongs to a user (the reference's "user-backed API key").
        if (!p.user || p.user === '__system__' || !hasScope(p, 'automation:write')) {
          throw new ApiError(
            403,
            'user_key_required',
            'sync requires a user-backed API key with automation:write',
          );
        }
        res.json(await registry.sync(req.params['id']!));
      },
    },
    {
      method: 'GET',
      path: '/automations/{id}/triggers',
      operationId: 'getAutomationTriggers',
      summary: 'Trigger state (read-only in v1)',
      tag: 'automations',
      responses: { 200: { description: 'trigger state', schema: S.AutomationTriggersResponse } },
      handle(req, res) {
        const a = registry.find(noVersion(req.params['id']!));
        res.json({ automationId: a.id, triggers: a.triggers, mutable: false });
      },
    },
    {
      method: 'GET',
      path: '/automations/{id}/versions',
      operationId: 'listAutomationVersions',
      summary: 'Released versions (git tags <type>s.<slug>@X.Y.Z), newest first',
      tag: 'automations',
      query: S.PagingQuery,
      responses: { 200: { description: 'versions', schema: S.ListAutomationVersionsResponse } },
      handle(req, res) {
        const a = registry.find(noVersion(req.params['id']!));
        const q = parseQuery<{ limit?: number; offset?: number }>(S.PagingQuery, req.query);
        const limit = Math.min(q.limit ?? settings.listDefaultLimit, settings.listMaxLimit);
        const offset = q.offset ?? 0;
        const all = registry.versions(a.id).map((v) => ({ ...v, isCurrent: v.version === a.version }));
        res.json({ data: all.slice(offset, offset + limit), total: all.length, limit, offset });
      },
    },
  ];
}
