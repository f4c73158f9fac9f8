// The reusable file pool: uploads (one multipart request, or an upload session — create, PUT the
// bytes to the URL it names, complete), metadata, content and deletion, in the product SDK's
// shapes (src/automation/wire/files.ts). Storage is behind FileStore; HTTP is in routes.ts.

import type { Readable } from 'node:stream';
import { randomId } from '../../core/ids.js';
import { ApiError, invalid, notFound } from '../errors.js';
import type { Multipart } from '../http/multipart.js';
import type {
  AbortFileUploadResponse,
  CreateFileUploadSessionRequest,
  DeleteFileResponse,
  File,
  PresignedFileUploadSession,
} from '../wire/files.js';
import { TooLargeError, type StoredBlob } from './blob-store.js';
import type { FileMeta, FileRecord, FileStore, UploadRecord } from './store.js';

/** Lifecycle markers the SDK sends (`purpose`); absent means a durable reusable file. */
export const PURPOSES = ['run-input', 'builder-attachment'] as const;
const MAX_FILENAME_CHARS = 255;
const MAX_KEY_CHARS = 256;
/** `type/subtype` with optional parameters, printable ASCII only (it is echoed in a header). */
const MEDIA_TYPE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(?:\s*;[\x20-\x7e]*)?$/;

export interface UploadSigner {
  signUpload(tenant: string, uploadId: string, expiresAt: number): string;
  verifyUpload(token: string, tenant: string, uploadId: string, now?: number): 'ok' | 'expired' | 'invalid';
}

export interface FileServiceOptions {
  maxUploadBytes: number;
  sessionTtlMs: number;
  signer: UploadSigner;
  /** Epoch milliseconds; a test clock moves sessions past their expiry. */
  now?: () => number;
}

export function fileView(f: FileRecord): File {
  return {
    id: f.id,
    filename: f.filename,
    contentType: f.contentType,
    size: f.size,
    purpose: f.purpose,
    createdAt: f.createdAt,
  };
}

function checkFilename(name: string, field = 'filename'): string {
  if (
    name.length === 0 ||
    name.length > MAX_FILENAME_CHARS ||
    name === '.' ||
    name === '..' ||
    /[/\\\u0000-\u001f\u007f]/.test(name)
  )
    throw invalid(
      field,
      `${field} must be 1 to ${MAX_FILENAME_CHARS} characters, not . or .., without / \\ or control characters`,
      'invalid_filename',
    );
  return name;
}

function checkContentType(type: string, field = 'contentType'): string {
  if (type === '') return 'application/octet-stream';
  if (type.length > 255 || !MEDIA_TYPE.test(type))
    throw invalid(field, `${field} must be a media type such as application/pdf`);
  return type;
}

function checkPurpose(purpose: string | undefined): string | null {
  if (purpose === undefined) return null;
  if (!(PURPOSES as readonly string[]).includes(purpose))
    throw invalid('purpose', `purpose must be one of ${PURPOSES.join(', ')}, or absent`);
  return purpose;
}

export class FileService {
  private readonly now: () => number;

  constructor(
    readonly store: FileStore,
    private readonly options: FileServiceOptions,
  ) {
    this.now = options.now ?? Date.now;
  }

  get maxUploadBytes(): number {
    return this.options.maxUploadBytes;
  }

  /** The tenant's file, or 404. */
  async get(tenant: string, id: string): Promise<FileRecord> {
    const f = await this.store.get(tenant, id);
    if (!f) throw notFound(`file ${JSON.stringify(id)}`, 'id');
    return f;
  }

  /** The file's record and its bytes (for a download). */
  async content(tenant: string, id: string): Promise<{ file: FileRecord; body: Readable }> {
    const file = await this.get(tenant, id);
    return { file, body: await this.store.blobs.read(file.sha256) };
  }

  async delete(tenant: string, id: string): Promise<DeleteFileResponse> {
    if (!(await this.store.delete(tenant, id))) throw notFound(`file ${JSON.stringify(id)}`, 'id');
    return { deleted: true };
  }

