// Dataset examples of an automation, and the files in their `input/` and `expected/` folders.
import { toBlob } from '../files.js';
import type { FileValue } from '../files.js';
import { segment, slashPath } from '../query.js';
import type { CallOptions, Transport } from '../transport.js';
import type {
  DatasetExample,
  DatasetExampleInputFileList,
  DatasetExampleInputFileRenameResponse,
  DatasetExampleInputFileUploadResponse,
  DatasetExampleList,
  DatasetExampleMutation,
  DatasetExampleUpdate,
  ExampleRunResponse,
} from '../types.js';

export type ExampleFolder = 'input' | 'expected';

// The input and expected folders answer with the same shapes (the SDK names them per folder).
export type ExampleFileList = DatasetExampleInputFileList;
export type ExampleFileUploadResponse = DatasetExampleInputFileUploadResponse;
export type ExampleFileRenameResponse = DatasetExampleInputFileRenameResponse;

/**
 * Files to upload into a folder: a map `{ 'docs/a.pdf': bytes }` (the key is the path inside the
 * folder), an array of named files, or the request body's own form `{ file: [...] }`.
 */
export type ExampleFileUpload =
  Record<string, FileValue> | readonly FileValue[] | { file: readonly FileValue[] };

function folderPath(automationId: string, exampleId: string, folder: ExampleFolder, path?: string): string {
  const base = `/automations/${segment(automationId)}/examples/${segment(exampleId)}/${folder}`;
  return path === undefined ? base : `${base}/${slashPath(path)}`;
}

/** The multipart body: one part named `file` per file, its file name the path inside the folder. */
function uploadForm(files: ExampleFileUpload): FormData {
  const form = new FormData();
  const list = Array.isArray(files)
    ? (files as readonly FileValue[])
    : Array.isArray((files as { file?: unknown }).file)
      ? (files as { file: readonly FileValue[] }).file
      : undefined;
  if (list !== undefined) {
    list.forEach((file, index) => {
      const { blob, filename } = toBlob(file, `file-${index}`);
      form.append('file', blob, filename);
    });
  } else {
    // The map key is the path inside the folder, whatever name the value carries.
    for (const [path, file] of Object.entries(files as Record<string, FileValue>))
      form.append('file', toBlob(file, path).blob, path);
  }
  return form;
}

/** `inputFiles` / `expectedFiles`: the folder as a whole (SDK: list, create). */
export class ExampleFolderFiles {
  constructor(
    private readonly transport: Transport,
    private readonly folder: ExampleFolder,
  ) {}

  /** GET …/{folder}: `{ files: [path] }`. */
  async list(automationId: string, exampleId: string, call?: CallOptions): Promise<ExampleFileList> {
    return this.transport.json({
      method: 'GET',
      path: folderPath(automationId, exampleId, this.folder),
      call,
    });
  }

  /** POST …/{folder}: uploads one or more files (multipart part `file` each). */
  async create(
    automationId: string,
    exampleId: string,
    files: ExampleFileUpload,
    call?: CallOptions,
  ): Promise<ExampleFileUploadResponse> {
    return this.transport.json({
      method: 'POST',
      path: folderPath(automationId, exampleId, this.folder),
      form: uploadForm(files),
      call,
    });
  }
}

/** `inputFile` / `expectedFile`: one file, by its slash-delimited path (SDK: get, update, delete). */
export class ExampleFolderFile {
  constructor(
    private readonly transport: Transport,
    private readonly folder: ExampleFolder,
  ) {}

  /** GET …/{folder}/{path}: bytes. */
  async get(automationId: string, exampleId: string, path: string, call?: CallOptions): Promise<Uint8Array> {
    return this.transport.bytes({
      method: 'GET',
      path: folderPath(automationId, exampleId, this.folder, path),
      call,
    });
  }

  /** PATCH …/{folder}/{path} with `{ newFilename }`: rename within the same parent folder. */
  async update(
    automationId: string,
    exampleId: string,
    path: string,
    body: { newFilename: string },
    call?: CallOptions,
  ): Promise<ExampleFileRenameResponse> {
    return this.transport.json({
      method: 'PATCH',
      path: folderPath(automationId, exampleId, this.folder, path),
      json: { newFilename: body.newFilename },
      call,
    });
  }

  /** DELETE …/{folder}/{path}; the SDK types the answer as `unknown`. */
  async delete(automationId: string, exampleId: string, path: string, call?: CallOptions): Promise<unknown> {
    return this.transport.json({
      method: 'DELETE',
      path: folderPath(automationId, exampleId, this.folder, path),
      call,
    });
  }
}

