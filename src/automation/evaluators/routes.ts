// GET/PUT of an automation's evaluator YAML (HTTP only; service.ts does the work).
// PUT takes the SDK's JSON `{yaml}`, or the YAML itself as text (text/yaml, application/yaml,
// text/plain) for curl users; a config that does not validate is a 400 listing every problem
// with its dotted field path and YAML line.

import { invalid } from '../errors.js';
import type { ApiRoute } from '../http/api.js';
import { route, type RouteContext } from '../http/route.js';
import type { AutomationRegistry } from '../registry/service.js';
import { EvaluatorConfigResponse, EvaluatorConfigUpdate } from '../wire/experiments.js';
import type { EvaluatorConfigs } from './service.js';

const YAML_TYPES = ['text/yaml', 'application/yaml', 'application/x-yaml', 'text/x-yaml', 'text/plain'];
const tag = 'evaluators';

export function evaluatorRoutes(
  registry: Pick<AutomationRegistry, 'find'>,
  evaluators: EvaluatorConfigs,
): ApiRoute[] {
  const automation = (ctx: RouteContext<unknown, unknown>) =>
    registry.find((ctx.params['id'] ?? '').split('@')[0]!);
  return [
    route({
      method: 'GET',
      path: '/automations/{id}/evaluators',
      operationId: 'automationsEvaluatorsGet',
      summary: 'The automation\'s evaluator configuration (yaml "" when none is stored)',
      tag,
      responses: {
        200: { description: 'Evaluator YAML and parsed configuration', schema: EvaluatorConfigResponse },
      },
      handle: async (ctx) => evaluators.view(ctx.tenant(), await automation(ctx)),
    }),
    route({
      method: 'PUT',
      path: '/automations/{id}/evaluators',
      operationId: 'automationsEvaluatorsUpdate',
      summary: 'Replace the evaluator configuration (YAML, validated before it is stored)',
      tag,
      body: {
        schema: EvaluatorConfigUpdate,
        description: '`{"yaml": "<evaluator YAML>"}`, or the YAML itself as text',
        rawContentTypes: YAML_TYPES,
      },
      bodyOptional: true,
      maxBodyBytes: 2 * 1024 * 1024,
      responses: {
        200: {
          description: 'Updated evaluator YAML and parsed configuration',
          schema: EvaluatorConfigResponse,
        },
      },
      async handle(ctx) {
        const a = await automation(ctx);
        const text = ctx.body
          ? ctx.body.yaml
          : isYaml(ctx)
            ? (await ctx.req.body()).toString('utf8')
            : undefined;
        if (text === undefined)
          throw invalid('yaml', 'send {"yaml": "<evaluator YAML>"} or the YAML as text/yaml');
        return evaluators.replace(ctx.tenant(), a, text);
      },
    }),
  ];
}

function isYaml(ctx: RouteContext<unknown, unknown>): boolean {
  const type = (ctx.req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  return YAML_TYPES.includes(type);
}
