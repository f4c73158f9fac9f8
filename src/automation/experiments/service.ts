// Experiments as the API shows them: starting one (examples and source ref checked once, for
// both the JSON and the streaming route), listing, detail, cancel, exports and resolving an id,
// each answer built to exactly the SDK's type (Experiment, ExperimentDetail, ExperimentRef …).
// Every lookup names the caller's tenant: another tenant's experiment is a 404.

import type { Principal } from '../../core/auth/types.js';
import { invalid, notFound } from '../errors.js';
import type { ExampleStore } from '../datasets/store.js';
import type { ExampleRecord } from '../datasets/types.js';
import { parseEndTime, parseTime } from '../http/time.js';
import type { AutomationRecord, AutomationRegistry } from '../registry/service.js';
import type { EvalResult as StoredEvalResult, ScoreStore } from '../runs/scores.js';
import type { RunService } from '../runs/service.js';
import type { EvalResult } from '../wire/runs.js';
import type {
  AutomationsExperimentsListResponse,
  Experiment,
  ExperimentCreateResponse,
  ExperimentDetail,
  ExperimentRef,
} from '../wire/experiments.js';
import { csvChunks, exportRows, jsonChunks } from './export.js';
import type { ExperimentCreateBody, ExperimentListQuery, ExportFormat } from './requests.js';
import type { ExperimentRunner } from './runner.js';
import type { ExperimentEvent, ExperimentRecord } from './types.js';

export interface ExperimentServiceDeps {
  registry: AutomationRegistry;
  examples: ExampleStore;
  runs: Pick<RunService, 'get'>;
  scores: ScoreStore;
  runner: ExperimentRunner;
  /** batchConcurrency when the request gives none (AUTOMATION_EXPERIMENT_CONCURRENCY). */
  defaultConcurrency: number;
}

/** A download: its name, content type and body in chunks. */
export interface ExportDocument {
  filename: string;
  contentType: string;
  chunks: AsyncIterable<Buffer>;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** `7d ago` and `7 days ago` read as `-7d`; everything else goes to the shared time parser. */
export function relativeDate(text: string): string {
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

/** The SDK's Experiment: counts over the runs that finished (or could not start). */
export function summary(e: ExperimentRecord): Experiment {
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
    createdAt: iso(e.createdAt),
    completedAt: e.completedAt === null ? null : iso(e.completedAt),
    version: e.version,
  };
}

/** Exactly the SDK's EvalResult fields, whatever else a stored record carries. */
export function evalResultView(r: StoredEvalResult): EvalResult {
  return {
    id: r.id,
    runId: r.runId,
    automationId: r.automationId ?? null,
    evaluatorName: r.evaluatorName,
    evaluatorType: r.evaluatorType,
    score: r.score ?? null,
    passed: r.passed ?? null,
    label: r.label ?? null,
    weight: r.weight ?? null,
    passThreshold: r.passThreshold ?? null,
    description: r.description ?? null,
    details: r.details ?? null,
    error: r.error ?? null,
    createdAt: r.createdAt,
  };
}

export class ExperimentService {
  constructor(private readonly deps: ExperimentServiceDeps) {}

  /** The automation of a path `{id}` (id or typed alias; a `@version` suffix is ignored). */
  automation(idOrAlias: string): Promise<AutomationRecord> {
    return this.deps.registry.find(idOrAlias.split('@')[0]!);
  }

  /**
   * Checks the request (examples of the caller's dataset, a source ref that resolves) and starts
   * the experiment. `listener`, if given, hears every completed run and then `null` at the end.
   */
  async start(
    automation: AutomationRecord,
    principal: Pick<Principal, 'tenant' | 'user'>,
    body: ExperimentCreateBody,
    listener?: (e: ExperimentEvent | null) => void,
  ): Promise<ExperimentRecord> {
    const all = await this.deps.examples.list(principal.tenant, automation.id);
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
    if (body.sourceRef !== undefined) await this.deps.registry.resolveVersion(automation, body.sourceRef);
    return this.deps.runner.start({
      automation,
      examples: chosen,
      concurrency: body.batchConcurrency ?? this.deps.defaultConcurrency,
      version: body.sourceRef,
      principal,
      ...(listener ? { listener } : {}),
    });
  }

