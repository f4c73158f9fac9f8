// Every operation of the product SDK (src/generated/sdk.gen.ts), keyed by the SDK's function
// name: method, path, parameters, request body per content type and response per status.
// Route declarations and the wire-shape test both read this table, so the server's public
// surface is defined once, in the SDK's own vocabulary.

import { Type, type TObject, type TSchema } from '@sinclair/typebox';
import {
  AutomationDetail,
  AutomationTriggersResponse,
  AutomationsSyncResponse,
  ListAutomationVersionsResponse,
  ListAutomationsResponse,
} from './automations.js';
import { ApiErrorEnvelope, AuthCheckResponse, Num, OneOf, Str } from './common.js';
import {
  AutomationDatasetImportMultipartRequest,
  DatasetExample,
  DatasetExampleExpectedFileList,
  DatasetExampleExpectedFileRenameRequest,
  DatasetExampleExpectedFileRenameResponse,
  DatasetExampleExpectedFileUploadRequest,
  DatasetExampleExpectedFileUploadResponse,
  DatasetExampleInputFileList,
  DatasetExampleInputFileRenameRequest,
  DatasetExampleInputFileRenameResponse,
  DatasetExampleInputFileUploadRequest,
  DatasetExampleInputFileUploadResponse,
  DatasetExampleList,
  DatasetExampleMutation,
  DatasetExampleUpdate,
  DatasetImportResponse,
  ExampleRunResponse,
} from './datasets.js';
import {
  AutomationsExperimentsListResponse,
  EvaluatorConfigResponse,
  EvaluatorConfigUpdate,
  ExperimentCreate,
  ExperimentCreateResponse,
  ExperimentDetail,
  ExperimentRef,
} from './experiments.js';
import {
  AbortFileUploadResponse,
  CreateFileMultipartRequest,
  CreateFileUploadSessionRequest,
  DeleteFileResponse,
  File,
  FilesUploadsCreateResponse,
} from './files.js';
import {
  PromoteRunRequest,
  PromoteRunResponse,
  RunReviewDetail,
  RunReviewExpectedArtifacts,
  RunReviewExpectedFileCopyRequest,
  RunReviewExpectedFileMutationResponse,
  RunReviewExpectedFileUpdateRequest,
  RunReviewExpectedFileUpdateResponse,
  RunReviewExpectedFileUploadRequest,
  RunReviewHealthResponse,
  RunReviewRequest,
} from './reviews.js';
import {
  Run,
  RunArtifactsResponse,
  RunCancelResponse,
  RunEventsResponse,
  RunScoresResponse,
  RunStartBody,
  RunStartMultipartRequest,
  RunStartResponse,
  RunStepsResponse,
  RunTraceResponse,
  RunUsageResponse,
  RunsListResponse,
} from './runs.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Raw bytes (`Blob | File` in the SDK): a download, not JSON. */
export const Binary = Type.String({ format: 'binary', description: 'Raw bytes' });
/** A text body the SDK reads with `parseAs: 'text'` or as a stream (CSV, NDJSON). */
export const Text = Type.String({ description: 'Text body' });

export const JSON_TYPE = 'application/json';
export const MULTIPART_TYPE = 'multipart/form-data';

export interface WireResponse {
  readonly description: string;
  /** Schema per content type; empty for a response without a body (204). */
  readonly content: Readonly<Record<string, TSchema>>;
}

export interface WireBody {
  readonly required: boolean;
  /** Schema per content type: JSON bodies, and multipart bodies where the SDK uses formDataBodySerializer. */
  readonly content: Readonly<Record<string, TSchema>>;
}

export interface WireOperation {
  readonly method: HttpMethod;
  /** As in the SDK, below the API base: `/v1/runs/{id}`. */
  readonly path: string;
  readonly summary: string;
  /** Path parameter names in order of appearance. */
  readonly pathParams: readonly string[];
  /** Query parameters, spelled exactly as the SDK sends them (mostly camelCase; `wait_for_completion`). */
  readonly query?: TObject;
  readonly body?: WireBody;
  readonly responses: Readonly<Record<number, WireResponse>>;
}

