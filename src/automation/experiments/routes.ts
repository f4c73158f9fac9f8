// Experiment routes: create (JSON answer or NDJSON stream), list, detail, cancel, exports, ref.

import { Type } from '@sinclair/typebox';
import type { HttpRequest } from '../../core/http/index.js';
import { invalid, notFound } from '../errors.js';
import type { ApiRoute } from '../http/api.js';
import { IdString, RefString } from '../http/ids.js';
import { principalOf, tenantOf } from '../http/principal.js';
import { parseEndTime, parseTime } from '../http/time.js';
import { parseQuery, validateBody } from '../http/validate.js';
import type { QualityContext } from '../quality.js';
import type { ExampleRecord } from '../datasets/types.js';
import { exportRows, toCsv } from './export.js';
import type { ExperimentEvent, ExperimentRecord } from './types.js';

const Open = Type.Object({}, { additionalProperties: true });
const Json = (description: string) => ({ description, schema: Open });

const CreateBody = Type.Object(
  {
    examples: Type.Optional(Type.Array(IdString(), { maxItems: 100_000 })),
    batchConcurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 256 })),
    sourceRef: Type.Optional(RefString('release version, `latest` or a git ref')),
  },
  { additionalProperties: false },
);
type Create = { examples?: string[]; batchConcurrency?: number; sourceRef?: string };

const ListQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  from_date: Type.Optional(Type.String()),
  to_date: Type.Optional(Type.String()),
});
const FormatQuery = Type.Object({ format: Type.Union([Type.Literal('csv'), Type.Literal('json')]) });

/** `7d ago` and `7 days ago` read as `-7d`; everything else goes to the shared time parser. */
function relative(text: string): string {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w|sec\w*|min\w*|hours?|days?|weeks?)\s+ago\s*$/i.exec(text);
  if (!m) return text;
  const unit = m[2]!.toLowerCase();
  const short =
    unit === 'ms'
      ? 'ms'
      : unit[0] === 'w'
        ? 'w'
        : unit[0] === 'd'
          ? 'd'
          : unit[0] === 'h'
            ? 'h'
            : unit.startsWith('mi') || unit === 'm'
              ? 'm'
              : 's';
  return `-${m[1]}${short}`;
}

export function summary(e: ExperimentRecord) {
  const results = Object.values(e.results);
  const scored = results.filter((r) => r.score !== null);
  const passed = results.filter((r) => r.passed).length;
  return {
    id: e.id,
    automationId: e.automationId,
    automationType: e.automationType,
    status: e.status,
    runCount: e.examples.length,
    completedCount: results.length,
    passedCount: passed,
    failedCount: results.length - passed,
    avgScore: scored.length ? scored.reduce((s, r) => s + r.score!, 0) / scored.length : null,
    createdAt: new Date(e.createdAt).toISOString(),
    completedAt: e.completedAt === null ? null : new Date(e.completedAt).toISOString(),
    version: e.version,
    concurrency: e.concurrency,
    cancelled: e.cancelRequestedAt !== null,
    interrupted: e.interrupted,
    notStarted: e.status === 'completed' ? e.examples.length - e.runs.length : 0,
  };
}

function detail(q: QualityContext, e: ExperimentRecord) {
  const resultsByRun: Record<string, unknown[]> = {};
  const runs = e.runs.map((ref) => {
    const run = q.runs.get(ref.id);
    resultsByRun[ref.id] = q.scores.list(ref.id);
    const r = e.results[ref.id];
    return {
      id: ref.id,
      status: run?.status ?? 'unknown',
      exampleId: ref.exampleId,
      exampleName: ref.exampleName,
      createdAt: new Date(ref.createdAt).toISOString(),
      completedAt: run?.completedAt ? new Date(run.completedAt).toISOString() : null,
      score: r?.score ?? null,
      passed: r ? r.passed : null,
    };
  });
  return { ...summary(e), runs, resultsByRun };
}

