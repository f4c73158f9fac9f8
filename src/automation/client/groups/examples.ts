// Dataset examples of an automation, and the files in their `input/` and `expected/` folders.
import { toBlob } from '../files.js';
import type { FileValue } from '../files.js';
import { segment, slashPath } from '../query.js';
import type { CallOptions, Transport } from '../transport.js';
import type { DatasetExample, FileList, JsonObject, OffsetPage } from '../types.js';

export type ExampleFolder = 'input' | 'expected';

/** Files of one folder (`input` or `expected`) of an example, addressed by slash-delimited paths. */
export class ExampleFiles {
  constructor(
    private readonly transport: Transport,
    private readonly folder: ExampleFolder,
  ) {}

  private base(automationId: string, exampleId: string): string {
    return `/automations/${segment(automationId)}/examples/${segment(exampleId)}/${this.folder}`;
  }

  /** GET …/{folder}: `{ files: [path] }`. */
  async list(automationId: string, exampleId: string, call?: CallOptions): Promise<FileList> {
    return this.transport.json({ method: 'GET', path: this.base(automationId, exampleId), call });
  }

  /**
   * POST …/{folder}: uploads one or more files, each as a multipart part named `files` whose file
   * name is the path inside the folder. Pass a map `{ 'docs/a.pdf': bytes }` or an array of
   * named files.
   */
  async upload(
    automationId: string,
    exampleId: string,
    files: Record<string, FileValue> | readonly FileValue[],
    call?: CallOptions,
  ): Promise<JsonObject> {
    const form = new FormData();
    if (Array.isArray(files)) {
      (files as readonly FileValue[]).forEach((file, index) => {
        const { blob, filename } = toBlob(file, `file-${index}`);
        form.append('files', blob, filename);
      });
    } else {
      // The map key is the path inside the folder, whatever name the value carries.
      for (const [path, file] of Object.entries(files as Record<string, FileValue>))
        form.append('files', toBlob(file, path).blob, path);
    }
    return this.transport.json({ method: 'POST', path: this.base(automationId, exampleId), form, call });
  }

  /** GET …/{folder}/{path}: bytes. */
  async download(
    automationId: string,
    exampleId: string,
    path: string,
    call?: CallOptions,
  ): Promise<Uint8Array> {
    return this.transport.bytes({
      method: 'GET',
      path: `${this.base(automationId, exampleId)}/${slashPath(path)}`,
      call,
    });
  }

  /** PATCH …/{folder}/{path}: rename within the same parent folder. */
  async rename(
    automationId: string,
    exampleId: string,
    path: string,
    newName: string,
    call?: CallOptions,
  ): Promise<JsonObject> {
    return this.transport.json({
      method: 'PATCH',
      path: `${this.base(automationId, exampleId)}/${slashPath(path)}`,
      json: { name: newName },
      call,
    });
  }

  /** DELETE …/{folder}/{path}. */
  async delete(
    automationId: string,
    exampleId: string,
    path: string,
    call?: CallOptions,
  ): Promise<JsonObject | undefined> {
    return this.transport.json({
      method: 'DELETE',
      path: `${this.base(automationId, exampleId)}/${slashPath(path)}`,
      call,
    });
  }
}

export class ExamplesGroup {
  readonly input: ExampleFiles;
  readonly expected: ExampleFiles;

  constructor(private readonly transport: Transport) {
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
  ): Promise<OffsetPage<DatasetExample>> {
    return this.transport.json({ method: 'GET', path: this.path(automationId), query: page, call });
  }

  /** POST /automations/{id}/examples (DatasetExampleMutation). */
  async create(
    automationId: string,
    example: Partial<DatasetExample>,
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
    update: Partial<DatasetExample>,
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
  async run(automationId: string, exampleId: string, call?: CallOptions): Promise<JsonObject> {
    return this.transport.json({ method: 'POST', path: this.path(automationId, exampleId, '/run'), call });
  }
}
