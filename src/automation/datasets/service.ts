// Dataset examples as a feature: making, changing and removing examples and their files,
// running one, and importing or exporting the dataset. The routes (routes.ts) only translate
// HTTP; storage is the ExampleStore (store.ts); file bytes live in the blob store.

import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import type { Principal } from '../../core/auth/types.js';
import { ApiError, invalid, notFound } from '../errors.js';
import type { BlobStore } from '../files/blob-store.js';
import type { AutomationType } from '../registry/manifest.js';
import type { RunService } from '../runs/service.js';
import type {
  DatasetExample,
  DatasetExampleList,
  DatasetExampleMutation,
  DatasetExampleUpdate,
  DatasetImportResponse,
  ExampleRunResponse,
} from '../wire/datasets.js';
import type { ParsedExample } from './archive.js';
import { cleanPath } from './paths.js';
import { startExampleRun } from './run-example.js';
import { newExampleId, type ExampleStore, type ImportMode } from './store.js';
import { exampleView, type ExampleFileRef, type ExampleFolder, type ExampleRecord } from './types.js';
import { checkExampleValues } from './values.js';

/** The automation an example belongs to, as the dataset needs it. */
export interface DatasetAutomation {
  id: string;
  type: AutomationType;
}

export interface ExampleFields {
  id: string;
  name?: string | null | undefined;
  input?: unknown;
  expected?: unknown;
  metadata?: Record<string, unknown> | null | undefined;
  annotation?: string | null | undefined;
  rowOrder: number | null;
  overrides?: Record<string, unknown> | null | undefined;
  latestRunId?: string | null | undefined;
  createdAt?: string | undefined;
  updatedAt?: string | undefined;
  files?: Record<ExampleFolder, Record<string, ExampleFileRef>> | undefined;
}

/**
 * The one way an example record is made (the create route, archive import, promotion of a run):
 * the values are checked (400 listing every problem; `prefix` names where they came from in the
 * issues' field paths) and the defaults filled in. Nothing is stored.
 */
export function createExample(
  tenant: string,
  automation: DatasetAutomation,
  fields: ExampleFields,
  prefix = '',
): ExampleRecord {
  checkExampleValues(fields, prefix);
  const now = new Date().toISOString();
  return {
    id: fields.id,
    tenant,
    automationId: automation.id,
    automationType: automation.type,
    // A name left out (or null) is generated: the id, which is also a valid archive folder name.
    name: fields.name ?? fields.id,
    input: fields.input ?? {},
    expected: fields.expected ?? null,
    metadata: fields.metadata ?? null,
    annotation: fields.annotation ?? null,
    rowOrder: fields.rowOrder,
    overrides: fields.overrides ?? null,
    latestRunId: fields.latestRunId ?? null,
    createdAt: fields.createdAt ?? now,
    updatedAt: fields.updatedAt ?? now,
    files: fields.files ?? { input: {}, expected: {} },
  };
}

/** A file received for an example folder, already in the blob store. */
export interface ReceivedFile {
  /** The part's file name: the path inside the folder. */
  filename: string;
  contentType: string;
  sha256: string;
  size: number;
}

export interface DatasetDeps {
  examples: ExampleStore;
  blobs: BlobStore;
  runs: RunService;
  /** Removes a blob written for a request if nothing came to reference it. */
  discardBlob(sha256: string): Promise<void>;
  /** Scores a run against its example once it finishes. */
  scoreWhenDone(runId: string, example: ExampleRecord): void;
}

const conflict = (field: string, message: string) =>
  new ApiError(409, 'conflict', message, [{ field, message, code: 'conflict' }]);

function fileRef(e: ExampleRecord, folder: ExampleFolder, path: string): ExampleFileRef {
  const ref = e.files[folder][path];
  if (!ref) throw notFound(`${folder} file ${JSON.stringify(path)}`, 'path');
  return ref;
}

export class DatasetService {
  constructor(private readonly deps: DatasetDeps) {}

  find(tenant: string, automationId: string, exampleId: string): Promise<ExampleRecord> {
    return this.deps.examples.find(tenant, automationId, exampleId);
  }

  view(e: ExampleRecord): DatasetExample {
    return exampleView(e);
  }