/** Every SDK operation lists these error statuses, each with the JSON error envelope. */
export const ERROR_STATUSES = [400, 401, 403, 404, 413, 429, 500] as const;
export type ErrorStatus = (typeof ERROR_STATUSES)[number];

const ERROR_DESCRIPTIONS: Record<ErrorStatus, string> = {
  400: 'Validation error. Request shape did not match the spec.',
  401: 'Missing or invalid API key',
  403: 'API key lacks required scope',
  404: 'Resource not found',
  413: 'Payload too large. Upload exceeded the per-request size cap.',
  429: 'Rate limit exceeded',
  500: 'Internal server error',
};

const json = (schema: TSchema, description = 'OK'): WireResponse => ({
  description,
  content: { [JSON_TYPE]: schema },
});
const bytes = (contentTypes: readonly string[], description: string): WireResponse => ({
  description,
  content: Object.fromEntries(contentTypes.map((t) => [t, Binary])),
});
const jsonBody = (schema: TSchema): WireBody => ({ required: true, content: { [JSON_TYPE]: schema } });
const multipartBody = (schema: TSchema): WireBody => ({
  required: true,
  content: { [MULTIPART_TYPE]: schema },
});

type OperationEntry<S extends number, E> = WireOperation &
  Pick<Required<WireOperation>, keyof E & ('query' | 'body')> & {
    readonly responses: Readonly<Record<S | ErrorStatus, WireResponse>>;
  };

/**
 * Builds one entry. The generic parameters keep each entry's own statuses, query and body in
 * its type, so `SDK_OPERATIONS.runsStart.query` is known to exist without a check.
 */
function op<S extends number, E extends { query?: TObject; body?: WireBody } = Record<never, never>>(
  method: HttpMethod,
  path: string,
  summary: string,
  ok: Record<S, WireResponse>,
  extra: E = {} as E,
): OperationEntry<S, E> {
  const responses = { ...ok } as Record<S | ErrorStatus, WireResponse>;
  for (const status of ERROR_STATUSES)
    responses[status] = {
      description: ERROR_DESCRIPTIONS[status],
      content: { [JSON_TYPE]: ApiErrorEnvelope },
    };
  const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
  return { method, path, summary, pathParams, ...extra, responses } as OperationEntry<S, E>;
}

const Opt = <T extends TSchema>(schema: T) => Type.Optional(schema);
// Query values travel as strings; numbers here are the SDK's declared types, coerced on the way in.
const PageQuery = { limit: Opt(Num()), offset: Opt(Num()) };
const StartQuery = Type.Object({
  version: Opt(Str('Version to run; `original` on rerun pins the source run version.')),
  wait_for_completion: Opt(Num('Seconds to hold the request for a terminal result.')),
});
const ExportFormat = OneOf(['csv', 'json'] as const);
const RunFilterQuery = {
  type: Opt(Str()),
  status: Opt(Str()),
  trigger: Opt(Str()),
  triggeredBy: Opt(Str()),
  sourceRef: Opt(Str()),
  batchId: Opt(Str()),
  exampleId: Opt(Str()),
  exampleIdContains: Opt(Str()),
  from: Opt(Str()),
  to: Opt(Str()),
  completedAfter: Opt(Str()),
  completedBefore: Opt(Str()),
  experiments: Opt(Str()),
};

const EXAMPLE = '/v1/automations/{id}/examples/{exampleId}';
const ANY_FILE = ['*/*'];

