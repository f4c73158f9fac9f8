// /automations routes: the shared catalogue synced from the git registry (HTTP only; lookups and
// sync are in service.ts, wire shapes in view.ts).

import { Type } from '@sinclair/typebox';
import { hasScope } from '../../core/auth/types.js';
import { ApiError, invalid } from '../errors.js';
import type { ApiDeps, ApiRoute } from '../http/api.js';
import { principalOf } from '../http/principal.js';
import { route } from '../http/route.js';
import * as W from '../wire/index.js';
import { automationDetail, automationSummary, automationVersion, syncView, triggersView } from './view.js';

const Limit = Type.Integer({ minimum: 1, maximum: 1000, description: 'page size' });
const Offset = Type.Integer({ minimum: 0, description: 'items to skip' });
const ListQuery = Type.Object({
  search: Type.Optional(
    Type.String({ maxLength: 256, description: 'substring of slug, name or description' }),
  ),
  type: Type.Optional(W.AutomationType),
  limit: Type.Optional(Limit),
  offset: Type.Optional(Offset),
});
const PageQuery = Type.Object({ limit: Type.Optional(Limit), offset: Type.Optional(Offset) });

const noVersion = (id: string) => {
  if (id.includes('@'))
    throw invalid('id', 'this endpoint takes an automation without a version', 'versioned_target');
  return id;
};

export function automationRoutes(deps: ApiDeps): ApiRoute[] {
  const { registry, settings } = deps;
  const page = (q: { limit?: number; offset?: number }) => ({
    limit: Math.min(q.limit ?? settings.listDefaultLimit, settings.listMaxLimit),
    offset: q.offset ?? 0,
  });
  const find = (id: string) => registry.find(noVersion(id));
  return [
    route({
      method: 'GET',
      path: '/automations',
      operationId: 'automationsList',
      summary: 'List synced automations',
      tag: 'automations',
      query: ListQuery,
      responses: { 200: { description: 'a page of automations', schema: W.ListAutomationsResponse } },
      async handle({ query }) {
        const { limit, offset } = page(query);
        const found = await registry.list({
          limit,
          offset,
          ...(query.search !== undefined ? { search: query.search } : {}),
          ...(query.type !== undefined ? { type: query.type } : {}),
        });
        return { data: found.data.map(automationSummary), total: found.total, limit, offset };
      },
    }),
    route({
      method: 'GET',
      path: '/automations/{id}',
      operationId: 'automationsGet',
      summary: 'An automation by id or typed alias (workflows.<slug>, agents.<slug>, workflows.<id>)',
      tag: 'automations',
      responses: { 200: { description: 'the automation', schema: W.AutomationDetail } },
      handle: async ({ params }) => automationDetail(await find(params['id']!)),
    }),
    route({
      method: 'POST',
      path: '/automations/{id}/sync',
      operationId: 'automationsSync',
      summary: 'Reconcile the automation with its latest git release (idempotent; never publishes)',
      tag: 'automations',
      responses: {
        200: { description: 'the latest release and any warnings', schema: W.AutomationsSyncResponse },
      },
      async handle(ctx) {
        const p = principalOf(ctx.req);
        // Sync needs a key that belongs to a user (the reference's "user-backed API key").
        if (!p.user || p.user === '__system__' || !hasScope(p, 'automation:write'))
          throw new ApiError(
            403,
            'user_key_required',
            'sync requires a user-backed API key with automation:write',
          );
        const result = await registry.sync(ctx.params['id']!, { tenant: p.tenant });
        deps.log.info(
          {
            automation: result.automation.id,
            package: `${result.automation.type}s/${result.automation.slug}`,
            version: result.release.version,
            commit: result.release.commit,
            tenant: p.tenant,
            user: p.user,
            changed: result.changed,
            ...(result.previous && result.previous.commit !== result.release.commit
              ? { from: result.previous }
              : {}),
            ...(result.newVersions.length > 0 ? { newVersions: result.newVersions } : {}),
          },
          result.previous ? 'automation synced' : 'automation synced for the first time',
        );
        return syncView(result);
      },
    }),
    route({
      method: 'GET',
      path: '/automations/{id}/triggers',
      operationId: 'automationsTriggersGet',
      summary: 'Which triggers are on (read-only; set in the manifest)',
      tag: 'automations',
      responses: { 200: { description: 'trigger state', schema: W.AutomationTriggersResponse } },
      handle: async ({ params }) => triggersView(await find(params['id']!)),
    }),
    route({
      method: 'GET',
      path: '/automations/{id}/versions',
      operationId: 'automationsVersionsList',
      summary: 'Released versions (git tags <type>s.<slug>@X.Y.Z), newest first',
      tag: 'automations',
      query: PageQuery,
      responses: { 200: { description: 'versions', schema: W.ListAutomationVersionsResponse } },
      async handle({ params, query }) {
        const a = await find(params['id']!);
        const { limit, offset } = page(query);
        const all = await registry.versions(a.id);
        return {
          data: all.slice(offset, offset + limit).map((v) => automationVersion(v, a)),
          total: all.length,
          limit,
          offset,
        };
      },
    }),
  ];
}
