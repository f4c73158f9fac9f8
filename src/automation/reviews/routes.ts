// Review routes (HTTP only): the review of a run, its corrected (expected) files, promotion of a
// run to a dataset example, and an automation's review health. Shapes are the SDK's
// (src/automation/wire/reviews.ts); the rules live in service.ts, promote.ts and health-query.ts,
// and feature.ts builds them.

import { sendStream } from '../../core/http/download.js';
import type { ApiRoute } from '../http/api.js';
import { isMultipart, parseMultipart } from '../http/multipart.js';
import { route } from '../http/route.js';
import type { AutomationSettings } from '../settings.js';
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
} from '../wire/reviews.js';
import { invalid } from '../errors.js';
import { Binary } from '../wire/operations.js';
import { reviewHealthOf, type HealthDeps } from './health-query.js';
import { promoteRun, type PromoteDeps } from './promote.js';
import { HealthQuery } from './schemas.js';
import type { ReadUpload, ReviewService } from './service.js';

const tag = 'reviews';
/** A form's `name` field is a file name: one path segment of at most 255 bytes. */
const FORM_FIELD_BYTES = 4096;

export interface ReviewRoutesDeps {
  settings: Pick<AutomationSettings, 'maxUploadBytes'>;
  reviews: ReviewService;
  promote: PromoteDeps;
  health: HealthDeps;
}

