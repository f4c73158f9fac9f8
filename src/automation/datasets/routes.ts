// HTTP routes of dataset examples, their input/expected files, and dataset import/export. Each
// handler reads its request and hands it to the DatasetService (service.ts; feature.ts builds
// it); the request and response shapes are the SDK's (src/automation/wire/datasets.ts).

import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { HttpRequest } from '../../core/http/index.js';
import { sendBody } from '../../core/http/download.js';
import { ApiError } from '../errors.js';
import type { ApiRoute } from '../http/api.js';
import { IdListString } from '../http/ids.js';
import { isMultipart, parseMultipart } from '../http/multipart.js';
import { principalOf } from '../http/principal.js';
import { route, type RouteContext } from '../http/route.js';
import type { FeatureHost } from '../feature-host.js';
import { checkArchive, sendArchive } from '../archives/transfer.js';
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
} from '../wire/datasets.js';
import { Binary } from '../wire/operations.js';
import { datasetEntries, datasetSize, FIXED_MTIME } from './archive.js';
import { receiveDataset } from './import.js';
import { cleanPath, EXAMPLE_ID } from './paths.js';
import type { DatasetService, ReceivedFile } from './service.js';
import type { ExampleFolder, ExampleRecord } from './types.js';

/** The blobs an example's files are. */
const blobsOf = (e: ExampleRecord) =>
  [...Object.values(e.files.input), ...Object.values(e.files.expected)].map((ref) => ref.sha256);

/** The SDK's body (one object, as its type is), plus Sluice's optional caller-chosen `id`. */
const CreateBody = Type.Object(
  {
    ...DatasetExampleMutation.properties,
    id: Type.Optional(
      Type.String({
        pattern: EXAMPLE_ID.source,
        description: 'Sluice extension: the id to give the example',
      }),
    ),
  },
  { description: 'Fields of the new example; `id` (optional) is a Sluice extension' },
);
const PageQuery = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size (default 50)' })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
});
const ExportQuery = Type.Object({
  exampleIds: Type.Optional(IdListString('Comma-separated example ids; omit for the whole dataset')),
});
const ImportQuery = Type.Object({
  mode: Type.Optional(
    Type.Union([Type.Literal('append'), Type.Literal('replace')], {
      description: 'As the form field `mode` (which the SDK sends); the two must agree',
    }),
  ),
});
/** The SDK types a file delete's answer as `unknown`; the service answers `{ ok, deleted, path }`. */
const FileDeleted = Type.Unknown({ description: '{ ok: true, deleted: true, path }' });

const FOLDER_SCHEMAS = {
  input: {
    Folder: 'Input',
    List: DatasetExampleInputFileList,
    UploadRequest: DatasetExampleInputFileUploadRequest,
    UploadResponse: DatasetExampleInputFileUploadResponse,
    RenameRequest: DatasetExampleInputFileRenameRequest,
    RenameResponse: DatasetExampleInputFileRenameResponse,
  },
  expected: {
    Folder: 'Expected',
    List: DatasetExampleExpectedFileList,
    UploadRequest: DatasetExampleExpectedFileUploadRequest,
    UploadResponse: DatasetExampleExpectedFileUploadResponse,
    RenameRequest: DatasetExampleExpectedFileRenameRequest,
    RenameResponse: DatasetExampleExpectedFileRenameResponse,
  },
} as const;

/** What the routes use besides the DatasetService. */
export type DatasetRoutesHost = Pick<
  FeatureHost,
  'settings' | 'registry' | 'stores' | 'archives' | 'tmpDir' | 'discardBlob'
>;