  async list(
    tenant: string,
    automationId: string,
    page: { limit?: number; offset?: number },
  ): Promise<DatasetExampleList> {
    const limit = page.limit ?? 50;
    const offset = page.offset ?? 0;
    const all = await this.deps.examples.list(tenant, automationId);
    return { data: all.slice(offset, offset + limit).map(exampleView), total: all.length, limit, offset };
  }

  /** `id` is a Sluice extension of the SDK's body: a caller-chosen id (409 when taken). */
  async create(
    tenant: string,
    automation: DatasetAutomation,
    body: DatasetExampleMutation & { id?: string },
  ): Promise<DatasetExample> {
    const record = createExample(tenant, automation, {
      ...body,
      id: body.id ?? newExampleId(),
      rowOrder:
        body.rowOrder === undefined
          ? await this.deps.examples.nextRowOrder(tenant, automation.id)
          : body.rowOrder,
    });
    await this.deps.examples.insert(record);
    return exampleView(record);
  }

  /** Omitted fields are kept; null clears a field (a null name is the generated one again). */
  async update(tenant: string, automationId: string, exampleId: string, body: DatasetExampleUpdate) {
    checkExampleValues(body);
    const next = await this.deps.examples.update(tenant, automationId, exampleId, (cur) => {
      const out: ExampleRecord = { ...cur, updatedAt: new Date().toISOString() };
      if (body.name !== undefined) out.name = body.name ?? cur.id;
      if (body.input !== undefined) out.input = body.input ?? {};
      if (body.expected !== undefined) out.expected = body.expected;
      if (body.metadata !== undefined) out.metadata = body.metadata;
      if (body.annotation !== undefined) out.annotation = body.annotation;
      if (body.rowOrder !== undefined) out.rowOrder = body.rowOrder;
      if (body.overrides !== undefined) out.overrides = body.overrides;
      return out;
    });
    return exampleView(next);
  }

  async delete(tenant: string, automationId: string, exampleId: string): Promise<DatasetExample> {
    return exampleView(await this.deps.examples.delete(tenant, automationId, exampleId));
  }

  listFiles(e: ExampleRecord, folder: ExampleFolder): string[] {
    return Object.keys(e.files[folder]).sort();
  }

  /** Adds (or replaces) files of a folder; answers their paths. The caller discards its blobs after. */
  async addFiles(e: ExampleRecord, folder: ExampleFolder, files: readonly ReceivedFile[]): Promise<string[]> {
    if (files.length === 0) throw invalid('file', 'the multipart body has no file part');
    const added: Record<string, ExampleFileRef> = {};
    for (const f of files) {
      const path = cleanPath(f.filename, `file.${f.filename}`);
      if (added[path]) throw invalid(`file.${path}`, `two files named ${path}`);
      added[path] = { sha256: f.sha256, size: f.size, contentType: f.contentType };
    }
    await this.deps.examples.update(e.tenant, e.automationId, e.id, (cur) => ({
      ...cur,
      files: { ...cur.files, [folder]: { ...cur.files[folder], ...added } },
      updatedAt: new Date().toISOString(),
    }));
    return Object.keys(added);
  }

  /** A file's bytes, and the name to send them under. */
  async fileToSend(
    e: ExampleRecord,
    folder: ExampleFolder,
    path: string,
  ): Promise<{ body: Readable; filename: string }> {
    const ref = fileRef(e, folder, path);
    return { body: await this.deps.blobs.read(ref.sha256), filename: path.split('/').pop()! };
  }

  /** Renames a file within its parent folder (409 when the target exists). */
  async renameFile(e: ExampleRecord, folder: ExampleFolder, path: string, newFilename: string) {
    if (
      newFilename.includes('/') ||
      newFilename.includes('\\') ||
      newFilename === '.' ||
      newFilename === '..'
    )
      throw invalid('newFilename', 'a rename keeps the parent folder: give a file name without slashes');
    const parent = path.includes('/') ? path.slice(0, path.lastIndexOf('/') + 1) : '';
    const target = cleanPath(parent + newFilename, 'newFilename');
    await this.deps.examples.update(e.tenant, e.automationId, e.id, (cur) => {
      const ref = fileRef(cur, folder, path);
      const files = { ...cur.files[folder] };
      if (target !== path && files[target])
        throw conflict('newFilename', `${folder}/${target} already exists`);
      delete files[path];
      files[target] = ref;
      return { ...cur, files: { ...cur.files, [folder]: files }, updatedAt: new Date().toISOString() };
    });
    return { ok: true as const, filename: newFilename, path: target };
  }

