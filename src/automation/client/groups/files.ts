// The `files` group: reusable uploaded files, and the upload-first protocol of the product SDK
// (createUpload → the bytes go to the URL it names → completeUpload).
import { randomUUID } from 'node:crypto';
import { isClientError } from '../errors.js';
import { toBlob } from '../files.js';
import type { FileValue } from '../files.js';
import { segment } from '../query.js';
import type { CallOptions, Transport } from '../transport.js';
import type {
  AbortFileUploadResponse,
  DeleteFileResponse,
  FilesUploadsCreateResponse,
  StoredFile,
} from '../types.js';

export type FilePurpose = 'run-input' | 'builder-attachment';

export interface UploadOptions {
  /** File name to record; default the value's own name, else `file`. */
  filename?: string;
  contentType?: string;
  /** `run-input` files are reaped after 24 hours; omit for a durable reusable file. */
  purpose?: FilePurpose;
  /** Names the upload session, so a retried createUpload reuses it; generated when omitted. */
  idempotencyKey?: string;
  /** Called once the bytes are stored, with (uploaded, total). */
  onProgress?: (uploadedBytes: number, totalBytes: number) => void;
}

/** Body of POST /files/uploads (CreateFileUploadSessionRequest). */
export interface CreateUploadInput {
  filename: string;
  contentType: string;
  size: number;
  purpose?: FilePurpose;
  idempotencyKey?: string;
}

/** The server does not know POST /files/uploads (no route, or only other methods on that path). */
function noUploadSessions(error: unknown): boolean {
  return isClientError(error) && (error.status === 404 || error.status === 405);
}

function filePath(fileId: string, tail = ''): string {
  return `/files/${segment(fileId)}${tail}`;
}

export class FilesGroup {
  constructor(private readonly transport: Transport) {}

  /**
   * Stores a file the way the product SDK does: POST /files/uploads names where the bytes go —
   * a storage URL (`presigned-put`: PUT the bytes there, then completeUpload) or a multipart
   * endpoint (`multipart`: POST part `file` there). A server without upload sessions (404 or 405
   * on POST /files/uploads) gets the bytes directly as POST /files.
   */
  async upload(file: FileValue, options: UploadOptions = {}, call?: CallOptions): Promise<StoredFile> {
    const { blob, filename } = this.named(file, options);
    const input: CreateUploadInput = {
      filename,
      contentType: blob.type || 'application/octet-stream',
      size: blob.size,
      idempotencyKey: options.idempotencyKey ?? randomUUID(),
    };
    if (options.purpose !== undefined) input.purpose = options.purpose;
    let session: FilesUploadsCreateResponse;
    try {
      session = await this.createUpload(input, call);
    } catch (error) {
      if (!noUploadSessions(error)) throw error;
      const stored = await this.postMultipart('/files', undefined, blob, filename, options.purpose, call);
      options.onProgress?.(blob.size, blob.size);
      return stored;
    }
    if (session.transport === 'presigned-put') {
      try {
        await this.transport.empty({
          method: 'PUT',
          path: '/files/uploads (storage PUT)',
          absoluteUrl: this.absolute(session.url),
          // The storage URL is authorised by its signature; the API key must not travel there.
          auth: false,
          raw: blob,
          contentType: blob.type || 'application/octet-stream',
          headers: session.headers,
          call,
        });
      } catch (error) {
        await this.abortUpload(session.uploadId, call).catch(() => undefined);
        throw error;
      }
      options.onProgress?.(blob.size, blob.size);
      return this.completeUpload(session.uploadId, call);
    }
    const stored = await this.postMultipart(
      this.apiPath(session.url),
      this.absoluteIfForeign(session.url),
      blob,
      filename,
      options.purpose,
      call,
    );
    options.onProgress?.(blob.size, blob.size);
    return stored;
  }

  /** POST /files: the bytes as multipart part `file` (plus `purpose`), in one request. */
  async create(
    file: FileValue,
    options: Pick<UploadOptions, 'filename' | 'contentType' | 'purpose'> = {},
    call?: CallOptions,
  ): Promise<StoredFile> {
    const { blob, filename } = this.named(file, options);
    return this.postMultipart('/files', undefined, blob, filename, options.purpose, call);
  }