  createResponse(e: ExperimentRecord): ExperimentCreateResponse {
    return {
      id: e.id,
      runs: e.runs.map((r) => ({ id: r.id, exampleId: r.exampleId })),
      total: e.examples.length,
    };
  }

  /** Newest first; the date bounds are inclusive. */
  async list(
    tenant: string,
    automation: AutomationRecord,
    q: ExperimentListQuery,
  ): Promise<AutomationsExperimentsListResponse> {
    const now = Date.now();
    const bound = (field: 'fromDate' | 'toDate', text: string | undefined) => {
      if (text === undefined) return undefined;
      const ms = (field === 'fromDate' ? parseTime : parseEndTime)(relativeDate(text), now);
      if (ms === undefined) throw invalid(field, `cannot read ${JSON.stringify(text)} as a date`);
      return ms;
    };
    const from = bound('fromDate', q.fromDate);
    const to = bound('toDate', q.toDate);
    const all = (await this.deps.runner.list(tenant, automation.id)).filter(
      (e) => (from === undefined || e.createdAt >= from) && (to === undefined || e.createdAt <= to),
    );
    const limit = q.limit ?? 50;
    const offset = q.offset ?? 0;
    return { data: all.slice(offset, offset + limit).map(summary), total: all.length, limit, offset };
  }

  /** The tenant's experiment of this automation, or a 404. */
  async find(tenant: string, automation: AutomationRecord, experimentId: string): Promise<ExperimentRecord> {
    const e = await this.deps.runner.get(tenant, experimentId);
    if (!e || e.automationId !== automation.id)
      throw notFound(`experiment ${JSON.stringify(experimentId)}`, 'experimentId');
    return e;
  }

  async detail(e: ExperimentRecord): Promise<ExperimentDetail> {
    const resultsByRun: Record<string, EvalResult[]> = {};
    const runs = [];
    for (const ref of e.runs) {
      const run = await this.deps.runs.get(ref.id);
      resultsByRun[ref.id] = (await this.deps.scores.list(ref.id)).map(evalResultView);
      runs.push({
        id: ref.id,
        status: run?.status ?? 'unknown',
        exampleId: ref.exampleId,
        exampleName: ref.exampleName,
        createdAt: iso(ref.createdAt),
        completedAt: run?.completedAt ? iso(run.completedAt) : null,
      });
    }
    return { ...summary(e), runs, resultsByRun };
  }

  /** Stops new starts and cancels the runs in flight; answers once they have ended. */
  async cancel(
    tenant: string,
    automation: AutomationRecord,
    experimentId: string,
  ): Promise<ExperimentDetail> {
    const e = await this.find(tenant, automation, experimentId);
    return this.detail((await this.deps.runner.cancel(tenant, e.id)) ?? e);
  }

  async resolve(tenant: string, experimentId: string): Promise<ExperimentRef> {
    const e = await this.deps.runner.get(tenant, experimentId);
    if (!e) throw notFound(`experiment ${JSON.stringify(experimentId)}`, 'experimentId');
    return { id: e.id, automationId: e.automationId };
  }

  /**
   * One experiment's rows, or (no id) those of every experiment of the automation, oldest
   * first. CSV goes as application/octet-stream: the SDK's response check accepts JSON,
   * octet-stream and zip content types only, and reads the body as text either way.
   */
  async export(
    tenant: string,
    automation: AutomationRecord,
    experimentId: string | undefined,
    format: ExportFormat,
  ): Promise<ExportDocument> {
    const list =
      experimentId === undefined
        ? (await this.deps.runner.list(tenant, automation.id)).reverse()
        : [await this.find(tenant, automation, experimentId)];
    const rows = exportRows(
      list,
      (id) => this.deps.scores.list(id),
      (id) => this.deps.runs.get(id),
    );
    const base = experimentId ?? `${automation.slug}-results`;
    return format === 'csv'
      ? { filename: `${base}.csv`, contentType: 'application/octet-stream', chunks: csvChunks(rows) }
      : {
          filename: `${base}.json`,
          contentType: 'application/json; charset=utf-8',
          chunks: jsonChunks(rows),
        };
  }
}