export function experimentRoutes(q: QualityContext): ApiRoute[] {
  const tag = 'experiments';
  // Automations are the operator's shared catalogue; experiments are the caller's tenant's own.
  const automation = (req: HttpRequest) => q.registry.find((req.params['id'] ?? '').split('@')[0]!);
  const experiment = (req: HttpRequest) => {
    const a = automation(req);
    const e = q.experiments.get(tenantOf(req), req.params['experimentId'] ?? '');
    if (!e || e.automationId !== a.id)
      throw notFound(`experiment ${JSON.stringify(req.params['experimentId'])}`, 'experimentId');
    return e;
  };
  const prepare = async (req: HttpRequest) => {
    const a = automation(req);
    const body = validateBody<Create>(
      CreateBody,
      (req.headers['content-length'] ?? '') === '0' ? {} : await req.json(['application/json']),
    );
    const all = q.examples.list(tenantOf(req), a.id);
    let chosen: ExampleRecord[] = all;
    if (body.examples) {
      const byId = new Map(all.map((e) => [e.id, e]));
      const missing = body.examples.filter((id) => !byId.has(id));
      if (missing.length > 0)
        throw invalid('examples', `unknown example ids: ${missing.slice(0, 20).join(', ')}`, 'not_found');
      chosen = [...new Set(body.examples)].map((id) => byId.get(id)!);
    }
    if (chosen.length === 0) throw invalid('examples', 'the experiment has no examples to run');
    // A ref that does not resolve is refused here rather than failing every run of the batch.
    if (body.sourceRef !== undefined) await q.registry.resolveVersion(a, body.sourceRef);
    return { a, body, chosen };
  };
  const exportAnswer = (
    req: HttpRequest,
    res: Parameters<ApiRoute['handle']>[1],
    list: ExperimentRecord[],
    name: string,
  ) => {
    const p = parseQuery<{ format: 'csv' | 'json' }>(FormatQuery, req.query);
    const rows = exportRows(
      list,
      (id) => q.scores.list(id),
      (id) => q.runs.get(id),
    );
    if (p.format === 'csv')
      res
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${name}.csv"`)
        .send(toCsv(rows));
    else res.header('content-disposition', `attachment; filename="${name}.json"`).json(rows);
  };
  return [
    {
      method: 'GET',
      path: '/automations/{id}/experiments',
      operationId: 'listExperiments',
      summary: 'Experiments, newest first (from_date/to_date: date or relative date such as -7d, inclusive)',
      tag,
      query: ListQuery,
      responses: { 200: Json('{data,total,limit,offset}') },
      handle(req, res) {
        const a = automation(req);
        const p = parseQuery<{ limit?: number; offset?: number; from_date?: string; to_date?: string }>(
          ListQuery,
          req.query,
        );
        const now = Date.now();
        const from = p.from_date === undefined ? undefined : parseTime(relative(p.from_date), now);
        const to = p.to_date === undefined ? undefined : parseEndTime(relative(p.to_date), now);
        if (p.from_date !== undefined && from === undefined)
          throw invalid('from_date', `cannot read ${JSON.stringify(p.from_date)} as a date`);
        if (p.to_date !== undefined && to === undefined)
          throw invalid('to_date', `cannot read ${JSON.stringify(p.to_date)} as a date`);
        const all = q.experiments
          .list(tenantOf(req), a.id)
          .filter(
            (e) => (from === undefined || e.createdAt >= from) && (to === undefined || e.createdAt <= to),
          );
        const limit = p.limit ?? 50;
        const offset = p.offset ?? 0;
        res.json({
          data: all.slice(offset, offset + limit).map((e) => summary(e)),
          total: all.length,
          limit,
          offset,
        });
      },
    },
    {
      method: 'POST',
      path: '/automations/{id}/experiments',
      operationId: 'createExperiment',
      summary: 'Start an experiment over all examples or a subset (asynchronous)',
      tag,
      body: { schema: CreateBody, contentTypes: ['application/json'] },
      responses: { 202: Json('ExperimentCreateResponse') },
      async handle(req, res) {
        const { a, body, chosen } = await prepare(req);
        const e = await q.experiments.start({
          automation: a,
          examples: chosen,
          concurrency: body.batchConcurrency ?? q.experimentConcurrency,
          version: body.sourceRef,
          principal: principalOf(req),
        });
        res.json(
          {
            id: e.id,
            automationId: a.id,
            status: e.status,
            runs: e.runs.map((r) => ({ id: r.id, exampleId: r.exampleId })),
            total: e.examples.length,
          },
          202,
        );
      },
    },
    {
      method: 'POST',
      path: '/automations/{id}/experiments/stream',
      operationId: 'streamExperiment',
      summary: 'Start an experiment and stream one NDJSON line per completed run',
      tag,
      body: { schema: CreateBody, contentTypes: ['application/json'] },
      responses: {
        200: { description: 'NDJSON, one run.completed event per run', contentType: 'application/x-ndjson' },
      },
      async handle(req, res) {
        const { a, body, chosen } = await prepare(req);
        // Events queue here and are written one at a time, each write awaiting the socket, so
        // a slow reader holds the queue in memory (one line per run) and never the runs.
        const queue: (ExperimentEvent | null)[] = [];
        let wake: (() => void) | undefined;
        const listener = (e: ExperimentEvent | null) => {
          queue.push(e);
          wake?.();
        };
        await q.experiments.start({
          automation: a,
          examples: chosen,
          concurrency: body.batchConcurrency ?? q.experimentConcurrency,
          version: body.sourceRef,
          principal: principalOf(req),
          listener,
        });
        res.header('content-type', 'application/x-ndjson').header('cache-control', 'no-cache');
        const out = res.stream(200);
        for (;;) {
          if (queue.length === 0) await new Promise<void>((r) => (wake = r));
          wake = undefined;
          const event = queue.shift();
          if (event === undefined) continue;
          if (event === null) break;
          if (out.aborted) return;
          try {
            await out.write(JSON.stringify(event) + '\n');
          } catch {
            return;
          }
        }
        if (!out.aborted) out.end();
      },
    },
    {
      method: 'GET',
      path: '/automations/{id}/experiments/export',
      operationId: 'exportAllExperimentResults',
      summary: 'All evaluator results of the automation as CSV or JSON',
      tag,
      query: FormatQuery,
      responses: { 200: { description: 'CSV or JSON text', contentType: 'text/csv' } },
      handle(req, res) {
        const a = automation(req);
        exportAnswer(req, res, q.experiments.list(tenantOf(req), a.id).reverse(), `${a.slug}-results`);
      },
    },
    {
      method: 'GET',
      path: '/automations/{id}/experiments/{experimentId}',
      operationId: 'getExperiment',
      summary: 'Experiment detail with runs and results by run',
      tag,
      responses: { 200: Json('ExperimentDetail') },
      handle(req, res) {
        res.json(detail(q, experiment(req)));
      },
    },
    {
      method: 'POST',
      path: '/automations/{id}/experiments/{experimentId}/cancel',
      operationId: 'cancelExperiment',
      summary: 'Cancel: completed runs are kept, queued and running ones are cancelled',
      tag,
      responses: { 200: Json('ExperimentDetail') },
      async handle(req, res) {
        const e = experiment(req);
        const after = (await q.experiments.cancel(e.tenant, e.id)) ?? e;
        res.json(detail(q, after));
      },
    },
    {
      method: 'GET',
      path: '/automations/{id}/experiments/{experimentId}/export',
      operationId: 'exportExperiment',
      summary: "One experiment's evaluator results as CSV or JSON",
      tag,
      query: FormatQuery,
      responses: { 200: { description: 'CSV or JSON text', contentType: 'text/csv' } },
      handle(req, res) {
        const e = experiment(req);
        exportAnswer(req, res, [e], e.id);
      },
    },
    {
      method: 'GET',
      path: '/experiments/{experimentId}',
      operationId: 'getExperimentRef',
      summary: 'The automation that owns an experiment',
      tag,
      responses: { 200: Json('ExperimentRef') },
      handle(req, res) {
        const e = q.experiments.get(tenantOf(req), req.params['experimentId'] ?? '');
        if (!e) throw notFound(`experiment ${JSON.stringify(req.params['experimentId'])}`, 'experimentId');
        const a = q.registry.get(e.automationId);
        res.json({
          id: e.id,
          experimentId: e.id,
          automationId: e.automationId,
          automationType: e.automationType,
          slug: a?.slug ?? null,
          alias: a ? `${a.type}s.${a.slug}` : null,
          status: e.status,
        });
      },
    },
  ];
}
