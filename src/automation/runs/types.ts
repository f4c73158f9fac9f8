// Run records as stored. The API shapes (runs/view.ts) are derived from these.

import type { AutomationType } from '../registry/manifest.js';
import type { StepReport, TokenUsage } from '../executor/protocol.js';
import type { RunErrorCode } from '../executor/failure.js';

import type { RunStatus } from './statuses.js';

export { QUEUED, RUN_STATUSES, TERMINAL, UNFINISHED_STATUSES, type RunStatus } from './statuses.js';

export interface RunGit {
  requestedRef: string;
  resolvedRef: string;
  resolvedTag: string | null;
  commitSha: string;
}

export interface RunArtifact {
  name: string;
  /** `output` (written by the run) or `input` (a snapshot of a file the run referenced). */
  role: 'output' | 'input';
  path: string;
  stepName: string | null;
  contentType: string;
  size: number;
  /**
   * The blob holding the bytes (internal, not on the wire): input files always; output files
   * when nodes share a blob store (docs/automation.md "Several nodes"), stored as the run ends.
   */
  sha256?: string;
}

/** Review summary the review side (src/automation/reviews) keeps on the run so list filters can read it. */
export interface RunReviewSummary {
  status: 'open' | 'closed' | 'wont_fix';
  verdict: 'correct' | 'incorrect' | null;
  note: string | null;
  hasCorrections: boolean;
  /** Field and file corrections of the review (RunReviewSummary.correctionCount); absent in older records. */
  correctionCount?: number;
  createdAt: number;
  updatedAt: number;
  closedAt: number | null;
}

export interface RunRecord {
  id: string;
  tenant: string;
  type: AutomationType;
  automationId: string;
  slug: string;
  name: string;
  version: string;
  versionId: string | null;
  git: RunGit;
  model: string | null;
  status: RunStatus;
  createdAt: number;
  startedAt: number | null;
  completedAt: number | null;
  cancelRequestedAt: number | null;
  sampleRank: number;
  /** `by` is the user id of the caller's key, or `__system__` for runs the service started. */
  trigger: { type: string; by: string };
  batchId: string | null;
  exampleId: string | null;
  output: unknown;
  /** The failure message of a failed or cancelled run (RunError on the wire). */
  error: string | null;
  /** Why it failed, as a stable code (executor/failure.ts); absent in records written before codes. */
  errorCode?: RunErrorCode | null;
  files: RunArtifact[];
  schemaValid: boolean | null;
  retry: { number: number; previousRunId: string | null; nextRunId: string | null };
  review: RunReviewSummary | null;
  timeoutMs: number;
  /**
   * The W3C traceparent of the run's start span when tracing was on at its start (tracing.ts):
   * the node executing the run continues that trace. Absent otherwise.
   */
  traceparent?: string;
}

export interface RunUsage {
  tokens: TokenUsage;
  creditsCharged: number;
  llmCallCount: number;
  ocrPagesProcessed: number;
  agentTurns: number;
}

export interface RunInputFile {
  field: string;
  name: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  /** The reusable file it came from, if any. */
  fileId: string | null;
  /** Artifact path of the run's own snapshot. */
  path: string;
}

export interface RunDetail {
  input: { args: unknown; files: RunInputFile[]; metadata: Record<string, unknown> };
  overrides: { steps?: Record<string, unknown> };
  steps: StepReport[];
  trace: Record<string, unknown>[];
  usage: RunUsage;
  manifest: Record<string, unknown>;
}

export interface RunEvent {
  seq: number;
  type: string;
  timestamp: string;
  status?: RunStatus;
  message?: string;
  metadata?: Record<string, unknown>;
}

/** The detail of a run that has not started (no input, steps or usage yet). */
export function emptyDetail(): RunDetail {
  return {
    input: { args: {}, files: [], metadata: {} },
    overrides: {},
    steps: [],
    trace: [],
    usage: emptyUsage(),
    manifest: {},
  };
}

export function emptyUsage(): RunUsage {
  return {
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    creditsCharged: 0,
    llmCallCount: 0,
    ocrPagesProcessed: 0,
    agentTurns: 0,
  };
}
