// Run shapes: starting a run, the run object with its optional expansions, the run list and
// the run sub-resources (artifacts, events, steps, trace, usage, scores, cancel).

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Body, Bool, Closed, Nullable, Num, OneOf, OpenRecord, RunFile, Str } from './common.js';
import { RUN_STATUSES } from '../runs/statuses.js';
import { RunReview } from './reviews.js';

const RunType = OneOf(['workflow', 'agent'] as const);

// ---- start ----

/** `{ "$fileId": "file_..." }` or `{ "$inline": { filename, mimeType, base64 } }`. */
const FileRef = Type.Union([
  Body({ $fileId: Str('Reusable file-pool id to materialize') }),
  Body({
    $inline: Body({
      filename: Str('Original filename for the materialized artifact'),
      mimeType: Str('MIME type for the materialized artifact'),
      base64: Str('Base64-encoded file bytes'),
    }),
  }),
]);

export const RunStartBody = Body(
  {
    target: Str('Automation target without a version suffix, e.g. workflows.invoice or agents.support.'),
    input: Type.Optional(OpenRecord('Scalar and structured automation arguments.')),
    files: Type.Optional(
      Type.Record(Type.String(), Type.Union([FileRef, Type.Array(FileRef)]), {
        description:
          'File inputs as ingress references; bytes can also go as multipart `files.<field>` parts.',
      }),
    ),
    overrides: Type.Optional(
      Body(
        { steps: Type.Optional(Type.Record(Type.String(), OpenRecord())) },
        { description: 'Per-step output overrides. Workflow runs only.' },
      ),
    ),
    metadata: Type.Optional(OpenRecord('Caller-supplied run metadata.')),
  },
  {
    $id: 'RunStartBody',
    description: 'Run envelope. Declare provenance with the `X-Eigenpal-Trigger` header (`api` or `cli`).',
  },
);
export type RunStartBody = Static<typeof RunStartBody>;

/** Other parts (`files.<fieldName>` file parts) are allowed: the SDK type has an index signature. */
export const RunStartMultipartRequest = Type.Object(
  {
    target: Str('Automation target, e.g. `workflows.invoice`.'),
    input: Type.Optional(Str('JSON-encoded scalar input object.')),
    overrides: Type.Optional(Str('JSON-encoded step overrides.')),
    metadata: Type.Optional(Str('JSON-encoded run metadata.')),
  },
  { $id: 'RunStartMultipartRequest', additionalProperties: true },
);
export type RunStartMultipartRequest = Static<typeof RunStartMultipartRequest>;

// ---- run parts ----

export const ExecutionStatus = OneOf(RUN_STATUSES, { $id: 'ExecutionStatus' });
export type ExecutionStatus = Static<typeof ExecutionStatus>;

export const RunTiming = Closed(
  {
    createdAt: Str(),
    startedAt: Nullable(Str()),
    completedAt: Nullable(Str()),
    durationMs: Nullable(Num()),
    cancelRequestedAt: Nullable(
      Str('When the user requested cancel; status may still be `running` until the worker stops.'),
    ),
  },
  { $id: 'RunTiming' },
);
export type RunTiming = Static<typeof RunTiming>;

export const RunSourceGit = Closed(
  {
    requestedRef: Nullable(Str()),
    resolvedRef: Nullable(Str()),
    resolvedTag: Nullable(Str()),
    commitSha: Nullable(Str()),
  },
  { $id: 'RunSourceGit' },
);
export type RunSourceGit = Static<typeof RunSourceGit>;

export const RunSource = Closed(
  {
    id: Str('Owning workflow id or agent id.'),
    name: Nullable(Str()),
    version: Nullable(Str('Workflow version label (workflow runs only).')),
    versionId: Type.Optional(Nullable(Str('Captured workflow version id (workflow runs only).'))),
    slug: Type.Optional(Nullable(Str('Agent slug (agent runs only).'))),
    model: Type.Optional(Nullable(Str('LLM model used (agent runs only).'))),
    git: Type.Optional(Nullable(RunSourceGit, { description: 'Git provenance (agent runs only).' })),
    implementationAvailable: Type.Optional(Bool('Run detail only.')),
    automationFound: Type.Optional(Bool('Run detail only.')),
    currentVersion: Type.Optional(Nullable(Str('Run detail only.'))),
  },
  { $id: 'RunSource' },
);
export type RunSource = Static<typeof RunSource>;