  async deleteFile(e: ExampleRecord, folder: ExampleFolder, path: string) {
    await this.deps.examples.update(e.tenant, e.automationId, e.id, (cur) => {
      fileRef(cur, folder, path);
      const files = { ...cur.files[folder] };
      delete files[path];
      return { ...cur, files: { ...cur.files, [folder]: files }, updatedAt: new Date().toISOString() };
    });
    return { ok: true as const, deleted: true as const, path };
  }

  /** Starts an asynchronous run of the example; it is scored against the example when it ends. */
  async run(e: ExampleRecord, principal: Pick<Principal, 'tenant' | 'user'>): Promise<ExampleRunResponse> {
    const run = await startExampleRun(this.deps.runs, e, { principal, trigger: 'api' });
    await this.deps.examples
      .update(e.tenant, e.automationId, e.id, (cur) => ({ ...cur, latestRunId: run.id }))
      .catch(() => {});
    this.deps.scoreWhenDone(run.id, e);
    return { id: run.id, type: e.automationType, batchId: run.batchId, finished: false };
  }

  /** The examples an export holds: all, or the listed ids (400 naming unknown ones). */
  async exportable(
    tenant: string,
    automationId: string,
    ids: readonly string[] | undefined,
  ): Promise<ExampleRecord[]> {
    const all = await this.deps.examples.list(tenant, automationId);
    if (!ids || ids.length === 0) return all;
    const known = new Set(all.map((e) => e.id));
    const missing = ids.filter((id) => !known.has(id));
    if (missing.length > 0)
      throw invalid('exampleIds', `unknown example ids: ${missing.join(', ')}`, 'not_found');
    const wanted = new Set(ids);
    return all.filter((e) => wanted.has(e.id));
  }

  /**
   * Stores the examples read from an archive: their files go to the blob store first
   * (content-addressed, harmless if the transaction never happens), then every example in one
   * transaction. Append keeps examples whose name the dataset has and reports each as a warning.
   */
  async importExamples(
    tenant: string,
    automation: DatasetAutomation,
    mode: ImportMode,
    parsed: readonly ParsedExample[],
  ): Promise<DatasetImportResponse> {
    const staged: string[] = [];
    try {
      let order = mode === 'replace' ? 0 : await this.deps.examples.nextRowOrder(tenant, automation.id);
      const records: ExampleRecord[] = [];
      const sources = new Map<ExampleRecord, string>();
      for (const ex of parsed) {
        const files: Record<ExampleFolder, Record<string, ExampleFileRef>> = { input: {}, expected: {} };
        for (const folder of ['input', 'expected'] as const)
          for (const [path, file] of Object.entries(ex.files[folder])) {
            const blob = await this.deps.blobs.write(createReadStream(file.path));
            staged.push(blob.sha256);
            files[folder][path] = {
              sha256: blob.sha256,
              size: blob.size,
              contentType: ex.contentTypes[folder][path]!,
            };
          }
        const record = createExample(
          tenant,
          automation,
          {
            id: newExampleId(),
            name: ex.name,
            input: ex.input,
            expected: ex.expected,
            metadata: ex.metadata,
            annotation: ex.annotation,
            rowOrder: ex.rowOrder === undefined ? order++ : ex.rowOrder,
            overrides: ex.overrides,
            files,
          },
          ex.source,
        );
        records.push(record);
        sources.set(record, ex.source);
      }
      const result = await this.deps.examples.apply(tenant, automation.id, mode, records);
      const expectedSet = result.created.filter(
        (r) => r.expected !== null || Object.keys(r.files.expected).length > 0,
      ).length;
      if (mode === 'replace')
        return {
          mode,
          created: result.created.length,
          expectedSet,
          deleted: result.deleted,
          filesDeleted: result.filesDeleted,
        };
      return {
        mode,
        created: result.created.length,
        expectedSet,
        skipped: result.skipped.length,
        issues: result.skipped.map((r) => ({
          field: sources.get(r) ?? r.name,
          message: `the dataset has an example named ${JSON.stringify(r.name)} already; kept the stored one`,
          code: 'conflict',
          severity: 'warning',
        })),
      };
    } finally {
      for (const sha of staged) await this.deps.discardBlob(sha);
    }
  }
}
