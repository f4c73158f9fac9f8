// Wire shapes of the automation API (camelCase JSON, as the server emits). Every object type is
// open (`[key: string]: unknown`) so fields added by a newer server do not break callers.

export type ExecutionStatus =
  | 'created'
  | 'pending'
  | 'running'
  | 'waiting'
  | 'finalizing'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'rejected';

export const TERMINAL_STATUSES: readonly string[] = ['completed', 'failed', 'cancelled', 'rejected'];

export type AutomationType = 'workflow' | 'agent';

export interface RunArtifact {
  name: string;
  role?: string;
  path: string;
  stepName?: string | null;
  contentType?: string;
  size?: number;
  [key: string]: unknown;
}

export interface Run {
  id: string;
  type: AutomationType;
  finished: boolean;
  sampleRank?: number;
  timing?: {
    createdAt?: string;
    startedAt?: string | null;
    completedAt?: string | null;
    durationMs?: number | null;
    cancelRequestedAt?: string | null;
    [key: string]: unknown;
  };
  source?: Record<string, unknown>;
  trigger?: { type?: string; by?: string | null; [key: string]: unknown };
  output?: unknown;
  files?: RunArtifact[];
  error?: string | null;
  execution?: { status: ExecutionStatus | (string & {}); [key: string]: unknown };
  input?: { args?: unknown; files?: unknown; metadata?: unknown; [key: string]: unknown };
  usage?: RunUsage;
  [key: string]: unknown;
}

/** Answer of POST /runs and /runs/{id}/rerun: a finished Run, or `{ id, type, finished: false }`. */
export type RunStartResponse = Run;

/** A run that reached a terminal state; `run_and_wait` returns this. */
export type FinishedRun = Run & { finished: true; output: unknown };

export interface RunsListResponse {
  runs: Run[];
  nextCursor: string | null;
  [key: string]: unknown;
}

export interface RunCancelResponse {
  id: string;
  type: AutomationType;
  finished: boolean;
  execution: { status: string; [key: string]: unknown };
  cancellation: {
    state: 'cancelled' | 'requested' | 'already_terminal';
    wasStatus?: string;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export interface RunEvent {
  type: string;
  timestamp: string;
  status?: string;
  message?: string;
  metadata?: unknown;
  [key: string]: unknown;
}

export interface RunUsage {
  tokens?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number };
  creditsCharged?: number;
  durationMs?: number | null;
  llmCallCount?: number;
  ocrPagesProcessed?: number;
  agentTurns?: number;
  [key: string]: unknown;
}

export interface EvalResult {
  id?: string;
  runId?: string;
  evaluatorName: string;
  evaluatorType: string;
  score: number;
  passed: boolean;
  label?: string | null;
  weight?: number;
  passThreshold?: number;
  details?: unknown;
  error?: string | null;
  [key: string]: unknown;
}

export interface OffsetPage<T> {
  data: T[];
  total: number;
  limit: number;
  offset: number;
  [key: string]: unknown;
}

export interface AutomationSummary {
  id: string;
  type: AutomationType;
  slug: string;
  name: string;
  description?: string | null;
  status?: string;
  version?: string | null;
  triggers?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface AutomationVersion {
  id: string;
  automationId: string;
  version: string;
  sourceRef?: string;
  isCurrent?: boolean;
  createdAt?: string;
  [key: string]: unknown;
}

export interface SyncResponse {
  automation: {
    id: string;
    type: AutomationType;
    slug: string;
    status: string;
    updatedAt?: string;
    [key: string]: unknown;
  };
  release: { version: string; tag: string; commit: string; [key: string]: unknown };
  warnings: unknown[];
  [key: string]: unknown;
}

export interface DatasetExample {
  id: string;
  name?: string;
  automationId?: string;
  automationType?: AutomationType;
  input?: unknown;
  expected?: unknown;
  expectedFiles?: { name: string; url?: string }[];
  metadata?: unknown;
  annotation?: string | null;
  rowOrder?: number;
  overrides?: unknown;
  latestRunId?: string | null;
  [key: string]: unknown;
}

export interface FileList {
  files: string[];
  [key: string]: unknown;
}

export interface ExperimentSummary {
  id: string;
  automationId?: string;
  status: 'queued' | 'running' | 'completed' | (string & {});
  runCount?: number;
  completedCount?: number;
  passedCount?: number;
  failedCount?: number;
  avgScore?: number | null;
  [key: string]: unknown;
}

export interface ExperimentDetail extends ExperimentSummary {
  runs?: { id: string; status: string; exampleId?: string; [key: string]: unknown }[];
  resultsByRun?: Record<string, EvalResult[]>;
}

export interface ExperimentCreate {
  /** Example ids; omit for the whole dataset. */
  examples?: string[];
  batchConcurrency?: number;
  sourceRef?: string;
  [key: string]: unknown;
}

export interface ExperimentCreateResponse {
  id: string;
  runs: { id: string; exampleId: string; [key: string]: unknown }[];
  total: number;
  [key: string]: unknown;
}

/** One line of the experiment NDJSON stream. */
export interface ExperimentStreamEvent {
  type: string;
  experimentId?: string;
  runId?: string;
  exampleId?: string;
  status?: string;
  score?: number | null;
  passed?: boolean | null;
  [key: string]: unknown;
}

export interface ReviewCorrection {
  kind: 'field' | 'file';
  path: string;
  label?: string;
  originalValue?: unknown;
  correctedValue?: unknown;
  note?: string;
  correctedArtifactPath?: string;
  [key: string]: unknown;
}

export interface RunReviewRequest {
  verdict?: 'correct' | 'incorrect' | null;
  status?: 'open' | 'closed' | 'wont_fix';
  note?: string | null;
  correctedOutput?: unknown;
  corrections?: ReviewCorrection[];
  [key: string]: unknown;
}

export interface StoredFile {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  purpose?: string | null;
  createdAt?: string;
  [key: string]: unknown;
}

export interface AuthCheckResponse {
  ok?: boolean;
  tenantId?: string;
  userId?: string | null;
  keyId?: string;
  scope?: string[];
  [key: string]: unknown;
}

/** Any JSON object answer whose fields the spec leaves open. */
export type JsonObject = Record<string, unknown>;