export const RunTrigger = Closed(
  {
    type: Nullable(Str()),
    by: Nullable(Closed({ id: Str(), name: Nullable(Str()), email: Str() })),
    email: Type.Optional(Type.Unknown({ description: 'Inbound email trigger details (agent runs).' })),
  },
  { $id: 'RunTrigger' },
);
export type RunTrigger = Static<typeof RunTrigger>;

export const RunEval = Closed(
  {
    example: Nullable(Str('Eval example label (agent example name or workflow example id).')),
    exampleId: Type.Optional(Nullable(Str('Workflow eval example folder id (workflow runs only).'))),
    score: Nullable(Num()),
    passed: Nullable(Bool()),
  },
  { $id: 'RunEval' },
);
export type RunEval = Static<typeof RunEval>;

export const RunError = Nullable(Str(), {
  $id: 'RunError',
  description: 'Terminal failure message. Null when the run succeeded or is still in flight.',
});
export type RunError = Static<typeof RunError>;

export const RunExecutionRetry = Closed(
  {
    number: Num('Retry attempt index (0 = original run).'),
    previousRunId: Nullable(Str('Run id of the prior attempt in the retry chain.')),
    nextRun: Nullable(Closed({ id: Str(), status: Str() })),
  },
  { $id: 'RunExecutionRetry' },
);
export type RunExecutionRetry = Static<typeof RunExecutionRetry>;

export const RunReviewSummary = Closed(
  {
    verdict: Nullable(OneOf(['correct', 'incorrect'] as const)),
    status: OneOf(['open', 'closed', 'wont_fix'] as const),
    hasNote: Bool('True when review notes were left.'),
    correctionCount: Num('Number of field/file corrections.'),
  },
  { $id: 'RunReviewSummary' },
);
export type RunReviewSummary = Static<typeof RunReviewSummary>;

const ExecutionCore = {
  status: ExecutionStatus,
  schemaValid: Nullable(Bool('Whether the completed output matched the output schema.')),
  batchId: Nullable(Str('Experiment batch id when the run is part of a batch.')),
  retry: RunExecutionRetry,
};

export const RunExecutionMeta = Closed(
  { ...ExecutionCore, review: Type.Optional(Nullable(RunReviewSummary)) },
  { $id: 'RunExecutionMeta' },
);
export type RunExecutionMeta = Static<typeof RunExecutionMeta>;

const Expected = Closed(
  { output: Type.Optional(Type.Unknown()), files: Type.Optional(Type.Array(RunFile)) },
  { description: 'Ground-truth expected output and files.' },
);

export const WorkflowRunExecution = Closed(
  {
    ...ExecutionCore,
    review: Type.Optional(Nullable(RunReview)),
    steps: Type.Array(Type.Unknown(), { description: 'Per-step executions of the workflow run.' }),
    definitionSnapshot: Type.Optional(Type.Unknown()),
    expected: Type.Optional(Expected),
  },
  { $id: 'WorkflowRunExecution' },
);
export type WorkflowRunExecution = Static<typeof WorkflowRunExecution>;

export const AgentRunExecution = Closed(
  {
    ...ExecutionCore,
    review: Type.Optional(Nullable(RunReview)),
    files: Closed({ output: Type.Array(RunFile, { description: 'Output artifacts the agent produced.' }) }),
    expected: Type.Optional(Expected),
    comparison: Type.Optional(Type.Unknown({ description: 'Expected-vs-actual comparison for eval runs.' })),
  },
  { $id: 'AgentRunExecution' },
);
export type AgentRunExecution = Static<typeof AgentRunExecution>;

export const RunExecution = Type.Union([WorkflowRunExecution, AgentRunExecution], { $id: 'RunExecution' });
export type RunExecution = Static<typeof RunExecution>;

export const RunArtifact = Closed(
  {
    name: Str(),
    role: Str('`input`, `output`, `debug`, `report`, or another stable artifact role.'),
    path: Str('Canonical artifact path for GET /runs/{id}/artifacts/{path}.'),
    stepName: Type.Optional(Str('Workflow step that produced the file, when known.')),
    contentType: Type.Optional(Nullable(Str())),
    size: Type.Optional(Nullable(Num())),
  },
  { $id: 'RunArtifact' },
);
export type RunArtifact = Static<typeof RunArtifact>;

