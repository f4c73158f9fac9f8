// Experiment routes (HTTP only; service.ts does the work, feature.ts builds it): create (JSON answer or NDJSON
// stream), list, detail, cancel, exports, and resolving an experiment id to its automation.

import { sendStream } from '../../core/http/download.js';
import type { HttpResponse } from '../../core/http/index.js';
import type { ApiRoute } from '../http/api.js';
import { principalOf } from '../http/principal.js';
import { route, type RouteContext } from '../http/route.js';
import {
  AutomationsExperimentsListResponse,
  ExperimentCreateResponse,
  ExperimentDetail,
  ExperimentRef,
} from '../wire/experiments.js';
import { Text } from '../wire/operations.js';
import { ExperimentCreateBody, ExperimentListQuery, ExportAllQuery, ExportQuery } from './requests.js';
import type { ExperimentService, ExportDocument } from './service.js';
import type { ExperimentEvent } from './types.js';

const tag = 'experiments';
const DOWNLOAD = {
  description: 'CSV (sent as application/octet-stream) or JSON (application/json) rows, read as text',
  content: { 'application/octet-stream': Text, 'application/json': Text },
};

export function experimentRoutes(service: ExperimentService): ApiRoute[] {
  const automation = (ctx: RouteContext<unknown, unknown>) => service.automation(ctx.params['id'] ?? '');
  const experimentId = (ctx: RouteContext<unknown, unknown>) => ctx.params['experimentId'] ?? '';
  const createBody = { schema: ExperimentCreateBody, description: 'ExperimentCreate (no body: {})' };
  return [
    route({
      method: 'GET',
      path: '/automations/{id}/experiments',
      operationId: 'automationsExperimentsList',
      summary: 'Experiments, newest first (fromDate/toDate: date or relative date such as -7d, inclusive)',
      tag,
      query: ExperimentListQuery,
      responses: {
        200: { description: 'Page of experiment batches', schema: AutomationsExperimentsListResponse },
      },
      handle: async (ctx) => service.list(ctx.tenant(), await automation(ctx), ctx.query),
    }),
    route({
      method: 'POST',
      path: '/automations/{id}/experiments',
      operationId: 'automationsExperimentsCreate',
      summary: 'Start an experiment over all examples or a subset (asynchronous)',
      tag,
      body: createBody,
      bodyOptional: true,
      responses: {
        202: { description: 'Experiment accepted and runs enqueued', schema: ExperimentCreateResponse },
      },
      async handle(ctx) {
        const e = await service.start(await automation(ctx), principal(ctx), ctx.body ?? {});
        return service.createResponse(e);
      },
    }),
    route({
      method: 'POST',
      path: '/automations/{id}/experiments/stream',
      operationId: 'automationsExperimentsCreateStream',
      summary: 'Start an experiment and stream one NDJSON line per completed run',
      tag,
      body: createBody,
      bodyOptional: true,
      responses: {
        200: {
          description: 'NDJSON, one run.completed event per run',
          schema: Text,
          contentType: 'application/x-ndjson',
        },
      },
      async handle(ctx) {
        const events = new EventQueue();
        await service.start(await automation(ctx), principal(ctx), ctx.body ?? {}, (e) => events.push(e));
        await writeNdjson(ctx.res, events);
      },
    }),
    route({
      method: 'GET',
      path: '/automations/{id}/experiments/export',
      operationId: 'automationsExperimentsExportAll',
      summary: 'All evaluator results of the automation as CSV or JSON',
      tag,
      query: ExportAllQuery,
      responses: { 200: DOWNLOAD },
      handle: async (ctx) =>
        download(
          ctx.res,
          await service.export(ctx.tenant(), await automation(ctx), undefined, ctx.query.format),
        ),
    }),
    route({
      method: 'GET',
      path: '/automations/{id}/experiments/{experimentId}',
      operationId: 'automationsExperimentsGet',
      summary: 'Experiment detail with runs and results by run',
      tag,
      responses: {
        200: { description: 'Experiment detail with runs and results', schema: ExperimentDetail },
      },
      handle: async (ctx) =>
        service.detail(await service.find(ctx.tenant(), await automation(ctx), experimentId(ctx))),
    }),
    route({
      method: 'POST',
      path: '/automations/{id}/experiments/{experimentId}/cancel',
      operationId: 'automationsExperimentsCancel',
      summary: 'Cancel: completed runs are kept, queued and running ones are cancelled',
      tag,
      responses: {
        200: { description: 'Experiment detail after the cancellation request', schema: ExperimentDetail },
      },
      handle: async (ctx) => service.cancel(ctx.tenant(), await automation(ctx), experimentId(ctx)),
    }),
    route({
      method: 'GET',
      path: '/automations/{id}/experiments/{experimentId}/export',
      operationId: 'automationsExperimentsExport',
      summary: "One experiment's evaluator results as CSV or JSON",
      tag,
      query: ExportQuery,
      responses: { 200: DOWNLOAD },
      handle: async (ctx) =>
        download(
          ctx.res,
          await service.export(ctx.tenant(), await automation(ctx), experimentId(ctx), ctx.query.format),
        ),
    }),
    route({
      method: 'GET',
      path: '/experiments/{experimentId}',
      operationId: 'experimentsResolve',
      summary: "The automation that owns an experiment (of the caller's tenant)",
      tag,
      responses: { 200: { description: 'Experiment reference', schema: ExperimentRef } },
      handle: (ctx) => service.resolve(ctx.tenant(), experimentId(ctx)),
    }),
  ];
}

/** The caller who starts the runs (their tenant and user are recorded on each run). */
const principal = (ctx: RouteContext<unknown, unknown>) => principalOf(ctx.req);

function download(res: HttpResponse, doc: ExportDocument): Promise<void> {
  return sendStream(res, doc.chunks, { contentType: doc.contentType, filename: doc.filename });
}

/** Events as the runner reports them; `null` marks the end of the experiment. */
class EventQueue {
  private readonly items: (ExperimentEvent | null)[] = [];
  private wake: (() => void) | undefined;

  push(e: ExperimentEvent | null): void {
    this.items.push(e);
    this.wake?.();
  }

  async next(): Promise<ExperimentEvent | null> {
    while (this.items.length === 0) await new Promise<void>((r) => (this.wake = r));
    this.wake = undefined;
    return this.items.shift()!;
  }
}

/**
 * One line per event, each write awaiting the socket, so a slow reader holds the queue in
 * memory (one line per run) and never the runs. A client that goes away stops the writing,
 * not the experiment.
 */
async function writeNdjson(res: HttpResponse, events: EventQueue): Promise<void> {
  res.header('content-type', 'application/x-ndjson').header('cache-control', 'no-cache');
  const out = res.stream(200);
  for (let e = await events.next(); e !== null; e = await events.next()) {
    if (out.aborted) return;
    try {
      await out.write(JSON.stringify(e) + '\n');
    } catch {
      return;
    }
  }
  if (!out.aborted) out.end();
}
