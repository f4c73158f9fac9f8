// /runs routes: start, rerun, list, get, cancel, events, steps, trace, usage, scores.

import { rm } from 'node:fs/promises';
import type { HttpRequest } from '../../core/http/index.js';
import { invalid, notFound } from '../errors.js';
import { CursorError, type RunListQuery } from '../runs/list.js';
import type { RunRecord } from '../runs/types.js';
import { cancelView, eventView, EXPANDS, runView, stepsView, usageView, type Expand } from '../runs/view.js';
import { parseAlias } from '../registry/service.js';
import * as S from '../openapi/schemas.js';
import type { ApiDeps, ApiRoute } from './api.js';
import { principalOf, tenantOf } from './principal.js';
import { parseRunStart } from './run-start.js';
import { parseEndTime, parseTime } from './time.js';
import { parseQuery } from './validate.js';

type RunListParams = Partial<Record<string, string | number | boolean>>;

export function ownRun(deps: ApiDeps, req: HttpRequest, tenant?: string): RunRecord {
  const id = req.params['id']!;
  const run = deps.runs.get(id);
  if (!run || run.tenant !== (tenant ?? tenantOf(req))) throw notFound(`run ${JSON.stringify(id)}`, 'id');
  return run;
}

const csv = (v: unknown) =>
  typeof v === 'string'
    ? v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
    : undefined;

