// Stored run → the public wire shapes (src/automation/wire/runs.ts, mirroring the product SDK's
// types): the Run of GET /runs/{id} with its optional `expand` sections, the RunListItem of
// GET /runs, RunAccepted for a start that has not finished, and the sub-resources. Sluice-only
// data stays in the store or moves behind `expand=debug` (whose `observability` is open).

import type { AutomationRecord } from '../registry/service.js';
import type {
  AgentRunExecution,
  EvalResult as WireEvalResult,
  Run,
  RunAccepted,
  RunArtifact as WireArtifact,
  RunCancelResponse,
  RunEvent as WireEvent,
  RunExecutionMeta,
  RunListItem,
  RunReviewSummary as WireReviewSummary,
  RunSource,
  RunTraceEvent as WireTraceEvent,
  RunTrigger,
  RunUsage as WireUsage,
  WorkflowRunExecution,
} from '../wire/runs.js';
import type { RunReview } from '../wire/reviews.js';
import type { EvalResult } from './scores.js';
import { runTraceId } from './tracing.js';
import {
  TERMINAL,
  type RunArtifact,
  type RunDetail,
  type RunEvent,
  type RunRecord,
  type RunReviewSummary,
  type RunStatus,
} from './types.js';

export type Expand = 'input' | 'usage' | 'execution' | 'debug';
export const EXPANDS: readonly Expand[] = ['input', 'usage', 'execution', 'debug'];

/** The internal `trigger.by` of runs the service started itself. */
export const SYSTEM_USER = '__system__';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function durationMs(run: RunRecord): number | null {
  if (run.startedAt === null) return null;
  return (run.completedAt ?? Date.now()) - run.startedAt;
}

/** What a view needs besides the record; the route fills it from the services. */
export interface ViewContext {
  /** The run's automation as the registry has it now (undefined when it is gone). */
  automation?: AutomationRecord | undefined;
  /** Status of another run (the retry that followed this one). */
  statusOf(runId: string): RunStatus | undefined;
}

export function reviewSummaryView(r: RunReviewSummary): WireReviewSummary {
  return {
    verdict: r.verdict,
    status: r.status,
    hasNote: (r.note ?? '') !== '',
    // Records written before the count was kept only know whether there were any.
    correctionCount: r.correctionCount ?? (r.hasCorrections ? 1 : 0),
  };
}

function executionMeta(run: RunRecord, ctx: ViewContext): RunExecutionMeta {
  const next = run.retry.nextRunId;
  return {
    status: run.status,
    schemaValid: run.schemaValid,
    batchId: run.batchId,
    retry: {
      number: run.retry.number,
      previousRunId: run.retry.previousRunId,
      nextRun: next === null ? null : { id: next, status: ctx.statusOf(next) ?? 'unknown' },
    },
    review: run.review ? reviewSummaryView(run.review) : null,
  };
}

/** RunTrigger.by is a person; a run the service started (experiments) has none. */
export function triggerView(run: RunRecord): RunTrigger {
  const by = run.trigger.by;
  // Sluice keys name a user id, not a person's name or address: those stay empty.
  return {
    type: run.trigger.type,
    // A run mail started names its sender (the envelope address), which is also its address.
    by:
      by === '' || by === SYSTEM_USER
        ? null
        : { id: by, name: null, email: run.trigger.type === 'email' ? by : '' },
  };
}

function sourceView(run: RunRecord, detail: ViewContext | undefined): RunSource {
  const out: RunSource = {
    id: run.automationId,
    name: run.name,
    version: run.version,
    versionId: run.versionId,
    slug: run.slug,
    model: run.model,
    git: run.git,
  };
  if (detail) {
    out.automationFound = detail.automation !== undefined;
    out.implementationAvailable = detail.automation !== undefined && detail.automation.status === 'active';
    out.currentVersion = detail.automation?.version ?? null;
  }
  return out;
}

function head(run: RunRecord, ctx: ViewContext, detail: boolean) {
  const out = {
    id: run.id,
    type: run.type,
    finished: TERMINAL.has(run.status),
    sampleRank: run.sampleRank,
    timing: {
      createdAt: new Date(run.createdAt).toISOString(),
      startedAt: iso(run.startedAt),
      completedAt: iso(run.completedAt),
      durationMs: durationMs(run),
      cancelRequestedAt: iso(run.cancelRequestedAt),
    },
    source: sourceView(run, detail ? ctx : undefined),
    trigger: triggerView(run),
  };
  return run.exampleId
    ? { ...out, eval: { example: run.exampleId, exampleId: run.exampleId, score: null, passed: null } }
    : out;
}

/** Run.output is an object (or null): any other JSON value a workflow returns goes under `value`. */
export function outputView(output: unknown): Record<string, unknown> | null {
  if (output === null || output === undefined) return null;
  if (typeof output === 'object' && !Array.isArray(output)) return output as Record<string, unknown>;
  return { value: output };
}

export function artifactView(f: RunArtifact): WireArtifact {
  const out: WireArtifact = { name: f.name, role: f.role, path: f.path };
  if (f.stepName !== null) out.stepName = f.stepName;
  out.contentType = f.contentType;
  out.size = f.size;
  return out;
}

export function listItemView(run: RunRecord, ctx: ViewContext): RunListItem {
  const out: RunListItem = { ...head(run, ctx, false), execution: executionMeta(run, ctx) };
  if (TERMINAL.has(run.status)) out.error = run.error;
  return out;
}

