// Review routes: the review of a run, its corrected (expected) files, promotion of a run to a
// dataset example, and an automation's review health.

import { createReadStream } from 'node:fs';
import { copyFile, mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import type { HttpRequest } from '../../core/http/index.js';
import { invalid, notFound, ApiError } from '../errors.js';
import type { ApiRoute } from '../http/api.js';
import { IdListString } from '../http/ids.js';
import { isMultipart, parseMultipart } from '../http/multipart.js';
import { principalOf, tenantOf } from '../http/principal.js';
import { parseEndTime, parseTime } from '../http/time.js';
import { parseQuery, validateBody } from '../http/validate.js';
import { writeTemp } from '../files/blobs.js';
import { matches, type RunListQuery } from '../runs/list.js';
import { TERMINAL, type RunRecord } from '../runs/types.js';
import type { QualityContext } from '../quality.js';
import { sendFile } from '../datasets/routes.js';
import { createExample } from '../datasets/example.js';
import { newExampleId } from '../datasets/store.js';
import type { ExampleFileRef } from '../datasets/types.js';
import { exampleView } from '../datasets/types.js';
import { MAX_BUCKETS, bucketStart, nextBucket, reviewHealth, type Bucket } from './health.js';
import type { ExpectedFile, ReviewRecord, ReviewStatus, Verdict } from './types.js';

const Open = Type.Object({}, { additionalProperties: true });
const Json = (description: string) => ({ description, schema: Open });

const CorrectionSchema = Type.Object(
  {
    kind: Type.Union([Type.Literal('field'), Type.Literal('file')]),
    path: Type.String({ maxLength: 4096 }),
    label: Type.Optional(Type.String({ maxLength: 1024 })),
    originalValue: Type.Optional(Type.Unknown()),
    correctedValue: Type.Optional(Type.Unknown()),
    note: Type.Optional(Type.String({ maxLength: 65536 })),
    correctedArtifactPath: Type.Optional(Type.String({ maxLength: 1024 })),
  },
  { additionalProperties: false },
);
const ReviewBody = Type.Object(
  {
    verdict: Type.Optional(Type.Union([Type.Literal('correct'), Type.Literal('incorrect'), Type.Null()])),
    status: Type.Optional(
      Type.Union([Type.Literal('open'), Type.Literal('closed'), Type.Literal('wont_fix')]),
    ),
    note: Type.Optional(Type.Union([Type.String({ maxLength: 65536 }), Type.Null()])),
    correctedOutput: Type.Optional(Type.Unknown()),
    corrections: Type.Optional(Type.Array(CorrectionSchema, { maxItems: 1000 })),
  },
  { additionalProperties: false },
);
type ReviewBodyT = {
  verdict?: Verdict;
  status?: ReviewStatus;
  note?: string | null;
  correctedOutput?: unknown;
  corrections?: ReviewRecord['corrections'];
};
const CopyBody = Type.Object(
  {
    outputFileName: Type.String({ minLength: 1, maxLength: 1024 }),
    expectedName: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);
const RenameBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    newFilename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);
const PromoteBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    exampleId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9_-]{1,128}$' })),
  },
  { additionalProperties: false },
);