export const RunInput = Closed(
  {
    args: Type.Unknown({ description: 'Input arguments the run was started with.' }),
    files: Type.Optional(Type.Array(RunFile, { description: 'Uploaded input files (agent runs only).' })),
    metadata: Type.Optional(Type.Unknown({ description: 'Caller-supplied run metadata, if any.' })),
  },
  { $id: 'RunInput' },
);
export type RunInput = Static<typeof RunInput>;

export const RunUsage = Closed(
  {
    tokens: Closed({
      input: Nullable(Num()),
      output: Nullable(Num()),
      cacheRead: Nullable(Num()),
      cacheWrite: Nullable(Num()),
    }),
    creditsCharged: Nullable(Num()),
    durationMs: Nullable(Num()),
    llmCallCount: Type.Optional(Num('LLM call count (workflow runs only).')),
    ocrPagesProcessed: Type.Optional(Num('OCR pages processed (workflow runs only).')),
    agentTurns: Type.Optional(Nullable(Num('Agent conversation turns (agent runs only).'))),
  },
  { $id: 'RunUsage' },
);
export type RunUsage = Static<typeof RunUsage>;

export const RunDebug = Closed(
  {
    observability: Type.Unknown({ description: 'Execution phase timeline and structured failure.' }),
    traceId: Type.Optional(Nullable(Str('Workflow trace id for span lookup (workflow runs only).'))),
  },
  { $id: 'RunDebug' },
);
export type RunDebug = Static<typeof RunDebug>;

// ---- run, list item, start responses ----

const RunHead = {
  id: Str(),
  type: RunType,
  finished: Bool('True when the run has reached a terminal status.'),
  sampleRank: Num('Deterministic pseudo-random rank in [0, 1) for this run within the tenant.'),
  timing: RunTiming,
  source: RunSource,
  trigger: RunTrigger,
  eval: Type.Optional(RunEval),
};

export const Run = Closed(
  {
    ...RunHead,
    output: Type.Optional(Nullable(OpenRecord(), { description: 'Completed runs only.' })),
    files: Type.Optional(Type.Array(RunArtifact, { description: 'Completed runs only.' })),
    error: Type.Optional(RunError),
    input: Type.Optional(RunInput),
    usage: Type.Optional(
      Nullable(RunUsage, { description: '`expand=usage`; null for runs without telemetry.' }),
    ),
    execution: Type.Union([RunExecutionMeta, RunExecution], {
      description: 'Slim metadata by default; `expand=execution` gives the full RunExecution.',
    }),
    debug: Type.Optional(RunDebug),
  },
  { $id: 'Run' },
);
export type Run = Static<typeof Run>;

export const RunListItem = Closed(
  { ...RunHead, error: Type.Optional(RunError), execution: RunExecutionMeta },
  { $id: 'RunListItem' },
);
export type RunListItem = Static<typeof RunListItem>;

export const RunsListResponse = Closed(
  { runs: Type.Array(RunListItem), nextCursor: Nullable(Str()) },
  { $id: 'RunsListResponse' },
);
export type RunsListResponse = Static<typeof RunsListResponse>;

export const RunAccepted = Closed(
  { id: Str(), type: RunType, finished: Type.Literal(false), source: Type.Optional(RunSource) },
  { $id: 'RunAccepted' },
);
export type RunAccepted = Static<typeof RunAccepted>;

export const RunStartResponse = Type.Union([RunAccepted, Run], { $id: 'RunStartResponse' });
export type RunStartResponse = Static<typeof RunStartResponse>;

/** An alias of RunStartResponse in the SDK. */
export const RunRerunResponse = Type.Union([RunAccepted, Run], { $id: 'RunRerunResponse' });
export type RunRerunResponse = Static<typeof RunRerunResponse>;

// ---- sub-resources ----

export const RunArtifactsResponse = Closed(
  { artifacts: Type.Array(RunArtifact) },
  { $id: 'RunArtifactsResponse' },
);
export type RunArtifactsResponse = Static<typeof RunArtifactsResponse>;

