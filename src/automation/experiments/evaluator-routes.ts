// GET/PUT of an automation's evaluator YAML. PUT takes JSON {yaml} or the YAML itself
// (text/yaml, application/yaml, text/plain); a config that does not validate is a 400 listing
// every problem with its field path.

import { Type } from '@sinclair/typebox';
import type { HttpRequest } from '../../core/http/index.js';
import { invalid } from '../errors.js';
import type { ApiRoute } from '../http/api.js';
import { tenantOf } from '../http/principal.js';
import type { QualityContext } from '../quality.js';
import type { EvaluatorConfig } from '../evals/index.js';

const Open = Type.Object({}, { additionalProperties: true });
const YAML_TYPES = ['text/yaml', 'application/yaml', 'application/x-yaml', 'text/x-yaml', 'text/plain'];

function configView(
  automationId: string,
  yaml: string,
  config: EvaluatorConfig | undefined,
  updatedAt: string | null,
) {
  return {
    automationId,
    yaml,
    passThreshold: config?.passThreshold ?? null,
    evaluators: (config?.evaluators ?? []).map((e) => ({
      name: e.name,
      type: e.type,
      weight: e.weight,
      threshold: e.threshold,
    })),
    updatedAt,
  };
}

export function evaluatorRoutes(q: QualityContext): ApiRoute[] {
  const automation = (req: HttpRequest) => q.registry.find((req.params['id'] ?? '').split('@')[0]!);
  return [
    {
      method: 'GET',
      path: '/automations/{id}/evaluators',
      operationId: 'getEvaluators',
      summary: 'The automation\'s evaluator configuration (yaml: "" when none is set)',
      tag: 'evaluators',
      responses: { 200: { description: 'EvaluatorConfigResponse', schema: Open } },
      handle(req, res) {
        const a = automation(req);
        const tenant = tenantOf(req);
        const stored = q.evaluators.get(tenant, a.id);
        res.json(
          // `yaml` is a string in the API's type, and there is no built-in default configuration:
          // nothing stored reads as empty text (and no evaluators).
          configView(a.id, stored?.yaml ?? '', q.evaluators.config(tenant, a.id), stored?.updatedAt ?? null),
        );
      },
    },
    {
      method: 'PUT',
      path: '/automations/{id}/evaluators',
      operationId: 'putEvaluators',
      summary: 'Replace the evaluator configuration (YAML, validated)',
      tag: 'evaluators',
      body: {
        contentTypes: ['application/json', ...YAML_TYPES],
        schema: Type.Object({ yaml: Type.String() }),
      },
      maxBodyBytes: 2 * 1024 * 1024,
      responses: { 200: { description: 'EvaluatorConfigResponse', schema: Open } },
      async handle(req, res) {
        const a = automation(req);
        const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
        let text: unknown;
        if (YAML_TYPES.includes(type)) text = (await req.body()).toString('utf8');
        else {
          const body = await req.json<Record<string, unknown>>(['application/json']);
          text = body !== null && typeof body === 'object' ? (body['yaml'] ?? body['config']) : undefined;
        }
        if (typeof text !== 'string')
          throw invalid('yaml', 'send {"yaml": "<evaluator YAML>"} or the YAML as text/yaml');
        const { stored, config } = await q.evaluators.put(tenantOf(req), a.id, text);
        res.json(configView(a.id, stored.yaml, config, stored.updatedAt));
      },
    },
  ];
}
