// Routes of dataset examples, their input/expected files, and dataset import/export.

import { createReadStream } from 'node:fs';
import { Type } from '@sinclair/typebox';
import type { HttpRequest, HttpResponse } from '../../core/http/index.js';
import { invalid, ApiError } from '../errors.js';
import type { ApiRoute } from '../http/api.js';
import { IdListString } from '../http/ids.js';
import { isMultipart, parseMultipart } from '../http/multipart.js';
import { principalOf, tenantOf } from '../http/principal.js';
import { parseQuery, validateBody } from '../http/validate.js';
import type { QualityContext } from '../quality.js';
import { sendArchive } from '../archives/transfer.js';
import { datasetEntries, datasetSize, FIXED_MTIME } from './archive.js';
import { receiveDataset } from './import.js';
import { checkExampleValues, createExample } from './example.js';
import { cleanPath, collectFileRefs, EXAMPLE_ID, splitFileRef } from './paths.js';
import { newExampleId } from './store.js';
import { exampleView, type ExampleFileRef, type ExampleFolder, type ExampleRecord } from './types.js';
import { startExampleRun } from './run-example.js';

const Open = Type.Object({}, { additionalProperties: true });
const Json = (description: string) => ({ description, schema: Open });

const ExampleMutation = Type.Object(
  {
    id: Type.Optional(Type.String({ pattern: EXAMPLE_ID.source })),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
    input: Type.Optional(Type.Unknown()),
    expected: Type.Optional(Type.Unknown()),
    metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
    annotation: Type.Optional(Type.Union([Type.String({ maxLength: 65536 }), Type.Null()])),
    rowOrder: Type.Optional(Type.Integer()),
    overrides: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()])),
  },
  { additionalProperties: false },
);
type Mutation = {
  id?: string;
  name?: string;
  input?: unknown;
  expected?: unknown;
  metadata?: Record<string, unknown> | null;
  annotation?: string | null;
  rowOrder?: number;
  overrides?: Record<string, unknown> | null;
};

const ExportQuery = Type.Object({ example_ids: Type.Optional(IdListString('comma list of example ids')) });
const ImportQuery = Type.Object({
  mode: Type.Optional(Type.Union([Type.Literal('append'), Type.Literal('replace')])),
});
const RenameBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    newFilename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
    filename: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  { additionalProperties: false },
);

function checkRefs(body: Mutation) {
  for (const key of ['input', 'expected'] as const) {
    if (body[key] === undefined) continue;
    for (const { at, ref } of collectFileRefs(body[key]))
      if (!splitFileRef(ref))
        throw invalid(
          at ? `${key}.${at}` : key,
          `$file must name a file as input/<path> or expected/<path>, got ${JSON.stringify(ref)}`,
        );
  }
}

export async function sendFile(res: HttpResponse, path: string, contentType: string, filename: string) {
  res
    .header('content-type', contentType)
    .header('content-disposition', `attachment; filename="${encodeURIComponent(filename)}"`);
  const out = res.stream(200);
  for await (const chunk of createReadStream(path)) {
    if (out.aborted) return;
    await out.write(chunk as Buffer);
  }
  out.end();
}