export const SDK_OPERATIONS = {
  authCheck: op('GET', '/v1/auth/check', 'Check API key identity', { 200: json(AuthCheckResponse) }),
  automationsList: op(
    'GET',
    '/v1/automations',
    'List automations',
    { 200: json(ListAutomationsResponse) },
    {
      query: Type.Object({
        search: Opt(Str()),
        type: Opt(OneOf(['workflow', 'agent'] as const)),
        ...PageQuery,
      }),
    },
  ),
  automationsGet: op('GET', '/v1/automations/{id}', 'Get automation', { 200: json(AutomationDetail) }),
  automationsDatasetExport: op(
    'GET',
    '/v1/automations/{id}/dataset/export',
    'Export automation dataset',
    { 200: bytes(['application/zip'], 'Dataset ZIP archive') },
    { query: Type.Object({ exampleIds: Opt(Str('Comma-separated example ids')) }) },
  ),
  automationsDatasetImport: op(
    'POST',
    '/v1/automations/{id}/dataset/import',
    'Import automation dataset',
    { 200: json(DatasetImportResponse) },
    { body: multipartBody(AutomationDatasetImportMultipartRequest) },
  ),
  automationsEvaluatorsGet: op('GET', '/v1/automations/{id}/evaluators', 'Get evaluators', {
    200: json(EvaluatorConfigResponse),
  }),
  automationsEvaluatorsUpdate: op(
    'PUT',
    '/v1/automations/{id}/evaluators',
    'Replace evaluators',
    { 200: json(EvaluatorConfigResponse) },
    { body: jsonBody(EvaluatorConfigUpdate) },
  ),
  automationsExamplesList: op(
    'GET',
    '/v1/automations/{id}/examples',
    'List dataset examples',
    { 200: json(DatasetExampleList) },
    { query: Type.Object(PageQuery) },
  ),
  automationsExamplesCreate: op(
    'POST',
    '/v1/automations/{id}/examples',
    'Create dataset example',
    { 201: json(DatasetExample, 'Created') },
    { body: jsonBody(DatasetExampleMutation) },
  ),
  automationsExamplesDelete: op('DELETE', EXAMPLE, 'Delete dataset example', { 200: json(DatasetExample) }),
  automationsExamplesGet: op('GET', EXAMPLE, 'Get dataset example', { 200: json(DatasetExample) }),
  automationsExamplesUpdate: op(
    'PATCH',
    EXAMPLE,
    'Update dataset example',
    { 200: json(DatasetExample) },
    { body: jsonBody(DatasetExampleUpdate) },
  ),
  automationsExamplesExpectedFilesList: op('GET', `${EXAMPLE}/expected`, 'List expected files', {
    200: json(DatasetExampleExpectedFileList),
  }),
  automationsExamplesExpectedFilesCreate: op(
    'POST',
    `${EXAMPLE}/expected`,
    'Upload expected files',
    { 201: json(DatasetExampleExpectedFileUploadResponse, 'Created') },
    { body: multipartBody(DatasetExampleExpectedFileUploadRequest) },
  ),
  // The SDK types this 200 body as `unknown`.
  automationsExamplesExpectedFileDelete: op('DELETE', `${EXAMPLE}/expected/{path}`, 'Delete expected file', {
    200: json(Type.Unknown()),
  }),
  automationsExamplesExpectedFileGet: op(
    'GET',
    `${EXAMPLE}/expected/{path}`,
    'Download expected dataset file',
    {
      200: bytes(ANY_FILE, 'File bytes, with the stored file content type'),
    },
  ),
  automationsExamplesExpectedFileUpdate: op(
    'PATCH',
    `${EXAMPLE}/expected/{path}`,
    'Rename expected file',
    { 200: json(DatasetExampleExpectedFileRenameResponse) },
    { body: jsonBody(DatasetExampleExpectedFileRenameRequest) },
  ),
  automationsExamplesInputFilesList: op('GET', `${EXAMPLE}/input`, 'List input files', {
    200: json(DatasetExampleInputFileList),
  }),
  automationsExamplesInputFilesCreate: op(
    'POST',
    `${EXAMPLE}/input`,
    'Upload input files',
    { 201: json(DatasetExampleInputFileUploadResponse, 'Created') },
    { body: multipartBody(DatasetExampleInputFileUploadRequest) },
  ),
  // The SDK types this 200 body as `unknown`.
  automationsExamplesInputFileDelete: op('DELETE', `${EXAMPLE}/input/{path}`, 'Delete input file', {
    200: json(Type.Unknown()),
  }),
  automationsExamplesInputFileGet: op('GET', `${EXAMPLE}/input/{path}`, 'Download input file', {
    200: bytes(ANY_FILE, 'File bytes, with the stored file content type'),
  }),
  automationsExamplesInputFileUpdate: op(
    'PATCH',
    `${EXAMPLE}/input/{path}`,
    'Rename input file',
    { 200: json(DatasetExampleInputFileRenameResponse) },
    { body: jsonBody(DatasetExampleInputFileRenameRequest) },
  ),
  automationsExamplesRun: op('POST', `${EXAMPLE}/run`, 'Run dataset example', {
    201: json(ExampleRunResponse, 'Accepted; the run continues asynchronously'),
  }),
  automationsExperimentsList: op(
    'GET',
    '/v1/automations/{id}/experiments',
    'List experiments',
    { 200: json(AutomationsExperimentsListResponse) },
    { query: Type.Object({ ...PageQuery, fromDate: Opt(Str()), toDate: Opt(Str()) }) },
  ),
  automationsExperimentsCreate: op(
    'POST',
    '/v1/automations/{id}/experiments',
    'Create experiment',
    { 202: json(ExperimentCreateResponse, 'Accepted') },
    { body: jsonBody(ExperimentCreate) },
  ),
  automationsExperimentsGet: op('GET', '/v1/automations/{id}/experiments/{experimentId}', 'Get experiment', {
    200: json(ExperimentDetail),
  }),
  automationsExperimentsCancel: op(
    'POST',
    '/v1/automations/{id}/experiments/{experimentId}/cancel',
    'Cancel experiment',
    { 200: json(ExperimentDetail) },
  ),
  automationsExperimentsExport: op(
    'GET',
    '/v1/automations/{id}/experiments/{experimentId}/export',
    'Export experiment eval results',
    {
      200: {
        // The SDK reads the body as text but first refuses any content type other than JSON,
        // octet-stream or zip (assertJsonResponse in its client.ts), so CSV cannot be text/csv.
        description: 'CSV (as application/octet-stream) or JSON rows, read as text',
        content: { 'application/octet-stream': Text, [JSON_TYPE]: Text },
      },
    },
    {
      query: Type.Object({
        format: ExportFormat,
        includeTrace: Opt(OneOf(['0', '1', 'true', 'false'] as const)),
      }),
    },
  ),
  automationsExperimentsExportAll: op(
    'GET',
    '/v1/automations/{id}/experiments/export',
    'Export all experiment eval results',
    {
      200: {
        // The SDK reads the body as text but first refuses any content type other than JSON,
        // octet-stream or zip (assertJsonResponse in its client.ts), so CSV cannot be text/csv.
        description: 'CSV (as application/octet-stream) or JSON rows, read as text',
        content: { 'application/octet-stream': Text, [JSON_TYPE]: Text },
      },
    },
    { query: Type.Object({ format: ExportFormat }) },
  ),
  automationsExperimentsCreateStream: op(
    'POST',
    '/v1/automations/{id}/experiments/stream',
    'Create automation experiment with NDJSON progress',
    {
      200: { description: 'Per-run completion events as NDJSON', content: { 'application/x-ndjson': Text } },
    },
    { body: jsonBody(ExperimentCreate) },
  ),
  automationsReviewsHealth: op(
    'GET',
    '/v1/automations/{id}/reviews/health',
    'Get automation review health',
    { 200: json(RunReviewHealthResponse) },
    {
      query: Type.Object({
        ...RunFilterQuery,
        bucket: Opt(OneOf(['day', 'week', 'month'] as const)),
        rollingWindow: Opt(Num()),
        minRollingReviews: Opt(Num()),
      }),
    },
  ),
  automationsSync: op('POST', '/v1/automations/{id}/sync', 'Sync automation from latest Git release', {
    200: json(AutomationsSyncResponse),
  }),
  automationsTriggersGet: op('GET', '/v1/automations/{id}/triggers', 'Get automation triggers', {
    200: json(AutomationTriggersResponse),
  }),
  automationsVersionsList: op('GET', '/v1/automations/{id}/versions', 'List automation versions', {
    200: json(ListAutomationVersionsResponse),
  }),
  experimentsResolve: op('GET', '/v1/experiments/{experimentId}', 'Resolve experiment by id', {
    200: json(ExperimentRef),
  }),
  filesCreate: op(
    'POST',
    '/v1/files',
    'Upload file',
    { 200: json(File) },
    { body: multipartBody(CreateFileMultipartRequest) },
  ),
  filesDelete: op('DELETE', '/v1/files/{id}', 'Delete file', { 200: json(DeleteFileResponse) }),
  filesGet: op('GET', '/v1/files/{id}', 'Get file metadata', { 200: json(File) }),
  // The SDK types this 200 body as `unknown`; it is the file's bytes.
  filesContentGet: op('GET', '/v1/files/{id}/content', 'Download file content', {
    200: bytes(ANY_FILE, 'File bytes, with the stored file content type'),
  }),
  filesUploadsCreate: op(
    'POST',
    '/v1/files/uploads',
    'Prepare file upload',
    { 200: json(FilesUploadsCreateResponse) },
    { body: jsonBody(CreateFileUploadSessionRequest) },
  ),
  filesUploadsAbort: op('DELETE', '/v1/files/uploads/{uploadId}', 'Abort file upload', {
    200: json(AbortFileUploadResponse),
  }),
  filesUploadsComplete: op('POST', '/v1/files/uploads/{uploadId}/complete', 'Complete file upload', {
    200: json(File),
  }),
  runsList: op(
    'GET',
    '/v1/runs',
    'List runs',
    { 200: json(RunsListResponse) },
    {
      query: Type.Object({
        ...RunFilterQuery,
        source: Opt(Str()),
        createdAfter: Opt(Str()),
        createdBefore: Opt(Str()),
        cursor: Opt(Str()),
        ...PageQuery,
        ids: Opt(Str()),
        sort: Opt(Str()),
        order: Opt(Str()),
        reviewStatus: Opt(Str()),
        reviewVerdict: Opt(Str()),
        hasReview: Opt(Str()),
        noReview: Opt(Str()),
        hasCorrections: Opt(Str()),
        reviewNoteContains: Opt(Str()),
        search: Opt(Str()),
        reviewCreatedAfter: Opt(Str()),
        reviewCreatedBefore: Opt(Str()),
        reviewUpdatedAfter: Opt(Str()),
        reviewUpdatedBefore: Opt(Str()),
        reviewClosedAfter: Opt(Str()),
        reviewClosedBefore: Opt(Str()),
        sinceLastClosed: Opt(Str()),
        sampleRate: Opt(Str()),
      }),
    },
  ),
  // sdk.gen.ts sends JSON only, but the operation's docs and RunStartMultipartRequest accept
  // multipart/form-data too.
  runsStart: op(
    'POST',
    '/v1/runs',
    'Start a run',
    {
      200: json(RunStartResponse, 'Finished within wait_for_completion'),
      201: json(RunStartResponse, 'Created'),
      202: json(RunStartResponse, 'Accepted; the run continues asynchronously'),
    },
    {
      query: StartQuery,
      body: {
        required: true,
        content: { [JSON_TYPE]: RunStartBody, [MULTIPART_TYPE]: RunStartMultipartRequest },
      },
    },
  ),
  runsGet: op(
    'GET',
    '/v1/runs/{id}',
    'Get a run',
    { 200: json(Run) },
    { query: Type.Object({ expand: Opt(Str('Comma-separated: input, usage, execution, debug')) }) },
  ),
  runsArtifactsList: op(
    'GET',
    '/v1/runs/{id}/artifacts',
    'List run artifacts',
    {
      200: {
        description: 'Artifact list, or a ZIP download with `zip=1`',
        content: { [JSON_TYPE]: RunArtifactsResponse, 'application/zip': Binary },
      },
    },
    {
      query: Type.Object({
        zip: Opt(Type.Literal('1')),
        bundle: Opt(Type.Literal('review')),
        token: Opt(Str()),
      }),
    },
  ),
  // The SDK types this 200 body as `unknown`; it is the artifact's bytes.
  runsArtifactsGet: op('GET', '/v1/runs/{id}/artifacts/{path}', 'Download run artifact', {
    200: bytes(ANY_FILE, 'Artifact bytes, with the artifact content type'),
  }),
  runsCancel: op('POST', '/v1/runs/{id}/cancel', 'Cancel run', { 200: json(RunCancelResponse) }),
  runsEventsList: op('GET', '/v1/runs/{id}/events', 'List run events', { 200: json(RunEventsResponse) }),
  runsPromote: op(
    'POST',
    '/v1/runs/{id}/promote',
    'Promote run to example',
    { 200: json(PromoteRunResponse) },
    { body: jsonBody(PromoteRunRequest) },
  ),
  // RunsRerunResponses names RunStartResponse (RunRerunResponse is its alias).
  runsRerun: op(
    'POST',
    '/v1/runs/{id}/rerun',
    'Retry run',
    {
      200: json(RunStartResponse, 'Finished within wait_for_completion'),
      201: json(RunStartResponse, 'Created'),
      202: json(RunStartResponse, 'Accepted; the run continues asynchronously'),
    },
    { query: StartQuery },
  ),
  runsReviewsClear: op('DELETE', '/v1/runs/{id}/reviews', 'Clear run review', { 200: json(RunReviewDetail) }),
  runsReviewsGet: op('GET', '/v1/runs/{id}/reviews', 'Get run review', { 200: json(RunReviewDetail) }),
  runsReviewsUpdate: op(
    'PUT',
    '/v1/runs/{id}/reviews',
    'Update run review',
    { 200: json(RunReviewDetail) },
    { body: jsonBody(RunReviewRequest) },
  ),
  runsReviewsExpectedGet: op('GET', '/v1/runs/{id}/reviews/expected', 'List corrected files', {
    200: json(RunReviewExpectedArtifacts),
  }),
  // The SDK picks multipart when the body has a `file` field, JSON (a copy request) otherwise.
  runsReviewsExpectedCreate: op(
    'POST',
    '/v1/runs/{id}/reviews/expected',
    'Add corrected file',
    { 201: json(RunReviewExpectedFileMutationResponse, 'Created') },
    {
      body: {
        required: true,
        content: {
          [JSON_TYPE]: RunReviewExpectedFileCopyRequest,
          [MULTIPART_TYPE]: RunReviewExpectedFileUploadRequest,
        },
      },
    },
  ),
  runsReviewsExpectedFileDelete: op(
    'DELETE',
    '/v1/runs/{id}/reviews/expected/{filename}',
    'Delete corrected artifact file',
    { 204: { description: 'Deleted', content: {} } },
  ),
  runsReviewsExpectedFileGet: op(
    'GET',
    '/v1/runs/{id}/reviews/expected/{filename}',
    'Download corrected artifact file',
    { 200: bytes(ANY_FILE, 'File bytes, with the stored file content type') },
  ),
  runsReviewsExpectedFileUpdate: op(
    'PATCH',
    '/v1/runs/{id}/reviews/expected/{filename}',
    'Rename corrected artifact file',
    { 200: json(RunReviewExpectedFileUpdateResponse) },
    { body: jsonBody(RunReviewExpectedFileUpdateRequest) },
  ),
  runsScoresList: op('GET', '/v1/runs/{id}/scores', 'List run evaluator scores', {
    200: json(RunScoresResponse),
  }),
  runsStepsList: op('GET', '/v1/runs/{id}/steps', 'List run steps', { 200: json(RunStepsResponse) }),
  runsTraceGet: op('GET', '/v1/runs/{id}/trace', 'Get run trace', { 200: json(RunTraceResponse) }),
  runsUsageGet: op('GET', '/v1/runs/{id}/usage', 'Get run usage', { 200: json(RunUsageResponse) }),
} as const satisfies Readonly<Record<string, WireOperation>>;

/** One entry of SDK_OPERATIONS, without its per-entry detail. */
export type SdkOperation = WireOperation;

export type SdkOperationName = keyof typeof SDK_OPERATIONS;
