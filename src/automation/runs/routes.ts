// /runs routes (HTTP only): start, rerun, list, get, cancel, events, steps, trace, usage, scores.
// Shapes are the product SDK's (src/automation/wire/runs.ts), built by view.ts.

import type { HttpResponse } from '../../core/http/index.js';
import { invalid, notFound } from '../errors.js';
import type { ApiDeps, ApiRoute } from '../http/api.js';
import { route } from '../http/route.js';
import { parseTarget } from '../registry/service.js';
import {
  Run,
  RunCancelResponse,
  RunEventsResponse,
  RunScoresResponse,
  RunStartMultipartRequest,
  RunStartResponse,
  RunStepsResponse,
  RunTraceResponse,
  RunUsageResponse,
  RunsListResponse,
} from '../wire/runs.js';
import { discard, readRunStart } from './intake.js';
import { CursorError } from './list.js';
import { toListQuery } from './list-query.js';
import { GetRunQuery, RunListQuery, RunStartQuery, RunStartRequest } from './schemas.js';
import type { RunService } from './service.js';
import { TERMINAL, type RunRecord, type RunStatus } from './types.js';
import {
  acceptedView,
  cancelView,
  eventView,
  listItemView,
  runView,
  scoreView,
  stepsView,
  traceView,
  usageView,
  type Expand,
  type ViewContext,
} from './view.js';

/** The caller's run, or 404 (another tenant's run is not found either). */
export async function ownRun(runs: RunService, id: string, tenant: string): Promise<RunRecord> {
  const run = await runs.get(id);
  if (!run || run.tenant !== tenant) throw notFound(`run ${JSON.stringify(id)}`, 'id');
  return run;
}

/** Who started a run, from the `X-Eigenpal-Trigger` header the SDK's RunStartBody describes. */
function triggerOf(header: string | undefined): 'api' | 'cli' {
  return header?.trim().toLowerCase() === 'cli' ? 'cli' : 'api';
}

const START_RESPONSES = {
  200: { description: 'Finished within wait_for_completion: the Run', schema: RunStartResponse },
  201: { description: 'Accepted (asynchronous): {id, type, finished: false}', schema: RunStartResponse },
  202: {
    description: 'The wait ended first: {id, type, finished: false}; poll GET /runs/{id}',
    schema: RunStartResponse,
  },
};