const HealthQuery = Type.Object({
  type: Type.Optional(Type.String()),
  status: Type.Optional(Type.String()),
  trigger: Type.Optional(Type.String()),
  triggered_by: Type.Optional(Type.String()),
  source_ref: Type.Optional(Type.String()),
  batch_id: Type.Optional(IdListString()),
  example_id: Type.Optional(IdListString()),
  example_id_contains: Type.Optional(Type.String()),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  completed_after: Type.Optional(Type.String()),
  completed_before: Type.Optional(Type.String()),
  experiments: Type.Optional(Type.Boolean()),
  bucket: Type.Optional(Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')])),
  rolling_window: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  min_rolling_reviews: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
});
type HealthQ = {
  type?: string;
  status?: string;
  trigger?: string;
  triggered_by?: string;
  source_ref?: string;
  batch_id?: string;
  example_id?: string;
  example_id_contains?: string;
  from?: string;
  to?: string;
  completed_after?: string;
  completed_before?: string;
  experiments?: boolean;
  bucket?: Bucket;
  rolling_window?: number;
  min_rolling_reviews?: number;
};

const FILE_NAME = /^[^/\\\0]{1,255}$/;
function cleanName(name: string, field: string): string {
  if (!FILE_NAME.test(name) || name === '.' || name === '..')
    throw invalid(field, `invalid file name ${JSON.stringify(name)}: one path segment without slashes`);
  return name;
}
const csv = (s: string | undefined) =>
  s === undefined
    ? undefined
    : s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function reviewRoutes(q: QualityContext): ApiRoute[] {
  const tag = 'reviews';
  const runOf = (req: HttpRequest): RunRecord => {
    const id = req.params['id'] ?? '';
    const run = q.runs.get(id);
    if (!run || run.tenant !== tenantOf(req)) throw notFound(`run ${JSON.stringify(id)}`, 'id');
    return run;
  };
  /** Reviews are of finished runs; the stored record is then final and safe to amend. */
  const finishedRun = (req: HttpRequest): RunRecord => {
    const run = runOf(req);
    const stored = q.runs.store.get(run.id);
    if (!TERMINAL.has(run.status) || !stored || !TERMINAL.has(stored.status))
      throw new ApiError(
        409,
        'run_not_finished',
        `run ${run.id} is ${run.status}; only finished runs can be reviewed`,
        [
          {
            field: 'id',
            message: `run ${run.id} is ${run.status}; only finished runs can be reviewed`,
            code: 'run_not_finished',
          },
        ],
      );
    return stored;
  };
  const reviewOf = (run: RunRecord) => {
    const r = q.reviews.get(run);
    if (!r) throw notFound(`review of run ${JSON.stringify(run.id)} (PUT /runs/{id}/reviews first)`, 'id');
    return r;
  };
  const expectedDir = (runId: string) => join(q.runs.runDir(runId), 'expected');
  const fileView = (runId: string, f: ExpectedFile) => ({
    ...f,
    path: `expected/${f.name}`,
    url: `/api/v1/runs/${encodeURIComponent(runId)}/reviews/expected/${encodeURIComponent(f.name)}`,
  });
  const view = (run: RunRecord, r: ReviewRecord | undefined) => ({
    runId: run.id,
    automationId: run.automationId,
    review: r
      ? {
          verdict: r.verdict,
          status: r.status,
          note: r.note,
          correctedOutput: r.correctedOutput === undefined ? null : r.correctedOutput,
          hasCorrectedOutput: r.correctedOutput !== undefined,
          corrections: r.corrections,
          reviewedBy: r.reviewedBy,
          closedBy: r.closedBy,
          createdAt: iso(r.createdAt),
          updatedAt: iso(r.updatedAt),
          closedAt: iso(r.closedAt),
        }
      : null,
    expectedFiles: (r?.expectedFiles ?? []).map((f) => fileView(run.id, f)),
  });
  const changeFiles = async (run: RunRecord, review: ReviewRecord, files: ExpectedFile[]) => {
    const next = { ...review, expectedFiles: files, updatedAt: Date.now() };
    await q.reviews.save(run, next);
    return next;
  };

  return [
    {
      method: 'GET',
      path: '/runs/{id}/reviews',
      operationId: 'getRunReview',
      summary: 'The review of a run (review: null when it has none)',
      tag,
      responses: { 200: Json('RunReviewDetail') },
      handle(req, res) {
        const run = runOf(req);
        res.json(view(run, q.reviews.get(run)));
      },
    },
    {
      method: 'PUT',
      path: '/runs/{id}/reviews',
      operationId: 'putRunReview',
      summary: 'Create or replace the review of a finished run',
      tag,
      body: { schema: ReviewBody, contentTypes: ['application/json'] },
      responses: { 200: Json('RunReviewDetail') },
      async handle(req, res) {
        const p = principalOf(req);
        const run = finishedRun(req);
        const body = validateBody<ReviewBodyT>(ReviewBody, await req.json(['application/json']));
        const before = q.reviews.get(run);
        const now = Date.now();
        const verdict = body.verdict === undefined ? null : body.verdict;
        // A verdict settles the review unless told otherwise; a nit (null verdict) stays open.
        const status: ReviewStatus = body.status ?? (verdict === null ? 'open' : 'closed');
        const closing = status !== 'open';
        const review: ReviewRecord = {
          runId: run.id,
          automationId: run.automationId,
          verdict,
          status,
          note: body.note ?? null,
          ...(body.correctedOutput !== undefined ? { correctedOutput: body.correctedOutput } : {}),
          corrections: body.corrections ?? [],
          reviewedBy: p.user,
          closedBy: closing
            ? before?.status !== 'open' && before?.closedBy
              ? before.closedBy
              : p.user
            : null,
          createdAt: before?.createdAt ?? now,
          updatedAt: now,
          closedAt: closing
            ? before && before.status !== 'open' && before.closedAt !== null
              ? before.closedAt
              : now
            : null,
          expectedFiles: before?.expectedFiles ?? [],
        };
        await q.reviews.save(run, review);
        res.json(view(run, review));
      },
    },
    {
      method: 'DELETE',
      path: '/runs/{id}/reviews',
      operationId: 'deleteRunReview',
      summary: 'Remove the review, its corrections and corrected files',
      tag,
      responses: { 200: Json('RunReviewDetail (as it was)') },
      async handle(req, res) {
        const run = finishedRun(req);
        const review = reviewOf(run);
        await q.reviews.save(run, null);
        await rm(expectedDir(run.id), { recursive: true, force: true });
        res.json({ ...view(run, review), deleted: true });
      },
    },
    {
      method: 'GET',
      path: '/runs/{id}/reviews/expected',
      operationId: 'listRunReviewExpected',
      summary: 'Corrected (expected) files of the review',
      tag,
      responses: { 200: Json('RunReviewExpectedArtifacts') },
      handle(req, res) {
        const run = runOf(req);
        const files = (q.reviews.get(run)?.expectedFiles ?? []).map((f) => fileView(run.id, f));
        res.json({ runId: run.id, files, artifacts: files.map((f) => f.path) });
      },
    },
    {
      method: 'POST',
      path: '/runs/{id}/reviews/expected',
      operationId: 'addRunReviewExpected',
      summary:
        'Add a corrected file: multipart `file` (+ `name`), or JSON {outputFileName, expectedName} to copy an output file',
      tag,
      body: { contentTypes: ['multipart/form-data', 'application/json'], schema: CopyBody },
      maxBodyBytes: q.settings.maxUploadBytes + 64 * 1024,
      responses: { 201: Json('RunReviewExpectedFileMutationResponse') },
      async handle(req, res) {
        const run = finishedRun(req);
        const review = reviewOf(run);
        const dir = expectedDir(run.id);
        await mkdir(dir, { recursive: true });
        let file: ExpectedFile;
        if (isMultipart(req)) {
          const form = await parseMultipart(
            req,
            { fileBytes: q.settings.maxUploadBytes, files: 1, fieldBytes: 4096 },
            (source, limit) => writeTemp(join(q.tmpDir, 'review-uploads'), source, limit),
            (t) => rm(t.path, { force: true }),
          );
          const part = form.files[0];
          if (!part) throw invalid('file', 'the multipart body has no file part');
          let name: string;
          try {
            name = cleanName(form.fields['name'] ?? part.filename, 'name');
          } catch (err) {
            await rm(part.stored.path, { force: true });
            throw err;
          }
          await rename(part.stored.path, join(dir, name));
          file = { name, size: part.stored.size, contentType: part.contentType, source: 'upload' };
        } else {
          const body = validateBody<{ outputFileName: string; expectedName?: string }>(
            CopyBody,
            await req.json(['application/json']),
          );
          const wanted = body.outputFileName.replace(/^output\//, '');
          const artifact = run.files.find(
            (f) => f.role === 'output' && (f.name === wanted || f.path === `output/${wanted}`),
          );
          if (!artifact)
            throw notFound(
              `output file ${JSON.stringify(body.outputFileName)} of run ${run.id}`,
              'outputFileName',
            );
          const name = cleanName(body.expectedName ?? wanted.split('/').pop()!, 'expectedName');
          await copyFile(join(q.runs.runDir(run.id), artifact.path), join(dir, name));
          file = {
            name,
            size: artifact.size,
            contentType: artifact.contentType,
            source: `output:${artifact.name}`,
          };
        }
        const next = await changeFiles(run, review, [
          ...review.expectedFiles.filter((f) => f.name !== file.name),
          file,
        ]);
        res.json(
          {
            runId: run.id,
            file: fileView(run.id, file),
            expectedFiles: next.expectedFiles.map((f) => fileView(run.id, f)),
          },
          201,
        );
      },
    },
    {
      method: 'GET',
      path: '/runs/{id}/reviews/expected/{filename}',
      operationId: 'downloadRunReviewExpected',
      summary: 'Bytes of a corrected file',
      tag,
      responses: { 200: { description: 'file bytes', contentType: 'application/octet-stream' } },
      async handle(req, res) {
        const run = runOf(req);
        const name = req.params['filename'] ?? '';
        const f = q.reviews.get(run)?.expectedFiles.find((x) => x.name === name);
        if (!f) throw notFound(`expected file ${JSON.stringify(name)}`, 'filename');
        await sendFile(res, join(expectedDir(run.id), f.name), f.contentType, f.name);
      },
    },
    {
      method: 'PATCH',
      path: '/runs/{id}/reviews/expected/{filename}',
      operationId: 'renameRunReviewExpected',
      summary: 'Rename a corrected file',
      tag,
      body: { schema: RenameBody, contentTypes: ['application/json'] },
      responses: { 200: Json('RunReviewExpectedFileUpdateResponse') },
      async handle(req, res) {
        const run = finishedRun(req);
        const review = reviewOf(run);
        const name = req.params['filename'] ?? '';
        const body = validateBody<{ name?: string; newFilename?: string }>(
          RenameBody,
          await req.json(['application/json']),
        );
        const target = cleanName(body.name ?? body.newFilename ?? '', 'name');
        const f = review.expectedFiles.find((x) => x.name === name);
        if (!f) throw notFound(`expected file ${JSON.stringify(name)}`, 'filename');
        if (target !== name && review.expectedFiles.some((x) => x.name === target))
          throw new ApiError(409, 'conflict', `expected file ${target} already exists`, [
            { field: 'name', message: `expected file ${target} already exists`, code: 'conflict' },
          ]);
        await rename(join(expectedDir(run.id), name), join(expectedDir(run.id), target));
        const next = await changeFiles(
          run,
          review,
          review.expectedFiles.map((x) => (x.name === name ? { ...x, name: target } : x)),
        );
        res.json({
          ok: true,
          runId: run.id,
          filename: target,
          path: `expected/${target}`,
          expectedFiles: next.expectedFiles.map((x) => fileView(run.id, x)),
        });
      },
    },
    {
      method: 'DELETE',
      path: '/runs/{id}/reviews/expected/{filename}',
      operationId: 'deleteRunReviewExpected',
      summary: 'Delete a corrected file',
      tag,
      responses: { 200: Json('{ok, deleted}') },
      async handle(req, res) {
        const run = finishedRun(req);
        const review = reviewOf(run);
        const name = req.params['filename'] ?? '';
        if (!review.expectedFiles.some((x) => x.name === name))
          throw notFound(`expected file ${JSON.stringify(name)}`, 'filename');
        await changeFiles(
          run,
          review,
          review.expectedFiles.filter((x) => x.name !== name),
        );
        await rm(join(expectedDir(run.id), name), { force: true });
        res.json({ ok: true, deleted: true, filename: name });
      },
    },
    {
      method: 'POST',
      path: '/runs/{id}/promote',
      operationId: 'promoteRun',
      summary: "Make a dataset example from the run's input, corrected output and files",
      tag,
      body: { schema: PromoteBody, contentTypes: ['application/json'] },
      responses: { 201: Json('PromoteRunResponse') },
      async handle(req, res) {
        const run = finishedRun(req);
        const raw = (req.headers['content-length'] ?? '') === '0' ? {} : await req.json(['application/json']);
        const body = validateBody<{ name?: string; exampleId?: string }>(PromoteBody, raw ?? {});
        const review = q.reviews.get(run);
        const detail = q.runs.getDetail(run.id);
        const automation = q.registry.get(run.automationId);
        if (!automation) throw notFound(`automation ${run.automationId}`, 'id');
        const id = body.exampleId ?? newExampleId();
        if (q.examples.get(run.tenant, run.automationId, id))
          throw new ApiError(409, 'conflict', `example ${id} already exists`, [
            { field: 'exampleId', message: `example ${id} already exists`, code: 'conflict' },
          ]);
        const runDir = q.runs.runDir(run.id);
        const staged: string[] = [];
        const store = async (path: string, contentType: string): Promise<ExampleFileRef> => {
          const blob = await q.blobs.write(createReadStream(path) as AsyncIterable<Buffer>);
          staged.push(blob.sha256);
          return { sha256: blob.sha256, size: blob.size, contentType };
        };
        try {
          const input: Record<string, ExampleFileRef> = {};
          for (const f of detail?.input.files ?? [])
            input[f.path.replace(/^input\//, '')] = await store(join(runDir, f.path), f.contentType);
          const expected: Record<string, ExampleFileRef> = {};
          if (review && review.expectedFiles.length > 0) {
            for (const f of review.expectedFiles)
              expected[f.name] = await store(join(runDir, 'expected', f.name), f.contentType);
          } else {
            for (const f of run.files.filter((x) => x.role === 'output'))
              if (await stat(join(runDir, f.path)).catch(() => undefined))
                expected[f.name] = await store(join(runDir, f.path), f.contentType);
          }
          const example = createExample(
            run.tenant,
            { id: run.automationId, type: run.type },
            {
              id,
              name: body.name ?? `run ${run.id}`,
              input: detail?.input.args ?? {},
              expected: review && review.correctedOutput !== undefined ? review.correctedOutput : run.output,
              metadata: { promotedFromRunId: run.id, reviewVerdict: review?.verdict ?? null },
              annotation: review?.note ?? null,
              rowOrder: q.examples.nextRowOrder(run.tenant, run.automationId),
              overrides: detail && Object.keys(detail.overrides).length > 0 ? detail.overrides : null,
              latestRunId: run.id,
              files: { input, expected },
            },
          );
          await q.examples.put(example);
          res.json(
            {
              automationId: run.automationId,
              automationType: run.type,
              exampleId: id,
              name: example.name,
              example: exampleView(example),
            },
            201,
          );
        } finally {
          for (const sha of staged) await q.discardBlob(sha);
        }
      },
    },
    {
      method: 'GET',
      path: '/automations/{id}/reviews/health',
      operationId: 'getReviewHealth',
      summary: 'Review coverage and correctness (Wilson interval) per bucket and over a rolling window',
      tag,
      query: HealthQuery,
      responses: { 200: Json('RunReviewHealthResponse') },
      handle(req, res) {
        const a = q.registry.find((req.params['id'] ?? '').split('@')[0]!);
        const p = parseQuery<HealthQ>(HealthQuery, req.query);
        const now = Date.now();
        const time = (name: keyof HealthQ, end: boolean) => {
          const text = p[name] as string | undefined;
          if (text === undefined) return undefined;
          const ms = end ? parseEndTime(text, now) : parseTime(text, now);
          if (ms === undefined) throw invalid(name, `cannot read ${JSON.stringify(text)} as a time`);
          return ms;
        };
        const from = time('from', false) ?? now - 30 * 86_400_000;
        const to = time('to', true) ?? now;
        if (from > to) throw invalid('from', 'from is after to');
        const bucket = p.bucket ?? 'day';
        let n = 0;
        for (let s = bucketStart(from, bucket); s <= to && n <= MAX_BUCKETS; s = nextBucket(s, bucket)) n++;
        if (n > MAX_BUCKETS)
          throw invalid(
            'bucket',
            `the range holds more than ${MAX_BUCKETS} ${bucket} buckets; use a coarser bucket`,
          );
        const triggeredBy = csv(p.triggered_by)?.map((u) => (u === 'system' ? '__system__' : u));
        const lq: RunListQuery = {
          tenant: tenantOf(req),
          limit: 0,
          sort: 'createdAt',
          order: 'asc',
          createdFrom: from,
          createdTo: to,
        };
        const types = csv(p.type);
        if (types) lq.types = types;
        const statuses = csv(p.status);
        if (statuses) lq.statuses = statuses;
        const triggers = csv(p.trigger);
        if (triggers) lq.triggers = triggers;
        if (triggeredBy) lq.triggeredBy = triggeredBy;
        if (p.source_ref !== undefined) lq.sourceRef = p.source_ref;
        const batches = csv(p.batch_id);
        if (batches) lq.batchIds = batches;
        const exampleIds = csv(p.example_id);
        if (exampleIds) lq.exampleIds = exampleIds;
        if (p.example_id_contains !== undefined) lq.exampleIdContains = p.example_id_contains;
        const ca = time('completed_after', false);
        if (ca !== undefined) lq.completedFrom = ca;
        const cb = time('completed_before', true);
        if (cb !== undefined) lq.completedTo = cb;
        if (p.experiments === false) lq.experiments = false;
        const runs: RunRecord[] = [];
        for (const { key } of q.db.runIndex.getRange({
          start: ['source', a.id, lq.tenant, from],
          end: ['source', a.id, lq.tenant, to + 1],
        })) {
          const run = q.runs.get(String(key[4]));
          if (run && matches(run, lq)) runs.push(run);
        }
        res.json(
          reviewHealth(runs, {
            from,
            to,
            bucket,
            rollingWindow: p.rolling_window ?? 100,
            minRollingReviews: p.min_rolling_reviews ?? 1,
          }),
        );
      },
    },
  ];
}