  /** Writes one multipart file part to the blob store (TooLargeError past the upload limit). */
  writeBlob = (source: AsyncIterable<Buffer>, limit: number): Promise<StoredBlob> =>
    this.store.blobs.write(source, limit);

  discardBlob = (blob: StoredBlob): Promise<void> => this.store.discardIfUnreferenced(blob.sha256);

  /** A file from a parsed multipart upload: part `file`, optional fields `purpose`, `filename`. */
  async createFromForm(tenant: string, form: Multipart<StoredBlob>): Promise<File> {
    const part = form.files.find((f) => f.fieldName === 'file') ?? form.files[0];
    try {
      if (!part) throw invalid('file', 'the multipart body has no file part');
      const meta: FileMeta = {
        filename: checkFilename(form.fields['filename'] ?? part.filename),
        contentType: checkContentType(part.contentType, 'file'),
        purpose: checkPurpose(form.fields['purpose']),
      };
      return fileView(await this.store.create(tenant, part.stored, meta));
    } catch (err) {
      for (const f of form.files) await this.discardBlob(f.stored);
      throw err;
    }
  }

  /**
   * Opens an upload session whose bytes go to `uploadUrl(id, token)` by PUT. A repeated request
   * with the same idempotency key (while that session is open) answers the same session; the
   * same key with a different file is a 409.
   */
  async createSession(
    tenant: string,
    req: CreateFileUploadSessionRequest,
    uploadUrl: (uploadId: string, token: string) => string,
  ): Promise<PresignedFileUploadSession> {
    const filename = checkFilename(req.filename);
    const contentType = checkContentType(req.contentType);
    const purpose = checkPurpose(req.purpose);
    if (!Number.isSafeInteger(req.size) || req.size < 0)
      throw invalid('size', 'size must be a whole number of bytes, 0 or more');
    if (req.size > this.options.maxUploadBytes)
      throw new ApiError(
        413,
        'payload_too_large',
        `size is over the upload limit of ${this.options.maxUploadBytes} bytes`,
        [
          {
            field: 'size',
            message: `at most ${this.options.maxUploadBytes} bytes`,
            code: 'payload_too_large',
          },
        ],
      );
    const key = req.idempotencyKey ?? null;
    if (key !== null && (key.length === 0 || key.length > MAX_KEY_CHARS || /[\u0000-\u001f\u007f]/.test(key)))
      throw invalid(
        'idempotencyKey',
        `idempotencyKey must be 1 to ${MAX_KEY_CHARS} characters without control characters`,
      );
    const now = this.now();
    // Whole seconds: the URL's token carries the expiry to the second.
    const expiresAt = Math.floor((now + this.options.sessionTtlMs) / 1000) * 1000;
    const { record, created } = await this.store.createUpload(
      {
        id: randomId(12, 'fup_'),
        tenant,
        fileId: randomId(12, 'file_'),
        filename,
        contentType,
        size: req.size,
        purpose,
        idempotencyKey: key,
        createdAt: new Date(now).toISOString(),
        expiresAt,
        state: 'pending',
        blob: null,
      },
      now,
    );
    if (
      !created &&
      (record.filename !== filename ||
        record.contentType !== contentType ||
        record.size !== req.size ||
        record.purpose !== purpose)
    )
      throw new ApiError(
        409,
        'idempotency_key_reused',
        'this idempotencyKey belongs to an upload session for another file',
        [
          {
            field: 'idempotencyKey',
            message: 'already used for another file',
            code: 'idempotency_key_reused',
          },
        ],
      );
    return {
      transport: 'presigned-put',
      uploadId: record.id,
      fileId: record.fileId,
      url: uploadUrl(record.id, this.options.signer.signUpload(record.tenant, record.id, record.expiresAt)),
      headers: { 'content-type': record.contentType },
      expiresAt: new Date(record.expiresAt).toISOString(),
      maxFileSizeBytes: this.options.maxUploadBytes,
    };
  }

