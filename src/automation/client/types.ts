// Result and request types of the client: the public wire types themselves (src/automation/wire,
// each the static type of the TypeBox schema named after the product SDK's type), so what the
// client promises and what the server is checked against are one definition. Type-only imports,
// but for the run statuses (runs/statuses.ts, plain lists importing nothing): the client carries
// no schema code at run time.

import { TERMINAL_STATUSES as RUN_TERMINAL_STATUSES } from '../runs/statuses.js';
import type { File, Run } from '../wire/index.js';

export type {
  AbortFileUploadResponse,
  AuthCheckResponse,
  AutomationDetail,
  AutomationSummary,
  AutomationTriggersResponse,
  AutomationType,
  AutomationVersion,
  AutomationsExperimentsListResponse,
  AutomationsSyncResponse,
  DatasetExample,
  DatasetExampleExpectedFileList,
  DatasetExampleExpectedFileRenameResponse,
  DatasetExampleExpectedFileUploadResponse,
  DatasetExampleInputFileList,
  DatasetExampleInputFileRenameResponse,
  DatasetExampleInputFileUploadResponse,
  DatasetExampleList,
  DatasetExampleMutation,
  DatasetExampleUpdate,
  DatasetImportResponse,
  DeleteFileResponse,
  EvalResult,
  EvaluatorConfigResponse,
  ExampleRunResponse,
  ExecutionStatus,
  Experiment,
  ExperimentCreate,
  ExperimentCreateResponse,
  ExperimentDetail,
  ExperimentRef,
  File,
  FilesUploadsCreateResponse,
  ListAutomationVersionsResponse,
  ListAutomationsResponse,
  MultipartFileUploadFallback,
  PresignedFileUploadSession,
  PromoteRunRequest,
  PromoteRunResponse,
  Run,
  RunAccepted,
  RunArtifact,
  RunArtifactsResponse,
  RunCancelResponse,
  RunEvent,
  RunEventsResponse,
  RunListItem,
  RunReviewCorrection,
  RunReviewDetail,
  RunReviewExpectedArtifacts,
  RunReviewExpectedFileMutationResponse,
  RunReviewExpectedFileUpdateResponse,
  RunReviewHealthResponse,
  RunReviewRequest,
  RunScoresResponse,
  RunStartResponse,
  RunStepsResponse,
  RunTraceResponse,
  RunUsage,
  RunUsageResponse,
  RunsListResponse,
} from '../wire/index.js';

/** The statuses a run ends in (the service's own list, runs/statuses.ts). */
export const TERMINAL_STATUSES: readonly string[] = RUN_TERMINAL_STATUSES;

/** A run that reached a terminal state; `run_and_wait` returns this, always with an `output` key. */
export type FinishedRun = Omit<Run, 'finished' | 'output'> & {
  finished: true;
  output: Run['output'] | undefined;
};

/** Metadata of a reusable file (the wire type `File`, under a name that does not shadow the DOM's). */
export type StoredFile = File;

/** The paging envelope of the automation, version and example lists. */
export type OffsetPage<T> = { data: T[]; total: number; limit: number; offset: number };

/**
 * One line of the experiment NDJSON stream. The SDK types the stream as bytes, so the events
 * have no wire schema; these are the fields the server writes.
 */
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

/** A JSON answer the SDK types as `unknown` (example file deletes). */
export type JsonObject = Record<string, unknown>;
