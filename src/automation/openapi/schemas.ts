// TypeBox schemas: the same objects validate requests (http/validate.ts) and describe them in
// the OpenAPI document (openapi/document.ts). Query names are the spec's snake_case; camelCase
// spellings are folded onto them before validation.

import { Type, type TSchema } from '@sinclair/typebox';
import {
  IdListString,
  IdString,
  MAX_CURSOR_CHARS,
  MAX_REF_CHARS,
  RefString,
  TargetString,
  TokenListString,
} from '../http/ids.js';

const Str = (description?: string) => Type.String(description ? { description } : {});
const Int = (opts: { minimum?: number; maximum?: number; description?: string } = {}) => Type.Integer(opts);
const Nullable = <T extends TSchema>(s: T) => Type.Union([s, Type.Null()]);
const Open = Type.Object({}, { additionalProperties: true });

export const Issue = Type.Object({
  field: Str('"<root>" or a dotted path'),
  message: Str(),
  code: Str(),
  severity: Type.Union([Type.Literal('error'), Type.Literal('warning')]),
});
export const ApiErrorEnvelope = Type.Object(
  { issues: Type.Array(Issue), requestId: Str(), hint: Type.Optional(Str()), docsUrl: Type.Optional(Str()) },
  { $id: 'ApiErrorEnvelope' },
);

export const AuthCheckResponse = Type.Object(
  {
    ok: Type.Boolean(),
    tenantId: Str(),
    tenantSlug: Str(),
    tenantName: Str(),
    userId: Str(),
    keyId: Str(),
    email: Nullable(Str()),
    name: Str(),
    scope: Type.Array(Str()),
    wildcardGranted: Type.Boolean(),
  },
  { $id: 'AuthCheckResponse' },
);

export const AutomationType = Type.Union([Type.Literal('workflow'), Type.Literal('agent')]);
const Triggers = Type.Object({
  api: Type.Boolean(),
  manual: Type.Boolean(),
  email: Type.Object({ enabled: Type.Boolean(), aliases: Type.Array(Str()) }),
  cron: Nullable(Str()),
});
const AutomationFields = {
  id: Str(),
  type: AutomationType,
  slug: Str(),
  alias: Str('workflows.<slug> or agents.<slug>'),
  name: Str(),
  description: Str(),
  status: Type.Union([Type.Literal('active'), Type.Literal('archived')]),
  version: Str(),
  triggers: Triggers,
  implementationAvailable: Type.Boolean(),
  createdAt: Str(),
  updatedAt: Str(),
};
export const AutomationSummary = Type.Object(AutomationFields, { $id: 'AutomationSummary' });
export const AutomationDetail = Type.Object(
  {
    ...AutomationFields,
    inputSchema: Nullable(Open),
    outputSchema: Nullable(Open),
    model: Nullable(Str()),
    release: Type.Object({ version: Str(), tag: Str(), commit: Str() }),
  },
  { $id: 'AutomationDetail' },
);
export const ListAutomationsResponse = Type.Object(
  { data: Type.Array(AutomationSummary), total: Int(), limit: Int(), offset: Int() },
  { $id: 'ListAutomationsResponse' },
);
export const AutomationVersion = Type.Object({
  id: Str(),
  automationId: Str(),
  version: Str(),
  sourceRef: Str(),
  commit: Str(),
  isCurrent: Type.Boolean(),
  createdAt: Str(),
});
export const ListAutomationVersionsResponse = Type.Object(
  { data: Type.Array(AutomationVersion), total: Int(), limit: Int(), offset: Int() },
  { $id: 'ListAutomationVersionsResponse' },
);
export const AutomationTriggersResponse = Type.Object(
  { automationId: Str(), triggers: Triggers, mutable: Type.Boolean() },
  { $id: 'AutomationTriggersResponse' },
);
export const SyncResponse = Type.Object(
  {
    automation: Type.Object({
      id: Str(),
      type: AutomationType,
      slug: Str(),
      status: Str(),
      updatedAt: Str(),
    }),
    release: Type.Object({ version: Str(), tag: Str(), commit: Str() }),
    warnings: Type.Array(Str()),
    changed: Type.Boolean(),
  },
  { $id: 'SyncResponse' },
);