export interface RunViewOptions extends ViewContext {
  /** Read only when a section needs it. */
  detail?: RunDetail | undefined;
  expand?: ReadonlySet<Expand>;
  /** The run's full review (null: none), read only for `expand=execution`. */
  review?: RunReview | null;
}

export function runView(run: RunRecord, opts: RunViewOptions): Run {
  const out: Run = { ...head(run, opts, true), execution: executionMeta(run, opts) };
  if (TERMINAL.has(run.status)) {
    // Terminal runs always carry output, files and error (null when there is none).
    out.output = outputView(run.output);
    out.files = run.files.map(artifactView);
    out.error = run.error;
  }
  const expand = opts.expand ?? new Set<Expand>();
  const detail = opts.detail;
  if (detail && expand.has('input'))
    out.input = {
      args: detail.input.args,
      files: detail.input.files.map((f) => ({ name: f.name })),
      metadata: detail.input.metadata,
    };
  if (detail && expand.has('usage')) out.usage = usageView(run, detail);
  if (detail && expand.has('execution'))
    out.execution = executionView(run, detail, opts, opts.review ?? null);
  if (expand.has('debug'))
    out.debug = {
      traceId: runTraceId(run),
      observability: {
        commitSha: run.git.commitSha,
        traceEvents: detail?.trace.length ?? 0,
        failure: run.error === null ? null : { code: run.errorCode ?? null, message: run.error },
        timeoutMs: run.timeoutMs,
      },
    };
  return out;
}

function executionView(
  run: RunRecord,
  detail: RunDetail,
  ctx: ViewContext,
  review: RunReview | null,
): WorkflowRunExecution | AgentRunExecution {
  // The full execution's `review` is the full RunReview (as GET /runs/{id}/reviews has it), not
  // the summary the run's other views carry.
  const core = { ...executionMeta(run, ctx), review };
  if (run.type === 'workflow') return { ...core, steps: detail.steps, definitionSnapshot: detail.manifest };
  return {
    ...core,
    files: { output: run.files.filter((f) => f.role === 'output').map((f) => ({ name: f.name })) },
  };
}

export function usageView(run: RunRecord, detail: RunDetail): WireUsage {
  return {
    tokens: { ...detail.usage.tokens },
    creditsCharged: detail.usage.creditsCharged,
    durationMs: durationMs(run),
    llmCallCount: detail.usage.llmCallCount,
    ocrPagesProcessed: detail.usage.ocrPagesProcessed,
    agentTurns: detail.usage.agentTurns,
  };
}

export function acceptedView(run: RunRecord): RunAccepted {
  return { id: run.id, type: run.type, finished: false };
}

export function eventView(e: RunEvent): WireEvent {
  const out: WireEvent = { type: e.type, timestamp: e.timestamp };
  if (e.status !== undefined) out.status = e.status;
  if (e.message !== undefined) out.message = e.message;
  if (e.metadata !== undefined) out.metadata = e.metadata;
  return out;
}

/** Workflow steps; for an agent one summary entry (RunStepsResponse.steps is open). */
export function stepsView(run: RunRecord, detail: RunDetail): unknown[] {
  if (run.type === 'workflow') return detail.steps;
  return [
    {
      name: 'agent',
      type: 'agent',
      status: run.status,
      model: run.model,
      agentTurns: detail.usage.agentTurns,
      llmCallCount: detail.usage.llmCallCount,
      toolCalls: detail.trace.filter((t) => t['type'] === 'tool.result').length,
      startedAt: iso(run.startedAt),
      completedAt: iso(run.completedAt),
    },
  ];
}

const TRACE_TEXT = ['type', 'phase', 'stepName', 'status'] as const;
const TRACE_NULLABLE = ['startedAt', 'completedAt', 'message'] as const;

/**
 * A trace record as RunTraceEvent: open, but its named fields have fixed types. Records come from
 * the worker (and an automation's own code), so a named field of another type is made a string.
 */
export function traceView(entry: Record<string, unknown>): WireTraceEvent {
  const out: Record<string, unknown> = { ...entry };
  // Scalars read as they print; objects and arrays as JSON.
  const text = (v: unknown) => JSON.stringify(v) ?? '';
  for (const k of TRACE_TEXT)
    if (k in out && typeof out[k] !== 'string') {
      if (out[k] === undefined || out[k] === null) delete out[k];
      else out[k] = text(out[k]);
    }
  for (const k of TRACE_NULLABLE)
    if (k in out && out[k] !== null && typeof out[k] !== 'string') {
      if (out[k] === undefined) delete out[k];
      else out[k] = text(out[k]);
    }
  return out;
}

export function cancelView(
  run: RunRecord,
  state: RunCancelResponse['cancellation']['state'],
  wasStatus: RunStatus,
): RunCancelResponse {
  return {
    id: run.id,
    type: run.type,
    finished: TERMINAL.has(run.status),
    execution: { status: run.status },
    cancellation: { state, wasStatus },
  };
}

export function scoreView(r: EvalResult): WireEvalResult {
  return {
    id: r.id,
    runId: r.runId,
    automationId: r.automationId,
    evaluatorName: r.evaluatorName,
    evaluatorType: r.evaluatorType,
    score: r.score,
    passed: r.passed,
    label: r.label,
    weight: r.weight,
    passThreshold: r.passThreshold,
    description: r.description,
    details: r.details,
    error: r.error,
    createdAt: r.createdAt,
  };
}
