// Stored run → the reference's Run JSON (camelCase; optional sections chosen by `expand`).

import type { AutomationRecord } from '../registry/service.js';
import { TERMINAL, type RunDetail, type RunEvent, type RunRecord } from './types.js';

export type Expand = 'input' | 'usage' | 'execution' | 'debug';
export const EXPANDS: readonly Expand[] = ['input', 'usage', 'execution', 'debug'];

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function durationMs(run: RunRecord): number | null {
  if (run.startedAt === null) return null;
  return (run.completedAt ?? Date.now()) - run.startedAt;
}

export function runView(
  run: RunRecord,
  opts: {
    automation?: AutomationRecord | undefined;
    detail?: RunDetail | undefined;
    expand?: ReadonlySet<Expand>;
  } = {},
): Record<string, unknown> {
  const finished = TERMINAL.has(run.status);
  const execution: Record<string, unknown> = {
    status: run.status,
    schemaValid: run.schemaValid,
    batchId: run.batchId,
    retry: { number: run.retry.number, previousRunId: run.retry.previousRunId, nextRun: run.retry.nextRunId },
  };
  if (run.review)
    execution['review'] = {
      ...run.review,
      createdAt: iso(run.review.createdAt),
      updatedAt: iso(run.review.updatedAt),
      closedAt: iso(run.review.closedAt),
    };
  const out: Record<string, unknown> = {
    id: run.id,
    type: run.type,
    finished,
    status: run.status,
    sampleRank: run.sampleRank,
    timing: {
      createdAt: iso(run.createdAt),
      startedAt: iso(run.startedAt),
      completedAt: iso(run.completedAt),
      durationMs: durationMs(run),
      cancelRequestedAt: iso(run.cancelRequestedAt),
    },
    source: {
      id: run.automationId,
      name: run.name,
      version: run.version,
      versionId: run.versionId,
      slug: run.slug,
      model: run.model,
      git: run.git,
      implementationAvailable: true,
      currentVersion: opts.automation?.version ?? null,
    },
    trigger: run.trigger,
    files: run.files,
    execution,
  };
  if (run.exampleId)
    out['eval'] = { example: run.exampleId, exampleId: run.exampleId, score: null, passed: null };
  if (finished) {
    out['output'] = run.output;
    out['error'] = run.error;
  }
  const expand = opts.expand ?? new Set<Expand>();
  const detail = opts.detail;
  if (detail && expand.has('input'))
    out['input'] = { args: detail.input.args, files: detail.input.files, metadata: detail.input.metadata };
  if (detail && expand.has('usage')) out['usage'] = usageView(run, detail);
  if (detail && expand.has('execution')) {
    if (run.type === 'workflow') {
      execution['steps'] = detail.steps;
      execution['definitionSnapshot'] = detail.manifest;
      execution['expected'] = null;
    } else {
      execution['files'] = { output: run.files.filter((f) => f.role === 'output') };
      execution['comparison'] = null;
      execution['definitionSnapshot'] = detail.manifest;
    }
    execution['overrides'] = detail.overrides;
  }
  if (expand.has('debug'))
    out['debug'] = {
      traceId: run.id,
      observability: { traceEvents: detail?.trace.length ?? 0, commitSha: run.git.commitSha },
    };
  return out;
}

export function usageView(run: RunRecord, detail: RunDetail): Record<string, unknown> {
  return {
    tokens: detail.usage.tokens,
    creditsCharged: detail.usage.creditsCharged,
    durationMs: durationMs(run),
    llmCallCount: detail.usage.llmCallCount,
    ocrPagesProcessed: detail.usage.ocrPagesProcessed,
    agentTurns: detail.usage.agentTurns,
    queueWaitMs: run.startedAt === null ? null : run.startedAt - run.createdAt,
  };
}

export function eventView(e: RunEvent): Record<string, unknown> {
  const out: Record<string, unknown> = { seq: e.seq, type: e.type, timestamp: e.timestamp };
  if (e.status !== undefined) out['status'] = e.status;
  if (e.message !== undefined) out['message'] = e.message;
  if (e.metadata !== undefined) out['metadata'] = e.metadata;
  return out;
}

export function stepsView(run: RunRecord, detail: RunDetail): Record<string, unknown> {
  if (run.type === 'workflow')
    return { runId: run.id, type: run.type, status: run.status, steps: detail.steps };
  return {
    runId: run.id,
    type: run.type,
    status: run.status,
    steps: [],
    summary: {
      agentTurns: detail.usage.agentTurns,
      llmCallCount: detail.usage.llmCallCount,
      toolCalls: detail.trace.filter((t) => t['type'] === 'tool.result').length,
      model: run.model,
    },
  };
}

export function cancelView(run: RunRecord, state: string, wasStatus: string): Record<string, unknown> {
  return {
    id: run.id,
    type: run.type,
    finished: TERMINAL.has(run.status),
    execution: { status: run.status },
    cancellation: { state, wasStatus },
  };
}

export function automationView(a: AutomationRecord, detail: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: a.id,
    type: a.type,
    slug: a.slug,
    alias: `${a.type}s.${a.slug}`,
    name: a.name,
    description: a.description,
    status: a.status,
    version: a.version,
    triggers: a.triggers,
    implementationAvailable: true,
    createdAt: a.createdAt,
    updatedAt: a.updatedAt,
  };
  if (detail) {
    out['inputSchema'] = a.inputSchema;
    out['outputSchema'] = a.outputSchema;
    out['model'] = a.model;
    out['release'] = { version: a.version, tag: a.tag, commit: a.commit };
  }
  return out;
}