export function datasetRoutes(host: DatasetRoutesHost, datasets: DatasetService): ApiRoute[] {
  const { registry, settings, archives, tmpDir } = host;
  const blobs = host.stores.blobs;
  const archiveLimits = settings.archiveLimits;
  const importDeps = { tmpDir, archiveLimits, archives };
  // Automations are the operator's shared catalogue; examples are the caller's tenant's own.
  const automation = (params: Readonly<Record<string, string>>) =>
    registry.find((params['id'] ?? '').split('@')[0]!);
  const example = async (ctx: { params: Readonly<Record<string, string>>; tenant(): string }) =>
    datasets.find(ctx.tenant(), (await automation(ctx.params)).id, ctx.params['exampleId'] ?? '');
  const filePath = (params: Readonly<Record<string, string>>) => cleanPath(params['*'] ?? '', 'path');
  const tag = 'datasets';

  /** The multipart file parts of an upload, stored as blobs; `use` runs before they are released. */
  async function withUploadedFiles<T>(
    req: HttpRequest,
    use: (files: ReceivedFile[]) => Promise<T>,
  ): Promise<T> {
    if (!isMultipart(req))
      throw new ApiError(415, 'unsupported_media_type', 'upload files as multipart/form-data');
    const form = await parseMultipart(
      req,
      { fileBytes: settings.maxUploadBytes, files: 1000, fieldBytes: 64 * 1024, preservePath: true },
      (source, limit) => blobs.write(source, limit),
      (blob) => host.discardBlob(blob.sha256),
    );
    try {
      return await use(
        form.files.map((f) => ({
          filename: f.filename,
          contentType: f.contentType,
          sha256: f.stored.sha256,
          size: f.stored.size,
        })),
      );
    } finally {
      for (const f of form.files) await host.discardBlob(f.stored.sha256);
    }
  }

  const folderRoutes = (folder: ExampleFolder): ApiRoute[] => {
    const base = `/automations/{id}/examples/{exampleId}/${folder}`;
    const s = FOLDER_SCHEMAS[folder];
    return [
      route({
        method: 'GET',
        path: base,
        operationId: `automationsExamples${s.Folder}FilesList`,
        summary: `Paths of the example's ${folder} files`,
        tag,
        responses: { 200: { description: `${s.Folder} file paths`, schema: s.List } },
        handle: async (ctx) => ({ files: datasets.listFiles(await example(ctx), folder) }),
      }),
      route({
        method: 'POST',
        path: base,
        operationId: `automationsExamples${s.Folder}FilesCreate`,
        summary: `Upload ${folder} files (multipart; each part's file name is its path in the folder)`,
        tag,
        body: {
          raw: true,
          contentTypes: ['multipart/form-data'],
          schema: s.UploadRequest,
          description: 'one part `file` per file (any part name is read)',
        },
        maxBodyBytes: settings.maxUploadBytes + 1024 * 1024,
        responses: { 201: { description: `Uploaded ${folder} files`, schema: s.UploadResponse } },
        // Annotated: with a raw body the handler gets no parsed body (TS would borrow the schema's type).
        async handle(ctx: RouteContext<Static<TObject<Record<string, never>>>, undefined>) {
          const ex = await example(ctx);
          const uploaded = await withUploadedFiles(ctx.req, (files) => datasets.addFiles(ex, folder, files));
          return { uploaded };
        },
      }),
      route({
        method: 'GET',
        path: `${base}/{path}`,
        operationId: `automationsExamples${s.Folder}FileGet`,
        summary: `Bytes of one ${folder} file`,
        tag,
        responses: {
          200: { description: 'file bytes', schema: Binary, contentType: 'application/octet-stream' },
        },
        async handle(ctx) {
          const file = await datasets.fileToSend(await example(ctx), folder, filePath(ctx.params));
          // The SDK's download check takes octet-stream whatever the file is; its type stays in the archive.
          await sendBody(ctx.res, file.body, {
            contentType: 'application/octet-stream',
            filename: file.filename,
          });
        },
      }),
      route({
        method: 'PATCH',
        path: `${base}/{path}`,
        operationId: `automationsExamples${s.Folder}FileUpdate`,
        summary: `Rename a ${folder} file within its parent folder`,
        tag,
        body: { schema: s.RenameRequest },
        responses: { 200: { description: `Renamed ${folder} file`, schema: s.RenameResponse } },
        handle: async (ctx) =>
          datasets.renameFile(await example(ctx), folder, filePath(ctx.params), ctx.body.newFilename),
      }),
      route({
        method: 'DELETE',
        path: `${base}/{path}`,
        operationId: `automationsExamples${s.Folder}FileDelete`,
        summary: `Delete a ${folder} file`,
        tag,
        responses: { 200: { description: `${s.Folder} file deleted`, schema: FileDeleted } },
        handle: async (ctx) => datasets.deleteFile(await example(ctx), folder, filePath(ctx.params)),
      }),
    ];
  };

  return [
    route({
      method: 'GET',
      path: '/automations/{id}/examples',
      operationId: 'automationsExamplesList',
      summary: 'Dataset examples in dataset order (offset paging)',
      tag,
      query: PageQuery,
      responses: { 200: { description: 'Page of dataset examples', schema: DatasetExampleList } },
      handle: async (ctx) => datasets.list(ctx.tenant(), (await automation(ctx.params)).id, ctx.query),
    }),
    route({
      method: 'POST',
      path: '/automations/{id}/examples',
      operationId: 'automationsExamplesCreate',
      summary: 'Create a dataset example',
      tag,
      body: { schema: CreateBody },
      responses: { 201: { description: 'Created dataset example', schema: DatasetExample } },
      handle: async (ctx) => datasets.create(ctx.tenant(), await automation(ctx.params), ctx.body),
    }),
    route({
      method: 'GET',
      path: '/automations/{id}/examples/{exampleId}',
      operationId: 'automationsExamplesGet',
      summary: 'One dataset example',
      tag,
      responses: { 200: { description: 'Dataset example', schema: DatasetExample } },
      handle: async (ctx) => datasets.view(await example(ctx)),
    }),
    route({
      method: 'PATCH',
      path: '/automations/{id}/examples/{exampleId}',
      operationId: 'automationsExamplesUpdate',
      summary: 'Update an example: omitted fields are kept, null clears a nullable field',
      tag,
      body: { schema: DatasetExampleUpdate },
      responses: { 200: { description: 'Updated dataset example', schema: DatasetExample } },
      async handle(ctx) {
        const ex = await example(ctx);
        return datasets.update(ex.tenant, ex.automationId, ex.id, ctx.body);
      },
    }),
    route({
      method: 'DELETE',
      path: '/automations/{id}/examples/{exampleId}',
      operationId: 'automationsExamplesDelete',
      summary: 'Delete an example and its files',
      tag,
      responses: { 200: { description: 'Deleted dataset example', schema: DatasetExample } },
      async handle(ctx) {
        const ex = await example(ctx);
        return datasets.delete(ex.tenant, ex.automationId, ex.id);
      },
    }),
    route({
      method: 'POST',
      path: '/automations/{id}/examples/{exampleId}/run',
      operationId: 'automationsExamplesRun',
      summary: "Start an asynchronous run of the example's input, input files and overrides",
      tag,
      responses: { 201: { description: 'Example run accepted', schema: ExampleRunResponse } },
      async handle(ctx) {
        const ex = await example(ctx);
        return datasets.run(ex, principalOf(ctx.req));
      },
    }),
    ...folderRoutes('input'),
    ...folderRoutes('expected'),
    route({
      method: 'GET',
      path: '/automations/{id}/dataset/export',
      operationId: 'automationsDatasetExport',
      summary: 'The dataset as a ZIP: examples/<name>/{input.json,input/,expected.json,expected/,meta.json}',
      tag,
      query: ExportQuery,
      responses: {
        200: { description: 'Dataset ZIP archive', schema: Binary, contentType: 'application/zip' },
      },
      async handle(ctx) {
        const a = await automation(ctx.params);
        const ids = ctx.query.exampleIds
          ?.split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const list = await datasets.exportable(ctx.tenant(), a.id, ids);
        // The archive worker reads files: each blob is put in a staging folder first (after the
        // size check, so an oversize export copies nothing), and the folder goes once the
        // archive is built, before the answer starts.
        const staging = join(tmpDir, `export-${randomBytes(12).toString('hex')}`);
        const entries = datasetEntries(list, (sha) => join(staging, sha));
        const bytes = datasetSize(list);
        checkArchive(entries.length, bytes, archiveLimits);
        try {
          for (const sha of new Set(list.flatMap(blobsOf))) await blobs.copyTo(sha, join(staging, sha));
          await sendArchive(ctx.res, archives, {
            dir: tmpDir,
            entries,
            bytes,
            mtime: FIXED_MTIME,
            limits: archiveLimits,
            filename: `${a.slug}-dataset.zip`,
            built: () => rm(staging, { recursive: true, force: true }),
          });
        } finally {
          await rm(staging, { recursive: true, force: true });
        }
      },
    }),
    route({
      method: 'POST',
      path: '/automations/{id}/dataset/import',
      operationId: 'automationsDatasetImport',
      summary: 'Import a dataset ZIP (append: never overwrites; replace: the archive becomes the dataset)',
      tag,
      query: ImportQuery,
      body: {
        raw: true,
        contentTypes: ['multipart/form-data', 'application/zip'],
        schema: AutomationDatasetImportMultipartRequest,
        description: 'part `file` and field `mode` (as the SDK sends them), or the raw ZIP',
      },
      maxBodyBytes: archiveLimits.maxBytes + 1024 * 1024,
      responses: { 200: { description: 'Import result', schema: DatasetImportResponse } },
      async handle(ctx: RouteContext<Static<typeof ImportQuery>, undefined>) {
        const a = await automation(ctx.params);
        const { mode, parsed, discard } = await receiveDataset(ctx.req, importDeps, ctx.query.mode);
        try {
          return await datasets.importExamples(ctx.tenant(), a, mode, parsed);
        } finally {
          await discard();
        }
      },
    }),
  ];
}
