// The `files` group: reusable uploaded files.
import { toBlob } from '../files.js';
import type { FileValue } from '../files.js';
import { segment } from '../query.js';
import type { CallOptions, Transport } from '../transport.js';
import type { StoredFile } from '../types.js';

export interface UploadOptions {
  /** File name to record; default the value's own name, else `file`. */
  filename?: string;
  contentType?: string;
  purpose?: string;
}

export class FilesGroup {
  constructor(private readonly transport: Transport) {}

  /** POST /files: multipart part `file` (plus `purpose` when given). */
  async upload(file: FileValue, options: UploadOptions = {}, call?: CallOptions): Promise<StoredFile> {
    const { blob, filename } = toBlob(file, options.filename ?? 'file');
    const name = options.filename ?? filename;
    const typed = options.contentType !== undefined ? blob.slice(0, blob.size, options.contentType) : blob;
    const form = new FormData();
    form.append('file', typed, name);
    if (options.purpose !== undefined) form.append('purpose', options.purpose);
    return this.transport.json({ method: 'POST', path: '/files', form, call });
  }

  /** GET /files/{id}: metadata. */
  async get(fileId: string, call?: CallOptions): Promise<StoredFile> {
    return this.transport.json({ method: 'GET', path: `/files/${segment(fileId)}`, call });
  }

  /** GET /files/{id}/content: bytes. */
  async content(fileId: string, call?: CallOptions): Promise<Uint8Array> {
    return this.transport.bytes({ method: 'GET', path: `/files/${segment(fileId)}/content`, call });
  }

  /** DELETE /files/{id}: run and dataset snapshots of the file are unaffected. */
  async delete(fileId: string, call?: CallOptions): Promise<{ deleted: boolean; [key: string]: unknown }> {
    return this.transport.json({ method: 'DELETE', path: `/files/${segment(fileId)}`, call });
  }
}