export function runRoutes(deps: ApiDeps): ApiRoute[] {
  const { runs, registry, settings } = deps;
  const view = (run: RunRecord, expand?: Set<Expand>) =>
    runView(run, {
      automation: registry.get(run.automationId),
      // The detail (input, steps, trace) is read only when a section needs it: list pages skip it.
      detail: expand && expand.size > 0 ? runs.getDetail(run.id) : undefined,
      expand: expand ?? new Set(),
    });

  const time = (field: string, value: unknown, end = false): number | undefined => {
    if (typeof value !== 'string') return undefined;
    const ms = end ? parseEndTime(value) : parseTime(value);
    if (ms === undefined)
      throw invalid(
        field,
        `${field} must be an ISO date or time, epoch milliseconds or a relative time such as -7d`,
      );
    return ms;
  };
  const maxOf = (...v: (number | undefined)[]) =>
    v.some((x) => x !== undefined) ? Math.max(...v.filter((x): x is number => x !== undefined)) : undefined;
  const minOf = (...v: (number | undefined)[]) =>
    v.some((x) => x !== undefined) ? Math.min(...v.filter((x): x is number => x !== undefined)) : undefined;

  function listQuery(req: HttpRequest, tenant: string, tenantSources: (s: string) => string): RunListQuery {
    const p = parseQuery<RunListParams>(S.RunListQuery, req.query);
    const q: RunListQuery = {
      tenant,
      limit: Math.min(Number(p['limit'] ?? settings.listDefaultLimit), settings.listMaxLimit),
      sort: p['sort'] === 'completed_at' || p['sort'] === 'completedAt' ? 'completedAt' : 'createdAt',
      order: p['order'] === 'asc' ? 'asc' : 'desc',
    };
    const types = csv(p['type']);
    if (types) q.types = types;
    const sources = csv(p['source']);
    if (sources) q.sources = sources.map(tenantSources);
    const statuses = csv(p['status']);
    if (statuses) q.statuses = statuses;
    const triggers = csv(p['trigger']);
    if (triggers) q.triggers = triggers;
    const by = csv(p['triggered_by']);
    if (by) q.triggeredBy = by.map((b) => (b === 'system' ? '__system__' : b));
    if (typeof p['source_ref'] === 'string') q.sourceRef = p['source_ref'];
    const batches = csv(p['batch_id']);
    if (batches) q.batchIds = batches;
    const examples = csv(p['example_id']);
    if (examples) q.exampleIds = examples;
    if (typeof p['example_id_contains'] === 'string') q.exampleIdContains = p['example_id_contains'];
    const cFrom = maxOf(time('from', p['from']), time('created_after', p['created_after']));
    const cTo = minOf(time('to', p['to'], true), time('created_before', p['created_before'], true));
    if (cFrom !== undefined) q.createdFrom = cFrom;
    if (cTo !== undefined) q.createdTo = cTo;
    const dFrom = time('completed_after', p['completed_after']);
    const dTo = time('completed_before', p['completed_before'], true);
    if (dFrom !== undefined) q.completedFrom = dFrom;
    if (dTo !== undefined) q.completedTo = dTo;
    if (typeof p['cursor'] === 'string') q.cursor = p['cursor'];
    if (typeof p['offset'] === 'number') q.offset = p['offset'];
    const ids = csv(p['ids']);
    if (ids) q.ids = ids;
    if (typeof p['experiments'] === 'boolean') q.experiments = p['experiments'];
    const rs = csv(p['review_status']);
    if (rs) q.reviewStatuses = rs;
    const rv = csv(p['review_verdict']);
    if (rv) q.reviewVerdicts = rv;
    if (p['has_review'] === true) q.hasReview = true;
    if (p['has_review'] === false || p['no_review'] === true)
      q.hasReview = q.hasReview === true ? true : false;
    if (p['has_review'] === true && p['no_review'] === true)
      throw invalid('no_review', 'has_review and no_review cannot both be true');
    if (typeof p['has_corrections'] === 'boolean') q.hasCorrections = p['has_corrections'];
    if (typeof p['review_note_contains'] === 'string') q.reviewNoteContains = p['review_note_contains'];
    const pair = (a: string, b: string): [number | undefined, number | undefined] | undefined => {
      const lo = time(a, p[a]);
      const hi = time(b, p[b], true);
      return lo === undefined && hi === undefined ? undefined : [lo, hi];
    };
    const rc = pair('review_created_after', 'review_created_before');
    if (rc) q.reviewCreated = rc;
    const ru = pair('review_updated_after', 'review_updated_before');
    if (ru) q.reviewUpdated = ru;
    const rcl = pair('review_closed_after', 'review_closed_before');
    if (rcl) q.reviewClosed = rcl;
    if (p['since_last_closed'] === true) {
      const last = deps.lastReviewClosedAt(tenant);
      if (last !== undefined) q.createdAfterExclusive = last;
    }
    if (typeof p['sample_rate'] === 'number') q.sampleRate = p['sample_rate'];
    return q;
  }

  const waitSeconds = (req: HttpRequest): { version?: string; wait?: number } => {
    const q = parseQuery<{ version?: string; wait_for_completion?: number }>(S.RunStartQuery, req.query);
    const out: { version?: string; wait?: number } = {};
    if (q.version !== undefined) out.version = q.version;
    if (q.wait_for_completion !== undefined && q.wait_for_completion > 0) out.wait = q.wait_for_completion;
    return out;
  };

  return [
    {
      method: 'POST',
      path: '/runs',
      operationId: 'startRun',
      summary: 'Start a run (asynchronous, or wait up to wait_for_completion seconds)',
      tag: 'runs',
      query: S.RunStartQuery,
      body: {
        schema: S.RunStartBody,
        contentTypes: ['application/json', 'multipart/form-data'],
        description:
          'multipart parts: target, input (JSON), overrides (JSON), metadata (JSON), files.<field> (file)',
      },
      maxBodyBytes: settings.maxUploadBytes + 1024 * 1024,
      responses: {
        200: { description: 'the run (finished when it completed within the wait)', schema: S.Run },
      },
      async handle(req, res) {
        const p = principalOf(req);
        const q = waitSeconds(req);
        const parsed = await parseRunStart(
          req,
          { files: deps.files, tmpDir: deps.tmpDir, maxUploadBytes: settings.maxUploadBytes },
          p.tenant,
        );
        let run: RunRecord;
        try {
          run = await runs.start({
            target: parsed.target,
            version: q.version,
            input: parsed.input,
            files: parsed.files,
            overrides: parsed.overrides,
            metadata: parsed.metadata,
            principal: p,
          });
        } finally {
          await Promise.all(parsed.temps.map((t) => rm(t, { force: true })));
        }
        if (q.wait !== undefined) run = await runs.waitFor(run.id, q.wait * 1000);
        res.json(view(run));
      },
    },
    {
      method: 'POST',
      path: '/runs/{id}/rerun',
      operationId: 'rerunRun',
      summary: 'Start a new run from a stored run’s input (version=original pins its commit)',
      tag: 'runs',
      query: S.RunStartQuery,
      responses: { 200: { description: 'the new run', schema: S.Run } },
      async handle(req, res) {
        const p = principalOf(req);
        const source = ownRun(deps, req, p.tenant);
        const q = waitSeconds(req);
        let run = await runs.rerun(source.id, q.version, p);
        if (q.wait !== undefined) run = await runs.waitFor(run.id, q.wait * 1000);
        res.json(view(run));
      },
    },
    {
      method: 'GET',
      path: '/runs',
      operationId: 'listRuns',
      summary: 'List runs (cursor pagination; filters as the spec)',
      tag: 'runs',
      query: S.RunListQuery,
      responses: { 200: { description: 'a page of runs', schema: S.RunsListResponse } },
      handle(req, res) {
        const tenant = tenantOf(req);
        const q = listQuery(req, tenant, (s) => {
          const alias = parseAlias(s);
          if (!alias) return s;
          try {
            return registry.find(s).id;
          } catch {
            return s;
          }
        });
        let page;
        try {
          page = deps.listRuns(q);
        } catch (err) {
          if (err instanceof CursorError) throw invalid('cursor', err.message);
          throw err;
        }
        res.json({ runs: page.runs.map((r) => view(r)), nextCursor: page.nextCursor });
      },
    },
    {
      method: 'GET',
      path: '/runs/{id}',
      operationId: 'getRun',
      summary: 'A run; expand adds input, usage, execution, debug',
      tag: 'runs',
      query: S.GetRunQuery,
      responses: { 200: { description: 'the run', schema: S.Run } },
      handle(req, res) {
        const run = ownRun(deps, req);
        const q = parseQuery<{ expand?: string }>(S.GetRunQuery, req.query);
        const expand = new Set<Expand>();
        for (const e of csv(q.expand) ?? []) {
          if (!EXPANDS.includes(e as Expand))
            throw invalid('expand', `expand takes ${EXPANDS.join(', ')}; got ${e}`);
          expand.add(e as Expand);
        }
        res.json(view(run, expand));
      },
    },
    {
      method: 'POST',
      path: '/runs/{id}/cancel',
      operationId: 'cancelRun',
      summary: 'Cancel: queued → cancelled at once; running → requested; terminal → already_terminal',
      tag: 'runs',
      responses: { 200: { description: 'cancellation state', schema: S.RunCancelResponse } },
      async handle(req, res) {
        const run = ownRun(deps, req);
        const result = await runs.cancel(run.id);
        res.json(cancelView(result.run, result.state, result.wasStatus));
      },
    },
    {
      method: 'GET',
      path: '/runs/{id}/events',
      operationId: 'getRunEvents',
      summary: 'Lifecycle timeline, strictly ordered by seq',
      tag: 'runs',
      responses: { 200: { description: 'events', schema: S.RunEventsResponse } },
      handle(req, res) {
        const run = ownRun(deps, req);
        res.json({ runId: run.id, events: runs.events(run.id).map(eventView) });
      },
    },
    {
      method: 'GET',
      path: '/runs/{id}/steps',
      operationId: 'getRunSteps',
      summary: 'Workflow steps, or an execution summary for agents',
      tag: 'runs',
      responses: { 200: { description: 'steps', schema: S.RunStepsResponse } },
      handle(req, res) {
        const run = ownRun(deps, req);
        res.json(stepsView(run, runs.getDetail(run.id)!));
      },
    },
    {
      method: 'GET',
      path: '/runs/{id}/trace',
      operationId: 'getRunTrace',
      summary: 'Step records (workflows) or model/tool trace events (agents)',
      tag: 'runs',
      responses: { 200: { description: 'trace', schema: S.RunTraceResponse } },
      handle(req, res) {
        const run = ownRun(deps, req);
        res.json({ runId: run.id, type: run.type, events: runs.getDetail(run.id)!.trace });
      },
    },
    {
      method: 'GET',
      path: '/runs/{id}/usage',
      operationId: 'getRunUsage',
      summary: 'Tokens, credits, duration and counters',
      tag: 'runs',
      responses: { 200: { description: 'usage', schema: S.RunUsageResponse } },
      handle(req, res) {
        const run = ownRun(deps, req);
        res.json({
          runId: run.id,
          ...usageView(run, runs.getDetail(run.id)!),
          execution: { status: run.status },
        });
      },
    },
    {
      method: 'GET',
      path: '/runs/{id}/scores',
      operationId: 'getRunScores',
      summary: 'Automated evaluator results of the run',
      tag: 'runs',
      responses: { 200: { description: 'scores', schema: S.RunScoresResponse } },
      handle(req, res) {
        const run = ownRun(deps, req);
        res.json({ runId: run.id, scores: deps.scores.list(run.id) });
      },
    },
  ];
}