export const ListAutomationsQuery = Type.Object({
  search: Type.Optional(Str('substring of slug, name or description')),
  type: Type.Optional(AutomationType),
  limit: Type.Optional(Int({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Int({ minimum: 0 })),
});
export const PagingQuery = Type.Object({
  limit: Type.Optional(Int({ minimum: 1, maximum: 1000 })),
  offset: Type.Optional(Int({ minimum: 0 })),
});

const FileValue = Type.Union([
  Type.Object({ $fileId: IdString('id of an uploaded file (POST /files)') }),
  Type.Object({ $inline: Type.Object({ filename: Str(), mimeType: Type.Optional(Str()), base64: Str() }) }),
]);
export const RunStartBody = Type.Object(
  {
    target: TargetString('automation id or typed alias, optionally with @<version>'),
    input: Type.Optional(Type.Unknown()),
    files: Type.Optional(Type.Record(Type.String(), Type.Union([FileValue, Type.Array(FileValue)]))),
    overrides: Type.Optional(
      Type.Object(
        { steps: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
        { additionalProperties: true },
      ),
    ),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { $id: 'RunStartBody' },
);
export const WaitQuery = {
  version: Type.Optional(RefString('release version, `latest` or a git ref')),
  wait_for_completion: Type.Optional(
    Int({ minimum: 0, maximum: 600, description: 'seconds; omit for asynchronous' }),
  ),
};
export const RunStartQuery = Type.Object(WaitQuery);
export const GetRunQuery = Type.Object({
  expand: Type.Optional(Str('comma list of input, usage, execution, debug')),
});
export const ArtifactsQuery = Type.Object({
  zip: Type.Optional(
    Type.Union([Type.Literal('1'), Type.Literal('0'), Type.Literal('true'), Type.Literal('false')]),
  ),
  bundle: Type.Optional(Type.Literal('review')),
  token: Type.Optional(Str('signed download token (ZIP only; no bearer key needed)')),
});

const Time = (d: string) =>
  Type.Optional(Str(`${d} (ISO-8601 time or date, epoch ms, or relative like -7d)`));
const BoolQ = (d: string) => Type.Optional(Type.Boolean({ description: d }));
export const RunListQuery = Type.Object({
  type: Type.Optional(TokenListString('comma list: workflow, agent')),
  source: Type.Optional(IdListString('comma list of automation ids or aliases')),
  status: Type.Optional(TokenListString('comma list of execution statuses')),
  trigger: Type.Optional(TokenListString('comma list of trigger types')),
  triggered_by: Type.Optional(TokenListString('comma list of user ids, or system')),
  source_ref: Type.Optional(
    Type.String({ maxLength: MAX_REF_CHARS, description: 'release version, tag, ref or commit prefix' }),
  ),
  batch_id: Type.Optional(IdListString('comma list of batch ids')),
  example_id: Type.Optional(IdListString('comma list of example ids')),
  example_id_contains: Type.Optional(Str()),
  from: Time('created at or after'),
  to: Time('created at or before'),
  created_after: Time('created at or after'),
  created_before: Time('created at or before'),
  completed_after: Time('completed at or after'),
  completed_before: Time('completed at or before'),
  cursor: Type.Optional(Type.String({ maxLength: MAX_CURSOR_CHARS, description: 'opaque; from nextCursor' })),
  offset: Type.Optional(Int({ minimum: 0 })),
  limit: Type.Optional(Int({ minimum: 1, maximum: 10000 })),
  ids: Type.Optional(IdListString('comma list of run ids')),
  experiments: BoolQ('false excludes experiment (batch) runs'),
  sort: Type.Optional(
    Type.Union([
      Type.Literal('created_at'),
      Type.Literal('createdAt'),
      Type.Literal('completed_at'),
      Type.Literal('completedAt'),
    ]),
  ),
  order: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
  review_status: Type.Optional(TokenListString('comma list: open, closed, wont_fix')),
  review_verdict: Type.Optional(TokenListString('comma list: correct, incorrect, nit')),
  has_review: BoolQ('only reviewed runs'),
  no_review: BoolQ('only runs without review'),
  has_corrections: BoolQ('reviews with corrections'),
  review_note_contains: Type.Optional(Str()),
  review_created_after: Time('review created at or after'),
  review_created_before: Time('review created at or before'),
  review_updated_after: Time('review updated at or after'),
  review_updated_before: Time('review updated at or before'),
  review_closed_after: Time('review closed at or after'),
  review_closed_before: Time('review closed at or before'),
  since_last_closed: BoolQ('runs created after the latest closed review'),
  sample_rate: Type.Optional(
    Type.Number({ minimum: 0, maximum: 1, description: 'keeps runs whose sampleRank is below it' }),
  ),
});

const RunArtifact = Type.Object({
  name: Str(),
  role: Str(),
  path: Str(),
  stepName: Nullable(Str()),
  contentType: Str(),
  size: Int(),
});
export const Run = Type.Object(
  {
    id: Str(),
    type: AutomationType,
    finished: Type.Boolean(),
    status: Str(),
    sampleRank: Type.Number(),
    timing: Type.Object({
      createdAt: Str(),
      startedAt: Nullable(Str()),
      completedAt: Nullable(Str()),
      durationMs: Nullable(Int()),
      cancelRequestedAt: Nullable(Str()),
    }),
    source: Type.Object({
      id: Str(),
      name: Str(),
      version: Str(),
      versionId: Nullable(Str()),
      slug: Str(),
      model: Nullable(Str()),
      git: Type.Object({
        requestedRef: Str(),
        resolvedRef: Str(),
        resolvedTag: Nullable(Str()),
        commitSha: Str(),
      }),
      implementationAvailable: Type.Boolean(),
      currentVersion: Nullable(Str()),
    }),
    trigger: Type.Object({ type: Str(), by: Str() }),
    files: Type.Array(RunArtifact),
    output: Type.Optional(Type.Unknown()),
    error: Type.Optional(Nullable(Str())),
    execution: Type.Object(
      { status: Str(), schemaValid: Nullable(Type.Boolean()), batchId: Nullable(Str()) },
      { additionalProperties: true },
    ),
    input: Type.Optional(Open),
    usage: Type.Optional(Open),
    debug: Type.Optional(Open),
  },
  { $id: 'Run', additionalProperties: true },
);
export const RunsListResponse = Type.Object(
  { runs: Type.Array(Run), nextCursor: Nullable(Str()) },
  { $id: 'RunsListResponse' },
);
export const RunCancelResponse = Type.Object(
  {
    id: Str(),
    type: AutomationType,
    finished: Type.Boolean(),
    execution: Type.Object({ status: Str() }),
    cancellation: Type.Object({
      state: Type.Union([
        Type.Literal('cancelled'),
        Type.Literal('requested'),
        Type.Literal('already_terminal'),
      ]),
      wasStatus: Str(),
    }),
  },
  { $id: 'RunCancelResponse' },
);
export const RunEvent = Type.Object({
  seq: Int(),
  type: Str(),
  timestamp: Str(),
  status: Type.Optional(Str()),
  message: Type.Optional(Str()),
  metadata: Type.Optional(Open),
});
export const RunEventsResponse = Type.Object(
  { runId: Str(), events: Type.Array(RunEvent) },
  { $id: 'RunEventsResponse' },
);
export const RunStepsResponse = Type.Object(
  {
    runId: Str(),
    type: AutomationType,
    status: Str(),
    steps: Type.Array(Open),
    summary: Type.Optional(Open),
  },
  { $id: 'RunStepsResponse' },
);
export const RunTraceResponse = Type.Object(
  { runId: Str(), type: AutomationType, events: Type.Array(Open) },
  { $id: 'RunTraceResponse' },
);
export const RunUsageResponse = Type.Object(
  {
    runId: Str(),
    tokens: Type.Object({ input: Int(), output: Int(), cacheRead: Int(), cacheWrite: Int() }),
    creditsCharged: Type.Number(),
    durationMs: Nullable(Int()),
    llmCallCount: Int(),
    ocrPagesProcessed: Int(),
    agentTurns: Int(),
    queueWaitMs: Nullable(Int()),
    execution: Type.Object({ status: Str() }),
  },
  { $id: 'RunUsageResponse' },
);
export const RunScoresResponse = Type.Object(
  { runId: Str(), scores: Type.Array(Open) },
  { $id: 'RunScoresResponse' },
);
export const RunArtifactsResponse = Type.Object(
  {
    runId: Str(),
    artifacts: Type.Array(Str()),
    files: Type.Array(RunArtifact),
    download: Type.Object({ zipUrl: Str(), token: Str(), expiresAt: Str() }),
  },
  { $id: 'RunArtifactsResponse' },
);
export const FileSchema = Type.Object(
  {
    id: Str(),
    filename: Str(),
    contentType: Str(),
    size: Int(),
    sha256: Str(),
    purpose: Nullable(Str()),
    createdAt: Str(),
  },
  { $id: 'File' },
);
export const DeleteFileResponse = Type.Object(
  { id: Str(), deleted: Type.Boolean() },
  { $id: 'DeleteFileResponse' },
);
export const JsonObject = Open;
export const Binary = Type.String({ format: 'binary' });