export function datasetRoutes(q: QualityContext): ApiRoute[] {
  const { examples, registry, settings } = q;
  // Automations are the operator's shared catalogue; examples are the caller's tenant's own.
  const automation = (req: HttpRequest) => registry.find((req.params['id'] ?? '').split('@')[0]!);
  const example = (req: HttpRequest) =>
    examples.find(tenantOf(req), automation(req).id, req.params['exampleId'] ?? '');
  const tag = 'datasets';

  const folderRoutes = (folder: ExampleFolder): ApiRoute[] => {
    const base = `/automations/{id}/examples/{exampleId}/${folder}`;
    const Folder = folder === 'input' ? 'Input' : 'Expected';
    const filePath = (req: HttpRequest) => cleanPath(req.params['*'] ?? '', 'path');
    return [
      {
        method: 'GET',
        path: base,
        operationId: `listExample${Folder}Files`,
        summary: `Paths of the example's ${folder} files`,
        tag,
        responses: { 200: Json('{files:[path]}') },
        handle(req, res) {
          res.json({ files: Object.keys(example(req).files[folder]).sort() });
        },
      },
      {
        method: 'POST',
        path: base,
        operationId: `uploadExample${Folder}Files`,
        summary: `Upload ${folder} files (multipart; each part's file name is the path in the folder)`,
        tag,
        body: { contentTypes: ['multipart/form-data'], description: 'one part per file (part name `files`)' },
        maxBodyBytes: settings.maxUploadBytes + 1024 * 1024,
        responses: { 201: Json('{uploaded:[path]}') },
        async handle(req, res) {
          const ex = example(req);
          if (!isMultipart(req))
            throw new ApiError(415, 'unsupported_media_type', 'upload files as multipart/form-data');
          const form = await parseMultipart(
            req,
            { fileBytes: settings.maxUploadBytes, files: 1000, fieldBytes: 64 * 1024, preservePath: true },
            (source, limit) => q.blobs.write(source, limit),
            (blob) => q.discardBlob(blob.sha256),
          );
          if (form.files.length === 0) throw invalid('files', 'the multipart body has no file part');
          const added: Record<string, ExampleFileRef> = {};
          try {
            for (const f of form.files) {
              const path = cleanPath(f.filename, `files.${f.filename}`);
              if (added[path]) throw invalid(`files.${path}`, `two files named ${path}`);
              added[path] = { sha256: f.stored.sha256, size: f.stored.size, contentType: f.contentType };
            }
            await examples.update(ex.tenant, ex.automationId, ex.id, (cur) => ({
              ...cur,
              files: { ...cur.files, [folder]: { ...cur.files[folder], ...added } },
              updatedAt: new Date().toISOString(),
            }));
          } finally {
            for (const f of form.files) await q.discardBlob(f.stored.sha256);
          }
          res.json({ uploaded: Object.keys(added) }, 201);
        },
      },
      {
        method: 'GET',
        path: `${base}/{path}`,
        operationId: `downloadExample${Folder}File`,
        summary: `Bytes of one ${folder} file`,
        tag,
        responses: { 200: { description: 'file bytes', contentType: 'application/octet-stream' } },
        async handle(req, res) {
          const ex = example(req);
          const path = filePath(req);
          const ref = examples.fileRef(ex, folder, path);
          await sendFile(res, q.blobs.pathOf(ref.sha256), ref.contentType, path.split('/').pop()!);
        },
      },
      {
        method: 'PATCH',
        path: `${base}/{path}`,
        operationId: `renameExample${Folder}File`,
        summary: `Rename a ${folder} file within its parent folder`,
        tag,
        body: { schema: RenameBody, contentTypes: ['application/json'] },
        responses: { 200: Json('{ok, filename, path}') },
        async handle(req, res) {
          const ex = example(req);
          const path = filePath(req);
          const body = validateBody<{ name?: string; newFilename?: string; filename?: string }>(
            RenameBody,
            await req.json(['application/json']),
          );
          const name = body.name ?? body.newFilename ?? body.filename;
          if (name === undefined) throw invalid('name', 'name is required');
          if (name.includes('/') || name.includes('\\') || name === '.' || name === '..')
            throw invalid('name', 'a rename keeps the parent folder: give a file name without slashes');
          const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
          const target = cleanPath(parent + name, 'name');
          await examples.update(ex.tenant, ex.automationId, ex.id, (cur) => {
            const files = { ...cur.files[folder] };
            const ref = examples.fileRef(cur, folder, path);
            if (target !== path && files[target])
              throw new ApiError(409, 'conflict', `${folder}/${target} already exists`, [
                { field: 'name', message: `${folder}/${target} already exists`, code: 'conflict' },
              ]);
            delete files[path];
            files[target] = ref;
            return { ...cur, files: { ...cur.files, [folder]: files }, updatedAt: new Date().toISOString() };
          });
          res.json({ ok: true, filename: name, path: target });
        },
      },
      {
        method: 'DELETE',
        path: `${base}/{path}`,
        operationId: `deleteExample${Folder}File`,
        summary: `Delete a ${folder} file`,
        tag,
        responses: { 200: Json('{ok, path}') },
        async handle(req, res) {
          const ex = example(req);
          const path = filePath(req);
          await examples.update(ex.tenant, ex.automationId, ex.id, (cur) => {
            const files = { ...cur.files[folder] };
            examples.fileRef(cur, folder, path);
            delete files[path];
            return { ...cur, files: { ...cur.files, [folder]: files }, updatedAt: new Date().toISOString() };
          });
          res.json({ ok: true, deleted: true, path });
        },
      },
    ];
  };

  return [
    {
      method: 'GET',
      path: '/automations/{id}/examples',
      operationId: 'listExamples',
      summary: 'Dataset examples in dataset order (offset paging)',
      tag,
      query: Type.Object({
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
        offset: Type.Optional(Type.Integer({ minimum: 0 })),
      }),
      responses: { 200: Json('{data,total,limit,offset}') },
      handle(req, res) {
        const a = automation(req);
        const p = parseQuery<{ limit?: number; offset?: number }>(
          Type.Object({
            limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
            offset: Type.Optional(Type.Integer({ minimum: 0 })),
          }),
          req.query,
        );
        const limit = p.limit ?? 50;
        const offset = p.offset ?? 0;
        const all = examples.list(tenantOf(req), a.id);
        res.json({
          data: all.slice(offset, offset + limit).map(exampleView),
          total: all.length,
          limit,
          offset,
        });
      },
    },
    {
      method: 'POST',
      path: '/automations/{id}/examples',
      operationId: 'createExample',
      summary: 'Create a dataset example',
      tag,
      body: { schema: ExampleMutation, contentTypes: ['application/json'] },
      responses: { 201: Json('DatasetExample') },
      async handle(req, res) {
        const a = automation(req);
        const body = validateBody<Mutation>(ExampleMutation, await req.json(['application/json']));
        checkExampleValues(body);
        checkRefs(body);
        const id = body.id ?? newExampleId();
        if (examples.get(tenantOf(req), a.id, id))
          throw new ApiError(409, 'conflict', `example ${id} already exists`, [
            { field: 'id', message: `example ${id} already exists`, code: 'conflict' },
          ]);
        const record = createExample(tenantOf(req), a, {
          ...body,
          id,
          rowOrder: body.rowOrder ?? examples.nextRowOrder(tenantOf(req), a.id),
        });
        await examples.put(record);
        res.json(exampleView(record), 201);
      },
    },
    {
      method: 'GET',
      path: '/automations/{id}/examples/{exampleId}',
      operationId: 'getExample',
      summary: 'One dataset example',
      tag,
      responses: { 200: Json('DatasetExample') },
      handle(req, res) {
        res.json(exampleView(example(req)));
      },
    },
    {
      method: 'PATCH',
      path: '/automations/{id}/examples/{exampleId}',
      operationId: 'updateExample',
      summary: 'Update an example: omitted fields are kept, null clears a nullable field',
      tag,
      body: { schema: ExampleMutation, contentTypes: ['application/json'] },
      responses: { 200: Json('DatasetExample') },
      async handle(req, res) {
        const ex = example(req);
        const raw = await req.json<Record<string, unknown>>(['application/json']);
        if (raw !== null && typeof raw === 'object') {
          for (const key of ['name', 'rowOrder', 'id'])
            if (raw[key] === null) throw invalid(key, `${key} cannot be cleared`);
        }
        const body = validateBody<Mutation>(ExampleMutation, raw);
        if (body.id !== undefined && body.id !== ex.id) throw invalid('id', 'an example id cannot change');
        checkExampleValues(body);
        checkRefs(body);
        const next = await examples.update(ex.tenant, ex.automationId, ex.id, (cur) => {
          const out: ExampleRecord = { ...cur, updatedAt: new Date().toISOString() };
          if (body.name !== undefined) out.name = body.name;
          if (body.input !== undefined) out.input = body.input ?? {};
          if (body.expected !== undefined) out.expected = body.expected;
          if (body.metadata !== undefined) out.metadata = body.metadata;
          if (body.annotation !== undefined) out.annotation = body.annotation;
          if (body.rowOrder !== undefined) out.rowOrder = body.rowOrder;
          if (body.overrides !== undefined) out.overrides = body.overrides;
          return out;
        });
        res.json(exampleView(next));
      },
    },
    {
      method: 'DELETE',
      path: '/automations/{id}/examples/{exampleId}',
      operationId: 'deleteExample',
      summary: 'Delete an example and its files',
      tag,
      responses: { 200: Json('the deleted DatasetExample') },
      async handle(req, res) {
        const ex = example(req);
        res.json(exampleView(await examples.delete(ex.tenant, ex.automationId, ex.id)));
      },
    },
    {
      method: 'POST',
      path: '/automations/{id}/examples/{exampleId}/run',
      operationId: 'runExample',
      summary: "Start an asynchronous run of the example's input and overrides",
      tag,
      responses: { 202: Json('ExampleRunResponse') },
      async handle(req, res) {
        const ex = example(req);
        const p = principalOf(req);
        const run = await startExampleRun(q.runs, q.blobs, ex, { principal: p, trigger: 'api' });
        await examples
          .update(ex.tenant, ex.automationId, ex.id, (cur) => ({ ...cur, latestRunId: run.id }))
          .catch(() => {});
        q.scoreWhenDone(run.id, ex);
        res.json(
          {
            runId: run.id,
            exampleId: ex.id,
            automationId: ex.automationId,
            status: run.status,
            run: { id: run.id, status: run.status },
          },
          202,
        );
      },
    },
    ...folderRoutes('input'),
    ...folderRoutes('expected'),
    {
      method: 'GET',
      path: '/automations/{id}/dataset/export',
      operationId: 'exportDataset',
      summary: 'The dataset as a ZIP: examples/<example_id>/{example.json,input/,expected/}',
      tag,
      query: ExportQuery,
      responses: { 200: { description: 'ZIP bytes', contentType: 'application/zip' } },
      async handle(req, res) {
        const a = automation(req);
        const p = parseQuery<{ example_ids?: string }>(ExportQuery, req.query);
        const ids = p.example_ids
          ?.split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        let list = examples.list(tenantOf(req), a.id);
        if (ids && ids.length > 0) {
          const missing = ids.filter((id) => !list.some((e) => e.id === id));
          if (missing.length > 0)
            throw invalid('example_ids', `unknown example ids: ${missing.join(', ')}`, 'not_found');
          list = list.filter((e) => ids.includes(e.id));
        }
        await sendArchive(res, q.archives, {
          dir: q.tmpDir,
          entries: datasetEntries(list, (sha) => q.blobs.pathOf(sha)),
          bytes: datasetSize(list),
          mtime: FIXED_MTIME,
          limits: q.archiveLimits,
          filename: `${a.slug}-dataset.zip`,
        });
      },
    },
    {
      method: 'POST',
      path: '/automations/{id}/dataset/import',
      operationId: 'importDataset',
      summary:
        'Import a dataset ZIP (mode append: never overwrites; replace: the archive becomes the dataset)',
      tag,
      query: ImportQuery,
      body: {
        contentTypes: ['multipart/form-data', 'application/zip'],
        description: 'part `file` (and field `mode`), or the raw ZIP',
      },
      maxBodyBytes: q.archiveLimits.maxBytes + 1024 * 1024,
      responses: { 200: Json('DatasetImportResponse') },
      async handle(req, res) {
        const a = automation(req);
        const p = parseQuery<{ mode?: 'append' | 'replace' }>(ImportQuery, req.query);
        const { mode, parsed, discard } = await receiveDataset(req, q, p.mode);
        // Blobs first (content-addressed, harmless if the transaction below never happens).
        const staged: string[] = [];
        try {
          let order = mode === 'replace' ? 0 : examples.nextRowOrder(tenantOf(req), a.id);
          const records: ExampleRecord[] = [];
          for (const { example: ex, files } of parsed) {
            const refs: Record<ExampleFolder, Record<string, ExampleFileRef>> = { input: {}, expected: {} };
            for (const folder of ['input', 'expected'] as const)
              for (const [path, file] of Object.entries(files[folder])) {
                const blob = await q.blobs.write(createReadStream(file.path));
                staged.push(blob.sha256);
                refs[folder][path] = {
                  sha256: blob.sha256,
                  size: blob.size,
                  contentType: ex.contentTypes[folder][path]!,
                };
              }
            records.push(
              createExample(
                tenantOf(req),
                a,
                { ...ex, rowOrder: ex.rowOrder >= 0 ? ex.rowOrder : order++, files: refs },
                `examples/${ex.id}/example.json`,
              ),
            );
          }
          await discard();
          const result = await examples.apply(tenantOf(req), a.id, mode, records);
          const expectedSet = result.created.filter(
            (r) => r.expected !== null || Object.keys(r.files.expected).length > 0,
          ).length;
          if (mode === 'append')
            res.json({
              mode,
              created: result.created.length,
              expectedSet,
              skipped: result.skipped.length,
              issues: result.skipped.map((r) => ({
                field: `examples/${r.id}`,
                message: `example ${r.id} already exists; kept the stored one`,
                code: 'conflict',
                severity: 'warning',
              })),
            });
          else
            res.json({
              mode,
              created: result.created.length,
              expectedSet,
              deleted: result.deleted,
              filesDeleted: result.filesDeleted,
            });
        } finally {
          for (const sha of staged) await q.discardBlob(sha);
          await discard();
        }
      },
    },
  ];
}