  /** POST /files/uploads: reserves an upload and names where its bytes go. */
  async createUpload(input: CreateUploadInput, call?: CallOptions): Promise<FilesUploadsCreateResponse> {
    const json: Record<string, unknown> = {
      filename: input.filename,
      contentType: input.contentType,
      size: input.size,
    };
    if (input.idempotencyKey !== undefined) json['idempotencyKey'] = input.idempotencyKey;
    if (input.purpose !== undefined) json['purpose'] = input.purpose;
    // The idempotency key makes a repeated create return the same reservation.
    const idempotent = input.idempotencyKey !== undefined;
    return this.transport.json({ method: 'POST', path: '/files/uploads', json, idempotent, call });
  }

  /** POST /files/uploads/{uploadId}/complete: the stored bytes become a file. */
  async completeUpload(uploadId: string, call?: CallOptions): Promise<StoredFile> {
    return this.transport.json({
      method: 'POST',
      path: `/files/uploads/${segment(uploadId)}/complete`,
      idempotent: true,
      call,
    });
  }

  /** DELETE /files/uploads/{uploadId}: gives up a reserved upload. */
  async abortUpload(uploadId: string, call?: CallOptions): Promise<AbortFileUploadResponse> {
    return this.transport.json({ method: 'DELETE', path: `/files/uploads/${segment(uploadId)}`, call });
  }

  /** GET /files/{id}: metadata. */
  async get(fileId: string, call?: CallOptions): Promise<StoredFile> {
    return this.transport.json({ method: 'GET', path: filePath(fileId), call });
  }

  /** GET /files/{id}/content: bytes. */
  async download(fileId: string, call?: CallOptions): Promise<Uint8Array> {
    return this.transport.bytes({ method: 'GET', path: filePath(fileId, '/content'), call });
  }

  /** Alias of {@link FilesGroup.download}. */
  async content(fileId: string, call?: CallOptions): Promise<Uint8Array> {
    return this.download(fileId, call);
  }

  /** DELETE /files/{id}: run and dataset snapshots of the file are unaffected. */
  async delete(fileId: string, call?: CallOptions): Promise<DeleteFileResponse> {
    return this.transport.json({ method: 'DELETE', path: filePath(fileId), call });
  }

  private named(
    file: FileValue,
    options: Pick<UploadOptions, 'filename' | 'contentType'>,
  ): { blob: Blob; filename: string } {
    const { blob, filename } = toBlob(file, options.filename ?? 'file');
    const typed = options.contentType !== undefined ? blob.slice(0, blob.size, options.contentType) : blob;
    return { blob: typed, filename: options.filename ?? filename };
  }

  private async postMultipart(
    path: string,
    absoluteUrl: string | undefined,
    blob: Blob,
    filename: string,
    purpose: string | undefined,
    call: CallOptions | undefined,
  ): Promise<StoredFile> {
    const form = new FormData();
    form.append('file', blob, filename);
    if (purpose !== undefined) form.append('purpose', purpose);
    return this.transport.json({
      method: 'POST',
      path,
      ...(absoluteUrl !== undefined ? { absoluteUrl } : {}),
      form,
      call,
    });
  }

  /** A URL the server handed out, made absolute against the API's origin. */
  private absolute(url: string): string {
    return new URL(url, this.transport.options.apiRoot).toString();
  }

  /**
   * The API path of an upload URL on the API itself (`/v1/files`, `/api/v1/files` or a full URL
   * of the same origin); other URLs are posted to as given (absoluteIfForeign).
   */
  private apiPath(url: string): string {
    const root = new URL(this.transport.options.apiRoot);
    const target = new URL(url, root);
    const path = target.pathname.replace(/^(\/api)?\/v1(?=\/)/, '');
    return `${path}${target.search}`;
  }

  private absoluteIfForeign(url: string): string | undefined {
    const root = new URL(this.transport.options.apiRoot);
    const target = new URL(url, root);
    return target.origin === root.origin && /^(\/api)?\/v1\//.test(target.pathname)
      ? undefined
      : target.toString();
  }
}