export function reviewRoutes({ settings, reviews, promote, health }: ReviewRoutesDeps): ApiRoute[] {
  const id = (params: Readonly<Record<string, string>>) => params['id'] ?? '';
  const filename = (params: Readonly<Record<string, string>>) => params['filename'] ?? '';

  return [
    route({
      method: 'GET',
      path: '/runs/{id}/reviews',
      operationId: 'runsReviewsGet',
      summary: 'The review of a run (review: null when it has none)',
      tag,
      responses: { 200: { description: 'Run review metadata', schema: RunReviewDetail } },
      handle: (ctx) => reviews.get(ctx.tenant(), id(ctx.params)),
    }),
    route({
      method: 'PUT',
      path: '/runs/{id}/reviews',
      operationId: 'runsReviewsUpdate',
      summary: 'Create or replace the review of a finished run',
      tag,
      body: { schema: RunReviewRequest },
      responses: { 200: { description: 'Updated run review metadata', schema: RunReviewDetail } },
      handle: (ctx) => {
        const user = ctx.principal?.user ?? '';
        return reviews.put(ctx.tenant(), id(ctx.params), user, ctx.body);
      },
    }),
    route({
      method: 'DELETE',
      path: '/runs/{id}/reviews',
      operationId: 'runsReviewsClear',
      summary: 'Remove the review, its corrections and corrected files',
      tag,
      responses: { 200: { description: 'Empty run review state', schema: RunReviewDetail } },
      handle: (ctx) => reviews.clear(ctx.tenant(), id(ctx.params)),
    }),
    route({
      method: 'GET',
      path: '/runs/{id}/reviews/expected',
      operationId: 'runsReviewsExpectedGet',
      summary: 'Corrected (expected) files of the review',
      tag,
      responses: { 200: { description: 'Corrected artifact files', schema: RunReviewExpectedArtifacts } },
      handle: (ctx) => reviews.listExpected(ctx.tenant(), id(ctx.params)),
    }),
    route({
      method: 'POST',
      path: '/runs/{id}/reviews/expected',
      operationId: 'runsReviewsExpectedCreate',
      summary:
        'Add a corrected file: multipart `file` (+ `name`), or JSON {outputFileName, expectedName?} to copy a run output file',
      tag,
      body: {
        schema: RunReviewExpectedFileCopyRequest,
        rawContentTypes: ['multipart/form-data'],
        rawSchemas: { 'multipart/form-data': RunReviewExpectedFileUploadRequest },
        description: `JSON ${RunReviewExpectedFileCopyRequest.$id}, or multipart ${RunReviewExpectedFileUploadRequest.$id}`,
      },
      bodyOptional: true,
      maxBodyBytes: settings.maxUploadBytes + 64 * 1024,
      responses: {
        201: { description: 'Corrected file created', schema: RunReviewExpectedFileMutationResponse },
      },
      handle: (ctx) => {
        const tenant = ctx.tenant();
        if (ctx.body) return reviews.copyOutput(tenant, id(ctx.params), ctx.body);
        if (!isMultipart(ctx.req))
          throw invalid(
            '<root>',
            'send multipart/form-data with a `file` part, or JSON {outputFileName, expectedName?}',
          );
        const read: ReadUpload = async (stage, unstage) => {
          const form = await parseMultipart(
            ctx.req,
            { fileBytes: settings.maxUploadBytes, files: 1, fieldBytes: FORM_FIELD_BYTES },
            stage,
            unstage,
          );
          const part = form.files[0];
          return (
            part && {
              temp: part.stored,
              filename: part.filename,
              contentType: part.contentType,
              name: form.fields['name'],
            }
          );
        };
        return reviews.addUpload(tenant, id(ctx.params), read);
      },
    }),
    route({
      method: 'GET',
      path: '/runs/{id}/reviews/expected/{filename}',
      operationId: 'runsReviewsExpectedFileGet',
      summary: 'Bytes of a corrected file (application/octet-stream)',
      tag,
      responses: {
        200: { description: 'Corrected file bytes', schema: Binary, contentType: 'application/octet-stream' },
      },
      handle: async (ctx) => {
        const { file, chunks } = await reviews.openExpected(
          ctx.tenant(),
          id(ctx.params),
          filename(ctx.params),
        );
        // octet-stream whatever the stored type: the SDK's download accepts only binary (or JSON,
        // which it would parse instead of handing back the bytes).
        await sendStream(ctx.res, chunks, { filename: file.name });
      },
    }),
    route({
      method: 'PATCH',
      path: '/runs/{id}/reviews/expected/{filename}',
      operationId: 'runsReviewsExpectedFileUpdate',
      summary: 'Rename a corrected file',
      tag,
      body: { schema: RunReviewExpectedFileUpdateRequest },
      responses: {
        200: { description: 'Renamed corrected file', schema: RunReviewExpectedFileUpdateResponse },
      },
      handle: (ctx) =>
        reviews.renameExpected(ctx.tenant(), id(ctx.params), filename(ctx.params), ctx.body.name),
    }),
    route({
      method: 'DELETE',
      path: '/runs/{id}/reviews/expected/{filename}',
      operationId: 'runsReviewsExpectedFileDelete',
      summary: 'Delete a corrected file',
      tag,
      responses: { 204: { description: 'Corrected file deleted; no response body' } },
      handle: async (ctx) => {
        await reviews.deleteExpected(ctx.tenant(), id(ctx.params), filename(ctx.params));
        ctx.res.send(undefined, 204);
      },
    }),
    route({
      method: 'POST',
      path: '/runs/{id}/promote',
      operationId: 'runsPromote',
      summary: "Create or update a dataset example from the run's input, corrected output and files",
      tag,
      body: { schema: PromoteRunRequest },
      bodyOptional: true,
      responses: {
        200: { description: 'Created or updated a dataset example from the run', schema: PromoteRunResponse },
      },
      handle: (ctx) => promoteRun(promote, ctx.tenant(), id(ctx.params), ctx.body ?? {}),
    }),
    route({
      method: 'GET',
      path: '/automations/{id}/reviews/health',
      operationId: 'automationsReviewsHealth',
      summary: 'Review coverage and correctness (Wilson interval) per bucket and over a rolling window',
      tag,
      query: HealthQuery,
      responses: {
        200: { description: 'Automation review health metrics', schema: RunReviewHealthResponse },
      },
      handle: (ctx) => reviewHealthOf(health, ctx.tenant(), id(ctx.params), ctx.query),
    }),
  ];
}