  /**
   * The bytes of a session, sent to its signed URL. A missing, wrong or expired token, an
   * unknown or expired session: 404 alike (the URL is the only credential). More bytes than
   * declared: 413; fewer: 400. Nothing is kept from a refused upload.
   */
  async receive(
    uploadId: string,
    token: string | undefined,
    body: AsyncIterable<Buffer>,
  ): Promise<{ uploadId: string; size: number; sha256: string }> {
    const now = this.now();
    const session = await this.store.upload(uploadId);
    if (
      !session ||
      token === undefined ||
      session.expiresAt <= now ||
      this.options.signer.verifyUpload(token, session.tenant, uploadId, now) !== 'ok'
    )
      throw notFound(`upload ${JSON.stringify(uploadId)}`, 'uploadId');
    if (session.state === 'completed' || session.state === 'aborted') throw closed(session);
    let blob: StoredBlob;
    try {
      blob = await this.store.blobs.write(body, session.size);
    } catch (err) {
      if (err instanceof TooLargeError)
        throw new ApiError(
          413,
          'payload_too_large',
          `the upload is longer than its declared size of ${session.size} bytes`,
        );
      throw err;
    }
    if (blob.size !== session.size) {
      await this.discardBlob(blob);
      throw invalid(
        '<root>',
        `received ${blob.size} bytes; the upload session declared ${session.size}`,
        'size_mismatch',
      );
    }
    if (!(await this.store.attachUpload(uploadId, blob, this.now()))) {
      await this.discardBlob(blob);
      const now = await this.store.upload(uploadId);
      if (now && (now.state === 'completed' || now.state === 'aborted')) throw closed(now);
      throw notFound(`upload ${JSON.stringify(uploadId)}`, 'uploadId');
    }
    return { uploadId, size: blob.size, sha256: blob.sha256 };
  }

  /** The tenant's open (unexpired) session, or 404. */
  private async session(tenant: string, uploadId: string): Promise<UploadRecord> {
    const s = await this.store.upload(uploadId);
    if (!s || s.tenant !== tenant || s.expiresAt <= this.now())
      throw notFound(`upload ${JSON.stringify(uploadId)}`, 'uploadId');
    return s;
  }

  /** The session's file; answered again (the same file) for a session already completed. */
  async complete(tenant: string, uploadId: string): Promise<File> {
    const s = await this.session(tenant, uploadId);
    if (s.state === 'uploaded') {
      const file = await this.store.completeUpload(uploadId, this.now());
      if (file) return fileView(file);
    }
    // Not uploaded, or changed under us (a concurrent complete or abort): answer from its state.
    const now = await this.session(tenant, uploadId);
    if (now.state === 'completed') return fileView(await this.get(tenant, now.fileId));
    if (now.state === 'aborted') throw closed(now);
    throw new ApiError(409, 'upload_incomplete', 'no bytes were uploaded to this session yet', [
      { field: 'uploadId', message: 'PUT the bytes to the session url first', code: 'upload_incomplete' },
    ]);
  }

  /** Gives the session up (its bytes are dropped); repeating it answers the same. */
  async abort(tenant: string, uploadId: string): Promise<AbortFileUploadResponse> {
    const s = await this.session(tenant, uploadId);
    if (s.state === 'completed') throw closed(s);
    await this.store.abortUpload(uploadId);
    // A concurrent complete may have won.
    const after = await this.store.upload(uploadId);
    if (after?.state === 'completed') throw closed(after);
    return { aborted: true };
  }

  /** Removes expired sessions and the bytes only they held. */
  sweep(): Promise<number> {
    return this.store.removeExpiredUploads(this.now());
  }

  /**
   * Sweeps now and then every `intervalMs` (the timer does not keep the process alive); returns
   * the function that stops it. An expired session is refused at once whether swept or not; the
   * sweep only frees its record and bytes.
   */
  sweepEvery(intervalMs: number, onError: (err: unknown) => void = () => undefined): () => void {
    const run = () => void this.sweep().catch(onError);
    run();
    const timer = setInterval(run, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}

function closed(s: UploadRecord): ApiError {
  const code = s.state === 'completed' ? 'upload_completed' : 'upload_aborted';
  const message = `upload ${JSON.stringify(s.id)} is already ${s.state}`;
  return new ApiError(409, code, message, [{ field: 'uploadId', message, code }]);
}