export const RunCancelResponse = Closed(
  {
    id: Str(),
    type: RunType,
    finished: Bool('True when the run has reached a terminal status.'),
    execution: Closed({ status: ExecutionStatus }),
    cancellation: Closed({
      state: OneOf(['cancelled', 'requested', 'already_terminal'] as const, {
        description:
          '`cancelled`: terminated before it started; `requested`: in flight, cancel requested; `already_terminal`: nothing changed.',
      }),
      wasStatus: ExecutionStatus,
    }),
  },
  { $id: 'RunCancelResponse' },
);
export type RunCancelResponse = Static<typeof RunCancelResponse>;

export const RunEvent = Closed(
  {
    type: Str(),
    timestamp: Str(),
    status: Type.Optional(Nullable(Str())),
    message: Type.Optional(Nullable(Str())),
    metadata: Type.Optional(OpenRecord()),
  },
  { $id: 'RunEvent' },
);
export type RunEvent = Static<typeof RunEvent>;

export const RunEventsResponse = Closed({ events: Type.Array(RunEvent) }, { $id: 'RunEventsResponse' });
export type RunEventsResponse = Static<typeof RunEventsResponse>;

export const RunStepsResponse = Closed({ steps: Type.Array(Type.Unknown()) }, { $id: 'RunStepsResponse' });
export type RunStepsResponse = Static<typeof RunStepsResponse>;

/** Open: the SDK type has an index signature (extra fields depend on the run type and source). */
export const RunTraceEvent = Type.Object(
  {
    type: Type.Optional(Str()),
    phase: Type.Optional(Str('Workflow execution phase, when present.')),
    stepName: Type.Optional(Str('Workflow step name, when present.')),
    status: Type.Optional(Str()),
    startedAt: Type.Optional(Nullable(Str())),
    completedAt: Type.Optional(Nullable(Str())),
    message: Type.Optional(Nullable(Str())),
  },
  { $id: 'RunTraceEvent', additionalProperties: true },
);
export type RunTraceEvent = Static<typeof RunTraceEvent>;

export const RunTraceResponse = Closed(
  { events: Type.Array(RunTraceEvent, { description: 'Chronological trace events.' }) },
  { $id: 'RunTraceResponse' },
);
export type RunTraceResponse = Static<typeof RunTraceResponse>;

export const RunUsageResponse = Closed({ usage: Nullable(RunUsage) }, { $id: 'RunUsageResponse' });
export type RunUsageResponse = Static<typeof RunUsageResponse>;

export const EvalResult = Closed(
  {
    id: Str(),
    runId: Str(),
    automationId: Nullable(Str()),
    evaluatorName: Str(),
    evaluatorType: Str(),
    score: Nullable(Num('Automated evaluator score (not a human review verdict).')),
    passed: Nullable(Bool()),
    label: Nullable(Str()),
    weight: Nullable(Num()),
    passThreshold: Nullable(Num()),
    description: Nullable(Str()),
    details: Type.Unknown({ description: 'Evaluator-specific details.' }),
    error: Nullable(Str('Evaluator error, when scoring failed.')),
    createdAt: Str(),
  },
  { $id: 'EvalResult' },
);
export type EvalResult = Static<typeof EvalResult>;

export const RunScoresResponse = Closed({ scores: Type.Array(EvalResult) }, { $id: 'RunScoresResponse' });
export type RunScoresResponse = Static<typeof RunScoresResponse>;

export const RUN_SCHEMAS: readonly TSchema[] = [
  RunStartBody,
  RunStartMultipartRequest,
  ExecutionStatus,
  RunTiming,
  RunSourceGit,
  RunSource,
  RunTrigger,
  RunEval,
  RunError,
  RunExecutionRetry,
  RunReviewSummary,
  RunExecutionMeta,
  WorkflowRunExecution,
  AgentRunExecution,
  RunExecution,
  RunArtifact,
  RunInput,
  RunUsage,
  RunDebug,
  Run,
  RunListItem,
  RunsListResponse,
  RunAccepted,
  RunStartResponse,
  RunRerunResponse,
  RunArtifactsResponse,
  RunCancelResponse,
  RunEvent,
  RunEventsResponse,
  RunStepsResponse,
  RunTraceEvent,
  RunTraceResponse,
  RunUsageResponse,
  EvalResult,
  RunScoresResponse,
];
