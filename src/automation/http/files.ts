// /files routes: multipart upload streamed into the blob store, metadata, content, delete.

import { createReadStream } from 'node:fs';
import { notFound, invalid } from '../errors.js';
import * as S from '../openapi/schemas.js';
import type { FileRecord } from '../files/store.js';
import type { ApiDeps, ApiRoute } from './api.js';
import { isMultipart, parseMultipart } from './multipart.js';
import { principalOf, tenantOf } from './principal.js';
import { ApiError } from '../errors.js';

const fileView = (f: FileRecord) => ({
  id: f.id,
  filename: f.filename,
  contentType: f.contentType,
  size: f.size,
  sha256: f.sha256,
  purpose: f.purpose,
  createdAt: f.createdAt,
});

export function fileRoutes(deps: ApiDeps): ApiRoute[] {
  const { files, settings } = deps;
  const find = (tenant: string, id: string) => {
    const f = files.get(tenant, id);
    if (!f) throw notFound(`file ${JSON.stringify(id)}`, 'id');
    return f;
  };
  return [
    {
      method: 'POST',
      path: '/files',
      operationId: 'uploadFile',
      summary: 'Upload a reusable file (multipart: part `file`, optional field `purpose`)',
      tag: 'files',
      body: {
        contentTypes: ['multipart/form-data'],
        description: 'part file (the content) and optional field purpose',
      },
      maxBodyBytes: settings.maxUploadBytes + 64 * 1024,
      responses: { 201: { description: 'the stored file', schema: S.FileSchema } },
      async handle(req, res) {
        const p = principalOf(req);
        if (!isMultipart(req))
          throw new ApiError(
            415,
            'unsupported_media_type',
            'POST /files takes multipart/form-data with a part named file',
          );
        const form = await parseMultipart(
          req,
          { fileBytes: settings.maxUploadBytes, files: 1, fieldBytes: 64 * 1024 },
          (source, limit) => files.blobs.write(source, limit),
          (blob) => files.discardIfUnreferenced(blob.sha256),
        );
        const part = form.files[0];
        if (!part) throw invalid('file', 'the multipart body has no file part');
        const record = await files.create(p.tenant, part.stored, {
          filename: (form.fields['filename'] ?? part.filename).slice(0, 255),
          contentType: part.contentType,
          purpose: form.fields['purpose'] ?? null,
        });
        res.json(fileView(record), 201);
      },
    },
    {
      method: 'GET',
      path: '/files/{id}',
      operationId: 'getFile',
      summary: 'File metadata',
      tag: 'files',
      responses: { 200: { description: 'file', schema: S.FileSchema } },
      handle(req, res) {
        res.json(fileView(find(tenantOf(req), req.params['id']!)));
      },
    },
    {
      method: 'GET',
      path: '/files/{id}/content',
      operationId: 'getFileContent',
      summary: 'File bytes',
      tag: 'files',
      responses: {
        200: { description: 'content', schema: S.Binary, contentType: 'application/octet-stream' },
      },
      async handle(req, res) {
        const f = find(tenantOf(req), req.params['id']!);
        res
          .header('content-type', f.contentType)
          .header('content-disposition', `attachment; filename="${encodeURIComponent(f.filename)}"`);
        const out = res.stream(200);
        for await (const chunk of createReadStream(files.blobs.pathOf(f.sha256))) {
          if (out.aborted) return;
          await out.write(chunk as Buffer);
        }
        out.end();
      },
    },
    {
      method: 'DELETE',
      path: '/files/{id}',
      operationId: 'deleteFile',
      summary: 'Delete a file (run and dataset snapshots are unaffected)',
      tag: 'files',
      responses: { 200: { description: 'deleted', schema: S.DeleteFileResponse } },
      async handle(req, res) {
        const p = principalOf(req);
        const f = await files.delete(p.tenant, req.params['id']!);
        if (!f) throw notFound(`file ${JSON.stringify(req.params['id'])}`, 'id');
        res.json({ id: f.id, deleted: true });
      },
    },
  ];
}