export function runRoutes(deps: ApiDeps): ApiRoute[] {
  const { runs, registry, settings } = deps;
  /** Statuses of the retries that followed `list` (the views name them), read before the views are built. */
  async function statuses(list: readonly RunRecord[]): Promise<ViewContext['statusOf']> {
    const next = [...new Set(list.map((r) => r.retry.nextRunId).filter((id): id is string => id !== null))];
    const known = new Map<string, RunStatus | undefined>();
    await Promise.all(next.map(async (id) => known.set(id, (await runs.get(id))?.status)));
    return (id) => known.get(id);
  }
  const ctxFor = async (run: RunRecord): Promise<ViewContext> => ({
    automation: await registry.get(run.automationId),
    statusOf: await statuses([run]),
  });
  const own = (id: string, tenant: string) => ownRun(runs, id, tenant);

  /**
   * Without a wait: 201 with RunAccepted. With one: 200 and the Run when it finished in time,
   * else 202 with RunAccepted (RunsStartResponses of the SDK).
   */
  async function answer(res: HttpResponse, run: RunRecord, waitSeconds: number | undefined): Promise<void> {
    if (waitSeconds === undefined || waitSeconds <= 0) return res.json(acceptedView(run), 201);
    // `run` is the start's answer, committed: the wait does not read it back.
    const done = await runs.waitFor(run.id, waitSeconds * 1000, run);
    if (TERMINAL.has(done.status)) return res.json(runView(done, await ctxFor(done)), 200);
    // Not ended in time: the answer acknowledges the run, so its creation must be committed.
    await runs.committed(run.id);
    res.json(acceptedView(done), 202);
  }

  return [
    route({
      method: 'POST',
      path: '/runs',
      operationId: 'runsStart',
      summary: 'Start a run (asynchronous, or wait up to wait_for_completion seconds)',
      tag: 'runs',
      query: RunStartQuery,
      body: {
        schema: RunStartRequest,
        rawContentTypes: ['multipart/form-data'],
        // The form as the SDK sends it: input, overrides and metadata JSON-encoded, files.<field> parts.
        rawSchemas: { 'multipart/form-data': RunStartMultipartRequest },
      },
      bodyOptional: true,
      maxBodyBytes: settings.maxUploadBytes + 1024 * 1024,
      responses: START_RESPONSES,
      async handle(ctx) {
        const principal = ctx.principal!;
        const parsed = await readRunStart(
          ctx.req,
          ctx.body,
          {
            file: (tenant, id) => deps.files.get(tenant, id),
            tmpDir: deps.tmpDir,
            maxUploadBytes: settings.maxUploadBytes,
          },
          ctx.tenant(),
        );
        let run: RunRecord;
        try {
          run = await runs.start({
            target: parsed.target,
            version: ctx.query.version,
            input: parsed.input,
            files: parsed.files,
            overrides: parsed.overrides,
            metadata: parsed.metadata,
            principal,
            trigger: triggerOf(ctx.req.headers['x-eigenpal-trigger']),
            traceparent: ctx.req.headers['traceparent'],
            endAcknowledged: (ctx.query.wait_for_completion ?? 0) > 0,
          });
        } finally {
          await discard(parsed);
        }
        await answer(ctx.res, run, ctx.query.wait_for_completion);
      },
    }),
    route({
      method: 'POST',
      path: '/runs/{id}/rerun',
      operationId: 'runsRerun',
      summary: 'Start a new run from a stored run’s input (version=original pins its commit)',
      tag: 'runs',
      query: RunStartQuery,
      responses: START_RESPONSES,
      async handle(ctx) {
        const source = await own(ctx.params['id']!, ctx.tenant());
        const run = await runs.rerun(source.id, ctx.query.version, ctx.principal!);
        await answer(ctx.res, run, ctx.query.wait_for_completion);
      },
    }),
    route({
      method: 'GET',
      path: '/runs',
      operationId: 'runsList',
      summary: 'List runs (cursor pagination; filters as the SDK sends them)',
      tag: 'runs',
      query: RunListQuery,
      responses: { 200: { description: 'a page of runs', schema: RunsListResponse } },
      async handle(ctx) {
        const q = await toListQuery(ctx.query, {
          tenant: ctx.tenant(),
          defaultLimit: settings.listDefaultLimit,
          maxLimit: settings.listMaxLimit,
          sourceId: async (s) => (await registry.resolveTarget(parseTarget(s)))?.id ?? s,
          lastReviewClosedAt: (t) => deps.lastReviewClosedAt(t),
        });
        let page;
        try {
          page = await deps.listRuns(q);
        } catch (err) {
          if (err instanceof CursorError) throw invalid('cursor', err.message);
          throw err;
        }
        const statusOf = await statuses(page.runs);
        return { runs: page.runs.map((r) => listItemView(r, { statusOf })), nextCursor: page.nextCursor };
      },
    }),
    route({
      method: 'GET',
      path: '/runs/{id}',
      operationId: 'runsGet',
      summary: 'A run; expand adds input, usage, execution, debug',
      tag: 'runs',
      query: GetRunQuery,
      responses: { 200: { description: 'the run', schema: Run } },
      async handle(ctx) {
        const run = await own(ctx.params['id']!, ctx.tenant());
        const expand = new Set<Expand>(ctx.query.expand ?? []);
        // The detail (input, steps, trace) is read only when a section needs it.
        const detail = expand.size > 0 ? await runs.getDetail(run.id) : undefined;
        const review = expand.has('execution') ? await deps.runReview(run) : null;
        return runView(run, { ...(await ctxFor(run)), detail, expand, review });
      },
    }),
    route({
      method: 'POST',
      path: '/runs/{id}/cancel',
      operationId: 'runsCancel',
      summary: 'Cancel: queued → cancelled at once; running → requested; terminal → already_terminal',
      tag: 'runs',
      responses: { 200: { description: 'cancellation state', schema: RunCancelResponse } },
      async handle(ctx) {
        const run = await own(ctx.params['id']!, ctx.tenant());
        const result = await runs.cancel(run.id);
        return cancelView(result.run, result.state, result.wasStatus);
      },
    }),
    route({
      method: 'GET',
      path: '/runs/{id}/events',
      operationId: 'runsEventsList',
      summary: 'Lifecycle timeline, in order',
      tag: 'runs',
      responses: { 200: { description: 'events', schema: RunEventsResponse } },
      async handle(ctx) {
        const run = await own(ctx.params['id']!, ctx.tenant());
        return { events: (await runs.events(run.id)).map(eventView) };
      },
    }),
    route({
      method: 'GET',
      path: '/runs/{id}/steps',
      operationId: 'runsStepsList',
      summary: 'Workflow steps, or one execution summary step for agents',
      tag: 'runs',
      responses: { 200: { description: 'steps', schema: RunStepsResponse } },
      async handle(ctx) {
        const run = await own(ctx.params['id']!, ctx.tenant());
        return { steps: stepsView(run, await runs.detailOf(run)) };
      },
    }),
    route({
      method: 'GET',
      path: '/runs/{id}/trace',
      operationId: 'runsTraceGet',
      summary: 'Step records (workflows) or model/tool trace events (agents)',
      tag: 'runs',
      responses: { 200: { description: 'trace', schema: RunTraceResponse } },
      async handle(ctx) {
        const run = await own(ctx.params['id']!, ctx.tenant());
        return { events: (await runs.detailOf(run)).trace.map(traceView) };
      },
    }),
    route({
      method: 'GET',
      path: '/runs/{id}/usage',
      operationId: 'runsUsageGet',
      summary: 'Tokens, credits, duration and counters',
      tag: 'runs',
      responses: { 200: { description: 'usage', schema: RunUsageResponse } },
      async handle(ctx) {
        const run = await own(ctx.params['id']!, ctx.tenant());
        return { usage: usageView(run, await runs.detailOf(run)) };
      },
    }),
    route({
      method: 'GET',
      path: '/runs/{id}/scores',
      operationId: 'runsScoresList',
      summary: 'Automated evaluator results of the run',
      tag: 'runs',
      responses: { 200: { description: 'scores', schema: RunScoresResponse } },
      async handle(ctx) {
        const run = await own(ctx.params['id']!, ctx.tenant());
        return { scores: (await deps.scores.list(run.id)).map(scoreView) };
      },
    }),
  ];
}