/**
 * The older per-folder surface (`examples.input`, `examples.expected`): list, upload, download,
 * rename, delete — the same requests as inputFiles/inputFile.
 */
export class ExampleFiles {
  private readonly all: ExampleFolderFiles;
  private readonly one: ExampleFolderFile;

  constructor(transport: Transport, folder: ExampleFolder) {
    this.all = new ExampleFolderFiles(transport, folder);
    this.one = new ExampleFolderFile(transport, folder);
  }

  list(automationId: string, exampleId: string, call?: CallOptions): Promise<ExampleFileList> {
    return this.all.list(automationId, exampleId, call);
  }

  upload(
    automationId: string,
    exampleId: string,
    files: ExampleFileUpload,
    call?: CallOptions,
  ): Promise<ExampleFileUploadResponse> {
    return this.all.create(automationId, exampleId, files, call);
  }

  download(automationId: string, exampleId: string, path: string, call?: CallOptions): Promise<Uint8Array> {
    return this.one.get(automationId, exampleId, path, call);
  }

  /** Renames to `newName` (a base name; the parent folder is kept). */
  rename(
    automationId: string,
    exampleId: string,
    path: string,
    newName: string,
    call?: CallOptions,
  ): Promise<ExampleFileRenameResponse> {
    return this.one.update(automationId, exampleId, path, { newFilename: newName }, call);
  }

  delete(automationId: string, exampleId: string, path: string, call?: CallOptions): Promise<unknown> {
    return this.one.delete(automationId, exampleId, path, call);
  }
}

export class ExamplesGroup {
  readonly inputFiles: ExampleFolderFiles;
  readonly inputFile: ExampleFolderFile;
  readonly expectedFiles: ExampleFolderFiles;
  readonly expectedFile: ExampleFolderFile;
  readonly input: ExampleFiles;
  readonly expected: ExampleFiles;

  constructor(private readonly transport: Transport) {
    this.inputFiles = new ExampleFolderFiles(transport, 'input');
    this.inputFile = new ExampleFolderFile(transport, 'input');
    this.expectedFiles = new ExampleFolderFiles(transport, 'expected');
    this.expectedFile = new ExampleFolderFile(transport, 'expected');
    this.input = new ExampleFiles(transport, 'input');
    this.expected = new ExampleFiles(transport, 'expected');
  }

  private path(automationId: string, exampleId?: string, tail = ''): string {
    const base = `/automations/${segment(automationId)}/examples`;
    return exampleId === undefined ? base : `${base}/${segment(exampleId)}${tail}`;
  }

  /** GET /automations/{id}/examples (offset paging). */
  async list(
    automationId: string,
    page: { limit?: number; offset?: number } = {},
    call?: CallOptions,
  ): Promise<DatasetExampleList> {
    return this.transport.json({ method: 'GET', path: this.path(automationId), query: { ...page }, call });
  }

  /** POST /automations/{id}/examples (DatasetExampleMutation); answers 201 with the example. */
  async create(
    automationId: string,
    example: DatasetExampleMutation,
    call?: CallOptions,
  ): Promise<DatasetExample> {
    return this.transport.json({ method: 'POST', path: this.path(automationId), json: example, call });
  }

  /** GET /automations/{id}/examples/{exampleId}. */
  async get(automationId: string, exampleId: string, call?: CallOptions): Promise<DatasetExample> {
    return this.transport.json({ method: 'GET', path: this.path(automationId, exampleId), call });
  }

  /** PATCH /automations/{id}/examples/{exampleId}: omitted fields are kept, null clears. */
  async update(
    automationId: string,
    exampleId: string,
    update: DatasetExampleUpdate,
    call?: CallOptions,
  ): Promise<DatasetExample> {
    return this.transport.json({
      method: 'PATCH',
      path: this.path(automationId, exampleId),
      json: update,
      call,
    });
  }

  /** DELETE /automations/{id}/examples/{exampleId}: answers with the deleted example. */
  async delete(automationId: string, exampleId: string, call?: CallOptions): Promise<DatasetExample> {
    return this.transport.json({ method: 'DELETE', path: this.path(automationId, exampleId), call });
  }

  /** POST /automations/{id}/examples/{exampleId}/run: starts an asynchronous run; poll it. */
  async run(automationId: string, exampleId: string, call?: CallOptions): Promise<ExampleRunResponse> {
    return this.transport.json({ method: 'POST', path: this.path(automationId, exampleId, '/run'), call });
  }
}
