import { describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { Ajv, type ValidateFunction } from 'ajv';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { FormatRegistry } from '@sinclair/typebox';
import {
  ApiErrorEnvelope,
  AuthCheckResponse,
  Binary,
  DatasetExample,
  DatasetImportResponse,
  ERROR_STATUSES,
  ExperimentDetail,
  File,
  FilesUploadsCreateResponse,
  JSON_TYPE,
  Run,
  RunCancelResponse,
  RunReviewDetail,
  RunReviewHealthResponse,
  RunStartBody,
  RunStartResponse,
  RunTraceEvent,
  RunsListResponse,
  SDK_OPERATIONS,
  WIRE_SCHEMAS,
  toPlainJsonSchema,
} from '../../src/automation/wire/index.js';

// The product SDK's operations (src/generated/sdk.gen.ts of @eigenpal/sdk 0.11.2): method, path
// and the success statuses its *Responses types list. Hard-coded so CI needs no SDK checkout.
const SDK_OPS: Record<string, [string, string, number[]]> = {
  authCheck: ['GET', '/v1/auth/check', [200]],
  automationsList: ['GET', '/v1/automations', [200]],
  automationsGet: ['GET', '/v1/automations/{id}', [200]],
  automationsDatasetExport: ['GET', '/v1/automations/{id}/dataset/export', [200]],
  automationsDatasetImport: ['POST', '/v1/automations/{id}/dataset/import', [200]],
  automationsEvaluatorsGet: ['GET', '/v1/automations/{id}/evaluators', [200]],
  automationsEvaluatorsUpdate: ['PUT', '/v1/automations/{id}/evaluators', [200]],
  automationsExamplesList: ['GET', '/v1/automations/{id}/examples', [200]],
  automationsExamplesCreate: ['POST', '/v1/automations/{id}/examples', [201]],
  automationsExamplesDelete: ['DELETE', '/v1/automations/{id}/examples/{exampleId}', [200]],
  automationsExamplesGet: ['GET', '/v1/automations/{id}/examples/{exampleId}', [200]],
  automationsExamplesUpdate: ['PATCH', '/v1/automations/{id}/examples/{exampleId}', [200]],
  automationsExamplesExpectedFilesList: ['GET', '/v1/automations/{id}/examples/{exampleId}/expected', [200]],
  automationsExamplesExpectedFilesCreate: [
    'POST',
    '/v1/automations/{id}/examples/{exampleId}/expected',
    [201],
  ],
  automationsExamplesExpectedFileDelete: [
    'DELETE',
    '/v1/automations/{id}/examples/{exampleId}/expected/{path}',
    [200],
  ],
  automationsExamplesExpectedFileGet: [
    'GET',
    '/v1/automations/{id}/examples/{exampleId}/expected/{path}',
    [200],
  ],
  automationsExamplesExpectedFileUpdate: [
    'PATCH',
    '/v1/automations/{id}/examples/{exampleId}/expected/{path}',
    [200],
  ],
  automationsExamplesInputFilesList: ['GET', '/v1/automations/{id}/examples/{exampleId}/input', [200]],
  automationsExamplesInputFilesCreate: ['POST', '/v1/automations/{id}/examples/{exampleId}/input', [201]],
  automationsExamplesInputFileDelete: [
    'DELETE',
    '/v1/automations/{id}/examples/{exampleId}/input/{path}',
    [200],
  ],
  automationsExamplesInputFileGet: ['GET', '/v1/automations/{id}/examples/{exampleId}/input/{path}', [200]],
  automationsExamplesInputFileUpdate: [
    'PATCH',
    '/v1/automations/{id}/examples/{exampleId}/input/{path}',
    [200],
  ],
  automationsExamplesRun: ['POST', '/v1/automations/{id}/examples/{exampleId}/run', [201]],
  automationsExperimentsList: ['GET', '/v1/automations/{id}/experiments', [200]],
  automationsExperimentsCreate: ['POST', '/v1/automations/{id}/experiments', [202]],
  automationsExperimentsGet: ['GET', '/v1/automations/{id}/experiments/{experimentId}', [200]],
  automationsExperimentsCancel: ['POST', '/v1/automations/{id}/experiments/{experimentId}/cancel', [200]],
  automationsExperimentsExport: ['GET', '/v1/automations/{id}/experiments/{experimentId}/export', [200]],
  automationsExperimentsExportAll: ['GET', '/v1/automations/{id}/experiments/export', [200]],
  automationsExperimentsCreateStream: ['POST', '/v1/automations/{id}/experiments/stream', [200]],
  automationsReviewsHealth: ['GET', '/v1/automations/{id}/reviews/health', [200]],
  automationsSync: ['POST', '/v1/automations/{id}/sync', [200]],
  automationsTriggersGet: ['GET', '/v1/automations/{id}/triggers', [200]],
  automationsVersionsList: ['GET', '/v1/automations/{id}/versions', [200]],
  experimentsResolve: ['GET', '/v1/experiments/{experimentId}', [200]],
  filesCreate: ['POST', '/v1/files', [200]],
  filesDelete: ['DELETE', '/v1/files/{id}', [200]],
  filesGet: ['GET', '/v1/files/{id}', [200]],
  filesContentGet: ['GET', '/v1/files/{id}/content', [200]],
  filesUploadsCreate: ['POST', '/v1/files/uploads', [200]],
  filesUploadsAbort: ['DELETE', '/v1/files/uploads/{uploadId}', [200]],
  filesUploadsComplete: ['POST', '/v1/files/uploads/{uploadId}/complete', [200]],
  runsList: ['GET', '/v1/runs', [200]],
  runsStart: ['POST', '/v1/runs', [200, 201, 202]],
  runsGet: ['GET', '/v1/runs/{id}', [200]],
  runsArtifactsList: ['GET', '/v1/runs/{id}/artifacts', [200]],
  runsArtifactsGet: ['GET', '/v1/runs/{id}/artifacts/{path}', [200]],
  runsCancel: ['POST', '/v1/runs/{id}/cancel', [200]],
  runsEventsList: ['GET', '/v1/runs/{id}/events', [200]],
  runsPromote: ['POST', '/v1/runs/{id}/promote', [200]],
  runsRerun: ['POST', '/v1/runs/{id}/rerun', [200, 201, 202]],
  runsReviewsClear: ['DELETE', '/v1/runs/{id}/reviews', [200]],
  runsReviewsGet: ['GET', '/v1/runs/{id}/reviews', [200]],
  runsReviewsUpdate: ['PUT', '/v1/runs/{id}/reviews', [200]],
  runsReviewsExpectedGet: ['GET', '/v1/runs/{id}/reviews/expected', [200]],
  runsReviewsExpectedCreate: ['POST', '/v1/runs/{id}/reviews/expected', [201]],
  runsReviewsExpectedFileDelete: ['DELETE', '/v1/runs/{id}/reviews/expected/{filename}', [204]],
  runsReviewsExpectedFileGet: ['GET', '/v1/runs/{id}/reviews/expected/{filename}', [200]],
  runsReviewsExpectedFileUpdate: ['PATCH', '/v1/runs/{id}/reviews/expected/{filename}', [200]],
  runsScoresList: ['GET', '/v1/runs/{id}/scores', [200]],
  runsStepsList: ['GET', '/v1/runs/{id}/steps', [200]],
  runsTraceGet: ['GET', '/v1/runs/{id}/trace', [200]],
  runsUsageGet: ['GET', '/v1/runs/{id}/usage', [200]],
};

// The model types of the SDK's types.gen.ts (everything before the per-operation types,
// ClientOptions aside: it configures the client and never travels).
const SDK_TYPES = [
  'AutomationDatasetImportMultipartRequest',
  'EvaluatorConfigUpdate',
  'DatasetExampleMutation',
  'DatasetExampleUpdate',
  'DatasetExampleExpectedFileUploadRequest',
  'DatasetExampleExpectedFileRenameRequest',
  'DatasetExampleInputFileUploadRequest',
  'DatasetExampleInputFileRenameRequest',
  'ExperimentCreate',
  'CreateFileMultipartRequest',
  'CreateFileUploadSessionRequest',
  'RunStartBody',
  'RunStartMultipartRequest',
  'PromoteRunRequest',
  'RunReviewRequest',
  'RunReviewExpectedFileCopyRequest',
  'RunReviewExpectedFileUploadRequest',
  'RunReviewExpectedFileUpdateRequest',
  'AuthCheckResponse',
  'ApiErrorEnvelope',
  'ApiErrorIssue',
  'ListAutomationsResponse',
  'AutomationSummary',
  'AutomationType',
  'AutomationTriggerState',
  'AutomationDetail',
  'DatasetImportResponse',
  'EvaluatorConfigResponse',
  'DatasetExampleList',
  'DatasetExample',
  'DatasetExampleExpectedFileList',
  'DatasetExampleExpectedFileUploadResponse',
  'DatasetExampleExpectedFileRenameResponse',
  'DatasetExampleInputFileList',
  'DatasetExampleInputFileUploadResponse',
  'DatasetExampleInputFileRenameResponse',
  'ExampleRunResponse',
  'Experiment',
  'ExperimentCreateResponse',
  'ExperimentDetail',
  'EvalResult',
  'RunReviewHealthResponse',
  'RunReviewHealthSummary',
  'RunReviewHealthConfidence',
  'RunReviewHealthBucket',
  'RunReviewHealthRollingPoint',
  'AutomationTriggersResponse',
  'ListAutomationVersionsResponse',
  'AutomationVersion',
  'ExperimentRef',
  'File',
  'DeleteFileResponse',
  'PresignedFileUploadSession',
  'MultipartFileUploadFallback',
  'AbortFileUploadResponse',
  'RunsListResponse',
  'RunListItem',
  'RunTiming',
  'RunSource',
  'RunSourceGit',
  'RunTrigger',
  'RunEval',
  'RunError',
  'RunExecutionMeta',
  'ExecutionStatus',
  'RunExecutionRetry',
  'RunReviewSummary',
  'RunStartResponse',
  'RunAccepted',
  'Run',
  'RunArtifact',
  'RunInput',
  'RunFile',
  'RunUsage',
  'RunExecution',
  'WorkflowRunExecution',
  'RunReview',
  'RunReviewCorrection',
  'AgentRunExecution',
  'RunDebug',
  'RunArtifactsResponse',
  'RunCancelResponse',
  'RunEventsResponse',
  'RunEvent',
  'PromoteRunResponse',
  'RunRerunResponse',
  'RunReviewDetail',
  'RunReviewExpectedArtifacts',
  'RunReviewExpectedFileMutationResponse',
  'RunReviewExpectedFileUpdateResponse',
  'RunScoresResponse',
  'RunStepsResponse',
  'RunTraceResponse',
  'RunTraceEvent',
  'RunUsageResponse',
];

// Three response bodies the SDK declares inline get the SDK's alias names.
const ALIAS_TYPES = [
  'AutomationsSyncResponse',
  'AutomationsExperimentsListResponse',
  'FilesUploadsCreateResponse',
];

// `format: binary` marks file parts and downloads; neither validator knows it without help
// (ajv-formats is not a dependency), and a byte string is any string.
FormatRegistry.Set('binary', () => true);
const ajv = new Ajv({ strict: false, allErrors: true });
ajv.addFormat('binary', true);

const idOf = (s: TSchema) => (s as { $id?: string }).$id;
const compiled = new Map<TSchema, { tb: TypeCheck<TSchema>; ajv: ValidateFunction }>();
function compile(schema: TSchema): { tb: TypeCheck<TSchema>; ajv: ValidateFunction } {
  let c = compiled.get(schema);
  if (!c) {
    c = { tb: TypeCompiler.Compile(schema), ajv: ajv.compile(toPlainJsonSchema(schema)) };
    compiled.set(schema, c);
  }
  return c;
}
function check(schema: TSchema, value: unknown): { typebox: boolean; ajv: boolean } {
  const c = compile(schema);
  return { typebox: c.tb.Check(value), ajv: c.ajv(value) };
}
function accepts(schema: TSchema, value: unknown): void {
  assert.deepEqual(
    check(schema, value),
    { typebox: true, ajv: true },
    `${idOf(schema)} should accept the sample`,
  );
}
function rejects(schema: TSchema, value: unknown): void {
  assert.deepEqual(
    check(schema, value),
    { typebox: false, ajv: false },
    `${idOf(schema)} should reject the sample`,
  );
}
/** The sample validates, and the same object with one extra top-level field does not. */
function exact(schema: TSchema, sample: Record<string, unknown>): void {
  accepts(schema, sample);
  rejects(schema, { ...sample, internalField: 1 });
}

/** Walks a schema, visiting every object schema it contains. */
function eachObject(schema: unknown, visit: (s: Record<string, unknown>) => void): void {
  if (Array.isArray(schema)) return schema.forEach((s) => eachObject(s, visit));
  if (schema === null || typeof schema !== 'object') return;
  const s = schema as Record<string, unknown>;
  if (s['type'] === 'object') visit(s);
  for (const v of Object.values(s)) eachObject(v, visit);
}

const retry = { number: 0, previousRunId: null, nextRun: null };
const timing = {
  createdAt: '2025-01-01T00:00:00.000Z',
  startedAt: '2025-01-01T00:00:01.000Z',
  completedAt: '2025-01-01T00:00:03.000Z',
  durationMs: 2000,
  cancelRequestedAt: null,
};
const runListItem = {
  id: 'run_1',
  type: 'workflow',
  finished: true,
  sampleRank: 0.42,
  timing,
  source: { id: 'wf_1', name: 'Extract invoice', version: '1.2.0' },
  trigger: { type: 'api', by: { id: 'user_1', name: null, email: 'a@example.com' } },
  error: null,
  execution: { status: 'completed', schemaValid: true, batchId: null, retry, review: null },
};
const review = {
  id: 'rev_1',
  verdict: 'incorrect',
  status: 'open',
  note: 'Looks wrong',
  reviewedBy: 'user_1',
  reviewedByEmail: 'a@example.com',
  reviewedAt: '2025-01-02T00:00:00.000Z',
  closedBy: null,
  closedByEmail: null,
  closedAt: null,
  closedNote: null,
  createdAt: '2025-01-02T00:00:00.000Z',
  updatedAt: '2025-01-02T00:00:00.000Z',
  corrections: [
    {
      id: 'cor_1',
      kind: 'field',
      path: '/total',
      label: null,
      originalValue: 10,
      correctedValue: 12,
      note: '',
      createdAt: '2025-01-02T00:00:00.000Z',
      updatedAt: '2025-01-02T00:00:00.000Z',
    },
  ],
};
// `client.runs.get(id, { expand: ['usage', 'execution'] })` on a finished workflow run.
const expandedRun = {
  ...runListItem,
  output: { total: 10 },
  files: [
    { name: 'out.json', role: 'output', path: 'output/out.json', contentType: 'application/json', size: 12 },
  ],
  usage: {
    tokens: { input: 100, output: 20, cacheRead: null, cacheWrite: null },
    creditsCharged: 1,
    durationMs: 2000,
    llmCallCount: 1,
    ocrPagesProcessed: 0,
  },
  execution: {
    status: 'completed',
    schemaValid: true,
    batchId: null,
    retry,
    review,
    steps: [{ name: 'extract' }],
    expected: { output: { total: 12 }, files: [{ name: 'expected.pdf' }] },
  },
};
const evalResult = {
  id: 'ev_1',
  runId: 'run_1',
  automationId: 'wf_1',
  evaluatorName: 'exact',
  evaluatorType: 'json-match',
  score: 1,
  passed: true,
  label: null,
  weight: 1,
  passThreshold: 0.8,
  description: null,
  details: null,
  error: null,
  createdAt: '2025-01-01T00:00:04.000Z',
};

describe('wire schemas (the SDK public types)', () => {
  it('every schema compiles with the TypeBox compiler and with Ajv', () => {
    for (const schema of WIRE_SCHEMAS) {
      assert.doesNotThrow(() => compile(schema), idOf(schema));
    }
  });

  it('names every SDK model type once, by its SDK name', () => {
    const ids = WIRE_SCHEMAS.map(idOf);
    assert.ok(ids.every((id) => typeof id === 'string'));
    assert.equal(new Set(ids).size, ids.length, 'duplicate $id');
    assert.deepEqual([...ids].sort(), [...SDK_TYPES, ...ALIAS_TYPES].sort());
  });

  it('closes every response object except where the SDK type is an open record', () => {
    const open: string[] = [];
    for (const schema of WIRE_SCHEMAS) {
      const id = idOf(schema) ?? '';
      if (/Request$|Body$|Mutation$|Update$|^ExperimentCreate$/.test(id)) continue;
      eachObject(schema, (o) => {
        const records = o['patternProperties'] !== undefined;
        if (!records && o['additionalProperties'] !== false)
          open.push(`${id}:${typeof o['$id'] === 'string' ? o['$id'] : '(inline)'}`);
      });
    }
    // RunTraceEvent has an index signature in the SDK: the one open response object.
    assert.ok(open.length > 0);
    assert.deepEqual(
      open.filter((o) => !o.endsWith(':RunTraceEvent')),
      [],
    );
  });

  it('lists exactly the SDK operations, with their method, path and every status the SDK names', () => {
    assert.deepEqual(Object.keys(SDK_OPERATIONS).sort(), Object.keys(SDK_OPS).sort());
    for (const [name, [method, path, statuses]] of Object.entries(SDK_OPS)) {
      const op = SDK_OPERATIONS[name as keyof typeof SDK_OPERATIONS];
      assert.equal(op.method, method, name);
      assert.equal(op.path, path, name);
      assert.deepEqual(
        op.pathParams,
        [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]),
        name,
      );
      const listed = Object.keys(op.responses).map(Number);
      assert.deepEqual(listed.sort(), [...statuses, ...ERROR_STATUSES].sort(), name);
      for (const status of statuses) {
        const content = op.responses[status]?.content ?? {};
        if (status === 204) assert.deepEqual(content, {}, name);
        else assert.ok(Object.keys(content).length > 0, `${name} ${status} has no body schema`);
      }
      for (const status of ERROR_STATUSES)
        assert.equal(op.responses[status]?.content[JSON_TYPE], ApiErrorEnvelope);
    }
  });

  it('marks downloads as binary and keeps JSON bodies named after SDK types', () => {
    const download = SDK_OPERATIONS.filesContentGet.responses[200].content;
    assert.ok(Object.values(download).every((s) => s === Binary));
    assert.equal(SDK_OPERATIONS.runsArtifactsList.responses[200].content['application/zip'], Binary);
    assert.equal(SDK_OPERATIONS.runsGet.responses[200].content[JSON_TYPE], Run);
    const named = new Set(WIRE_SCHEMAS);
    for (const [name, op] of Object.entries(SDK_OPERATIONS)) {
      const bodies = 'body' in op ? Object.values(op.body.content) : [];
      for (const schema of bodies)
        assert.ok(named.has(schema), `${name}: request body is not a named wire schema`);
    }
  });

  it('sends queries with the SDK spelling and multipart where the SDK serializes form data', () => {
    assert.ok('wait_for_completion' in SDK_OPERATIONS.runsStart.query.properties);
    assert.ok('triggeredBy' in SDK_OPERATIONS.runsList.query.properties);
    assert.deepEqual(SDK_OPERATIONS.automationsExperimentsExport.query.required, ['format']);
    assert.deepEqual(Object.keys(SDK_OPERATIONS.filesCreate.body.content), ['multipart/form-data']);
    assert.deepEqual(Object.keys(SDK_OPERATIONS.filesUploadsCreate.body.content), [JSON_TYPE]);
    assert.deepEqual(Object.keys(SDK_OPERATIONS.runsReviewsExpectedCreate.body.content).sort(), [
      JSON_TYPE,
      'multipart/form-data',
    ]);
  });

  it('accepts SDK-shaped runs and rejects extra fields, wrong types and misplaced nulls', () => {
    exact(RunsListResponse, { runs: [runListItem], nextCursor: null });
    exact(Run, runListItem);
    exact(Run, expandedRun);
    // A queued run: everything that has not happened yet is null.
    exact(Run, {
      ...runListItem,
      finished: false,
      timing: {
        createdAt: timing.createdAt,
        startedAt: null,
        completedAt: null,
        durationMs: null,
        cancelRequestedAt: null,
      },
      source: { id: 'ag_1', name: null, version: null, slug: 'support', model: null, git: null },
      trigger: { type: null, by: null },
      eval: { example: null, score: null, passed: null },
      execution: { status: 'pending', schemaValid: null, batchId: null, retry, review: null },
    });
    exact(RunStartResponse, { id: 'run_2', type: 'agent', finished: false });
    exact(RunStartResponse, expandedRun);
    // An extra field one level down fails too.
    rejects(Run, { ...runListItem, timing: { ...timing, queuedAt: null } });
    // Nulls only where the type allows them.
    rejects(Run, { ...runListItem, timing: { ...timing, createdAt: null } });
    accepts(Run, { ...runListItem, source: { ...runListItem.source, git: null } });
    rejects(Run, { ...runListItem, sampleRank: '0.4' });
    rejects(Run, { ...runListItem, execution: { ...runListItem.execution, status: 'done' } });
    const { trigger: _trigger, ...noTrigger } = runListItem;
    rejects(Run, noTrigger);
    rejects(RunStartResponse, { id: 'run_2', type: 'agent', finished: true });
    exact(RunCancelResponse, {
      id: 'run_1',
      type: 'workflow',
      finished: false,
      execution: { status: 'running' },
      cancellation: { state: 'requested', wasStatus: 'running' },
    });
  });

  it('keeps the SDK open records open', () => {
    accepts(RunTraceEvent, { type: 'tool_call', tool: 'search', args: { q: 'x' } });
    rejects(RunTraceEvent, { type: 1 });
    accepts(Run, { ...runListItem, output: { anything: { nested: [1, 2] } } });
  });

  it('accepts SDK-shaped examples, experiments, reviews, files and errors, and rejects extras', () => {
    exact(DatasetExample, {
      id: 'ex_1',
      name: 'golden-invoice',
      automationId: 'wf_1',
      automationType: 'workflow',
      input: { invoice: { $file: 'input/invoice.pdf' } },
      expected: null,
      expectedFiles: [{ name: 'result.pdf' }],
      metadata: null,
      annotation: null,
      rowOrder: null,
      overrides: null,
      latestRunId: null,
    });
    exact(ExperimentDetail, {
      id: 'exp_1',
      automationId: 'wf_1',
      automationType: 'workflow',
      status: 'completed',
      runCount: 1,
      completedCount: 1,
      passedCount: 1,
      failedCount: 0,
      avgScore: 1,
      createdAt: '2025-01-01T00:00:00.000Z',
      completedAt: '2025-01-01T00:01:00.000Z',
      version: '1.2.0',
      runs: [
        {
          id: 'run_1',
          status: 'completed',
          exampleId: 'ex_1',
          exampleName: 'golden-invoice',
          createdAt: '2025-01-01T00:00:00.000Z',
          completedAt: '2025-01-01T00:00:03.000Z',
        },
      ],
      resultsByRun: { run_1: [evalResult] },
    });
    rejects(ExperimentDetail, {
      id: 'exp_1',
      resultsByRun: { run_1: [{ ...evalResult, extra: true }] },
    });
    exact(RunReviewDetail, { review });
    exact(RunReviewDetail, { review: null });
    exact(RunReviewHealthResponse, {
      timeRange: { from: '2025-01-01T00:00:00.000Z', to: '2025-02-01T00:00:00.000Z' },
      granularity: { bucket: 'week', rollingWindow: 20, minRollingReviews: 5 },
      summary: {
        totalRuns: 10,
        reviewedRuns: 0,
        reviewCoverage: null,
        correctReviews: 0,
        incorrectReviews: 0,
        nitReviews: 0,
        reviewedCorrectness: null,
        confidence: { lower: null, upper: null, method: 'wilson' },
      },
      buckets: [],
      rolling: [],
    });
    exact(DatasetImportResponse, { mode: 'append', created: 2, expectedSet: 1, skipped: 0, issues: [] });
    rejects(DatasetImportResponse, {
      mode: 'append',
      created: 2,
      expectedSet: 1,
      deleted: 0,
      filesDeleted: 0,
    });
    exact(File, {
      id: 'file_1',
      filename: 'invoice.pdf',
      contentType: 'application/pdf',
      size: 1024,
      createdAt: '2025-01-01T00:00:00.000Z',
    });
    exact(FilesUploadsCreateResponse, {
      transport: 'multipart',
      url: '/v1/files',
      maxFileSizeBytes: 1048576,
    });
    exact(AuthCheckResponse, {
      ok: true,
      tenantId: 't_1',
      tenantSlug: 'acme',
      tenantName: null,
      userId: null,
      keyId: 'key_1',
      email: null,
      name: null,
      scope: ['runs:read'],
      wildcardGranted: false,
    });
    exact(ApiErrorEnvelope, {
      issues: [{ field: 'target', message: 'target is required', code: 'invalid_value', severity: 'error' }],
      requestId: 'req_1',
    });
  });

  it('validates request bodies leniently on extra fields but still requires what the SDK requires', () => {
    accepts(RunStartBody, {
      target: 'workflows.extract-invoice',
      input: { currency: 'EUR' },
      files: {
        invoice: { $fileId: 'file_1' },
        pages: [{ $inline: { filename: 'a.png', mimeType: 'image/png', base64: '' } }],
      },
      futureField: true,
    });
    rejects(RunStartBody, { input: {} });
    rejects(RunStartBody, { target: 'workflows.x', files: { invoice: { $inline: { filename: 'a' } } } });
  });
});
