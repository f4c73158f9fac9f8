// /files routes (HTTP only; the rules are in service.ts): one-request multipart upload, upload
// sessions (create → PUT the bytes to the signed URL → complete, or abort), metadata, content
// and deletion.

import { Type } from '@sinclair/typebox';
import { sendBody } from '../../core/http/download.js';
import type { HttpRequest } from '../../core/http/index.js';
import { ApiError } from '../errors.js';
import type { ApiDeps, ApiRoute } from '../http/api.js';
import { isMultipart, parseMultipart } from '../http/multipart.js';
import { route, type RouteContext } from '../http/route.js';
import * as W from '../wire/index.js';
import { FileService, fileView } from './service.js';

/** The header that carries a file's stored content type beside the octet-stream download. */
export const FILE_CONTENT_TYPE_HEADER = 'x-file-content-type';

const UploadParams = { uploadId: 'id' } as const;
const TokenQuery = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 512, description: 'the signed token of the upload url' })),
});
const UploadReceipt = Type.Object(
  { uploadId: Type.String(), size: Type.Integer(), sha256: Type.String() },
  { additionalProperties: false },
);

/** A Host header worth putting in a URL: a name or address with an optional port. */
const HOST = /^(?:[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** The API root the caller used (`…/api/v1` or `…/v1`), as an absolute URL for the upload link. */
function apiBase(req: HttpRequest, publicUrl: string | undefined): string {
  const prefix = req.path.startsWith('/api/v1/') ? '/api/v1' : '/v1';
  if (publicUrl !== undefined) return publicUrl + prefix;
  const host = req.headers['host'] ?? '';
  if (!HOST.test(host))
    throw new ApiError(
      400,
      'invalid_host',
      'the Host header cannot be used in an upload URL; the operator can set AUTOMATION_PUBLIC_URL',
    );
  return `http://${host}${prefix}`;
}

export function fileRoutes(deps: ApiDeps): ApiRoute[] {
  const { settings } = deps;
  const files = new FileService(deps.files, {
    maxUploadBytes: settings.maxUploadBytes,
    sessionTtlMs: settings.uploadSessionTtlMs,
    signer: deps.tokens,
  });
  const stop = files.sweepEvery(Math.min(settings.uploadSessionTtlMs, 10 * 60_000));
  deps.onClose?.(async () => stop());
  return [
    route({
      method: 'POST',
      path: '/files',
      operationId: 'filesCreate',
      summary: 'Upload a reusable file (multipart: part `file`, optional field `purpose`)',
      tag: 'files',
      body: {
        raw: true,
        contentTypes: ['multipart/form-data'],
        schema: W.CreateFileMultipartRequest,
        description: 'part file (the content), optional fields purpose and filename',
      },
      maxBodyBytes: settings.maxUploadBytes + 64 * 1024,
      responses: { 200: { description: 'the stored file', schema: W.File } },
      // Annotated: with a raw body's `schema`, the overloads would infer a JSON body type.
      async handle(ctx: RouteContext<unknown, undefined>) {
        const tenant = ctx.tenant();
        if (!isMultipart(ctx.req))
          throw new ApiError(
            415,
            'unsupported_media_type',
            'POST /files takes multipart/form-data with a part named file',
          );
        const form = await parseMultipart(
          ctx.req,
          { fileBytes: settings.maxUploadBytes, files: 1, fieldBytes: 64 * 1024 },
          files.writeBlob,
          files.discardBlob,
        );
        return files.createFromForm(tenant, form);
      },
    }),
    route({
      method: 'POST',
      path: '/files/uploads',
      operationId: 'filesUploadsCreate',
      summary: 'Open an upload session: PUT the bytes to its url, then complete it',
      tag: 'files',
      body: { schema: W.CreateFileUploadSessionRequest },
      responses: { 200: { description: 'the upload session', schema: W.FilesUploadsCreateResponse } },
      handle(ctx) {
        const base = apiBase(ctx.req, settings.publicUrl);
        return files.createSession(
          ctx.tenant(),
          ctx.body,
          (id, token) =>
            `${base}/files/uploads/${encodeURIComponent(id)}/content?token=${encodeURIComponent(token)}`,
        );
      },
    }),
    route({
      method: 'PUT',
      path: '/files/uploads/{uploadId}/content',
      operationId: 'putFileUploadContent',
      summary: "An upload session's bytes, sent to the signed url it named (no API key)",
      tag: 'files',
      // The signed token in the url is the credential (the SDK sends no key with this request).
      public: true,
      params: UploadParams,
      query: TokenQuery,
      body: { raw: true, contentTypes: ['application/octet-stream'], description: 'the file bytes' },
      maxBodyBytes: settings.maxUploadBytes,
      responses: { 200: { description: 'the bytes were received', schema: UploadReceipt } },
      handle: (ctx) => files.receive(ctx.params['uploadId']!, ctx.query.token, ctx.req.bodyStream()),
    }),
    route({
      method: 'POST',
      path: '/files/uploads/{uploadId}/complete',
      operationId: 'filesUploadsComplete',
      summary: 'Turn an upload session whose bytes arrived into a file',
      tag: 'files',
      params: UploadParams,
      responses: { 200: { description: 'the file', schema: W.File } },
      handle: (ctx) => files.complete(ctx.tenant(), ctx.params['uploadId']!),
    }),
    route({
      method: 'DELETE',
      path: '/files/uploads/{uploadId}',
      operationId: 'filesUploadsAbort',
      summary: 'Give up an upload session (its bytes are dropped)',
      tag: 'files',
      params: UploadParams,
      responses: { 200: { description: 'aborted', schema: W.AbortFileUploadResponse } },
      handle: (ctx) => files.abort(ctx.tenant(), ctx.params['uploadId']!),
    }),
    route({
      method: 'GET',
      path: '/files/{id}',
      operationId: 'filesGet',
      summary: 'File metadata',
      tag: 'files',
      responses: { 200: { description: 'file', schema: W.File } },
      handle: async (ctx) => fileView(await files.get(ctx.tenant(), ctx.params['id']!)),
    }),
    route({
      method: 'GET',
      path: '/files/{id}/content',
      operationId: 'filesContentGet',
      summary: `File bytes (application/octet-stream; the stored type in ${FILE_CONTENT_TYPE_HEADER})`,
      tag: 'files',
      responses: {
        200: { description: 'content', schema: W.Binary, contentType: 'application/octet-stream' },
      },
      async handle(ctx) {
        const { file, body } = await files.content(ctx.tenant(), ctx.params['id']!);
        ctx.res.header(FILE_CONTENT_TYPE_HEADER, file.contentType);
        await sendBody(ctx.res, body, { contentType: 'application/octet-stream', filename: file.filename });
      },
    }),
    route({
      method: 'DELETE',
      path: '/files/{id}',
      operationId: 'filesDelete',
      summary: 'Delete a file (run and dataset snapshots are unaffected)',
      tag: 'files',
      responses: { 200: { description: 'deleted', schema: W.DeleteFileResponse } },
      handle: (ctx) => files.delete(ctx.tenant(), ctx.params['id']!),
    }),
  ];
}
