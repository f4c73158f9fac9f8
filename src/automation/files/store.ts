// Reusable uploaded files and the upload sessions that lead to them: metadata in LMDB, content
// in the blob store. Deleting a file drops its metadata and, when nothing else references the
// content, the blob; runs that referenced it hold their own snapshot (runs/<id>/input/…), so they
// are unaffected. An upload session that received its bytes holds one blob reference until it
// completes (the reference becomes the file's) or is aborted or expires (the reference is let go).

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import { randomId } from '../../core/ids.js';
import type { BlobStore, StoredBlob } from './blob-store.js';

export interface FileRecord {
  id: string;
  tenant: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  purpose: string | null;
  createdAt: string;
}

export interface FileMeta {
  filename: string;
  contentType: string;
  purpose: string | null;
}

/**
 * `pending`: waiting for its bytes; `uploaded`: bytes received (may be replaced by another PUT);
 * `completed`: the file exists; `aborted`: given up. The last two stay until the session expires,
 * so a repeated complete or abort answers as the first did.
 */
export type UploadState = 'pending' | 'uploaded' | 'completed' | 'aborted';

export interface UploadRecord extends FileMeta {
  id: string;
  tenant: string;
  /** The id the file gets on completion (announced when the session is created). */
  fileId: string;
  /** Declared size in bytes: the upload must be exactly this long. */
  size: number;
  idempotencyKey: string | null;
  createdAt: string;
  /** Epoch milliseconds. */
  expiresAt: number;
  state: UploadState;
  /** The received content (one blob reference held for it) once the bytes arrived. */
  blob: { sha256: string; size: number } | null;
}

export interface FileStore {
  readonly blobs: BlobStore;
  /** A file for content already in the blob store (takes one reference to it). */
  create(tenant: string, blob: StoredBlob, meta: FileMeta): Promise<FileRecord>;
  /** The tenant's file, or undefined (another tenant's file is not found either). */
  get(tenant: string, id: string): Promise<FileRecord | undefined>;
  delete(tenant: string, id: string): Promise<FileRecord | undefined>;
  /** Deletes the blob when no file, upload session or example holds it (run inputs keep their snapshot). */
  discardIfUnreferenced(sha256: string): Promise<void>;

  /**
   * Stores a new session, unless the tenant already has an unexpired one under the same
   * idempotency key: then that one is answered (`created: false`) and nothing is stored.
   */
  createUpload(record: UploadRecord, now: number): Promise<{ record: UploadRecord; created: boolean }>;
  /** A session by id, whatever its tenant or expiry (callers check both). */
  upload(id: string): Promise<UploadRecord | undefined>;
  /**
   * Records the received bytes of a pending or uploaded session (replacing earlier ones) and
   * takes a reference to the blob. False when the session is gone, expired, completed or
   * aborted: the caller then discards the blob.
   */
  attachUpload(id: string, blob: StoredBlob, now: number): Promise<boolean>;
  /** Turns an uploaded session into its file; the session's blob reference becomes the file's. */
  completeUpload(id: string, now: number): Promise<FileRecord | undefined>;
  /** Marks the session aborted and lets go of its blob. */
  abortUpload(id: string): Promise<void>;
  /** Removes sessions that expired at `now` or before, letting go of their blobs; their count. */
  removeExpiredUploads(now: number): Promise<number>;
}

/** The record of a new file of `blob`'s content, created now (every FileStore makes them so). */
export function fileRecord(
  tenant: string,
  id: string,
  blob: { sha256: string; size: number },
  meta: FileMeta,
): FileRecord {
  return {
    id,
    tenant,
    filename: meta.filename,
    contentType: meta.contentType,
    size: blob.size,
    sha256: blob.sha256,
    purpose: meta.purpose,
    createdAt: new Date().toISOString(),
  };
}

type Blobs = { refs: Database<number, string>; drop: string[] };

/** One more reference to a blob, inside a transaction. */
function hold(b: Blobs, sha256: string): void {
  b.refs.putSync(sha256, (b.refs.get(sha256) ?? 0) + 1);
}

/** One reference less, inside a transaction; a blob left without any is removed after it. */
function release(b: Blobs, sha256: string): void {
  const refs = (b.refs.get(sha256) ?? 1) - 1;
  if (refs <= 0) {
    b.refs.removeSync(sha256);
    b.drop.push(sha256);
  } else b.refs.putSync(sha256, refs);
}

export class LmdbFileStore implements FileStore {
  private readonly uploads: Database<UploadRecord, string>;
  /** (tenant, idempotency key) → upload id. */
  private readonly uploadKeys: Database<string, [string, string]>;

  constructor(
    private readonly db: AutomationDb,
    readonly blobs: BlobStore,
  ) {
    this.uploads = db.root.openDB<UploadRecord, string>({ name: 'file-uploads' });
    this.uploadKeys = db.root.openDB<string, [string, string]>({ name: 'file-upload-keys' });
  }

  /** Runs `work` in one write transaction, then removes the blobs it left unreferenced. */
  private async write<T>(work: (b: Blobs) => T): Promise<T> {
    const b: Blobs = { refs: this.db.blobRefs, drop: [] };
    const result = await this.db.root.transaction(() => work(b));
    for (const sha256 of b.drop) await this.blobs.delete(sha256);
    return result;
  }

  private newFile(tenant: string, id: string, blob: { sha256: string; size: number }, meta: FileMeta) {
    const record = fileRecord(tenant, id, blob, meta);
    this.db.files.putSync(record.id, record);
    return record;
  }

  async create(tenant: string, blob: StoredBlob, meta: FileMeta): Promise<FileRecord> {
    return this.write((b) => {
      hold(b, blob.sha256);
      return this.newFile(tenant, randomId(12, 'file_'), blob, meta);
    });
  }

  private read(tenant: string, id: string): FileRecord | undefined {
    const record = this.db.files.get(id) as FileRecord | undefined;
    return record && record.tenant === tenant ? record : undefined;
  }

  async get(tenant: string, id: string): Promise<FileRecord | undefined> {
    return this.read(tenant, id);
  }

  async delete(tenant: string, id: string): Promise<FileRecord | undefined> {
    return this.write((b) => {
      const record = this.read(tenant, id);
      if (!record) return undefined;
      this.db.files.removeSync(id);
      release(b, record.sha256);
      return record;
    });
  }

  async discardIfUnreferenced(sha256: string): Promise<void> {
    if (this.db.blobRefs.get(sha256) === undefined) await this.blobs.delete(sha256);
  }

  async createUpload(record: UploadRecord, now: number): Promise<{ record: UploadRecord; created: boolean }> {
    return this.write(() => {
      const key = record.idempotencyKey;
      if (key !== null) {
        const known = this.uploadKeys.get([record.tenant, key]);
        const existing = known === undefined ? undefined : this.uploads.get(known);
        if (existing && existing.expiresAt > now) return { record: existing, created: false };
        this.uploadKeys.putSync([record.tenant, key], record.id);
      }
      this.uploads.putSync(record.id, record);
      return { record, created: true };
    });
  }

  async upload(id: string): Promise<UploadRecord | undefined> {
    return this.uploads.get(id);
  }

  async attachUpload(id: string, blob: StoredBlob, now: number): Promise<boolean> {
    return this.write((b) => {
      const record = this.uploads.get(id);
      if (!record || record.expiresAt <= now) return false;
      if (record.state !== 'pending' && record.state !== 'uploaded') return false;
      hold(b, blob.sha256);
      if (record.blob) release(b, record.blob.sha256);
      this.uploads.putSync(id, {
        ...record,
        state: 'uploaded',
        blob: { sha256: blob.sha256, size: blob.size },
      });
      return true;
    });
  }

  async completeUpload(id: string, now: number): Promise<FileRecord | undefined> {
    return this.write(() => {
      const record = this.uploads.get(id);
      if (!record || record.expiresAt <= now || record.state !== 'uploaded' || !record.blob) return undefined;
      const file = this.newFile(record.tenant, record.fileId, record.blob, record);
      this.uploads.putSync(id, { ...record, state: 'completed', blob: null });
      return file;
    });
  }

  async abortUpload(id: string): Promise<void> {
    await this.write((b) => {
      const record = this.uploads.get(id);
      if (!record || record.state === 'completed' || record.state === 'aborted') return;
      if (record.blob) release(b, record.blob.sha256);
      this.uploads.putSync(id, { ...record, state: 'aborted', blob: null });
    });
  }

  async removeExpiredUploads(now: number): Promise<number> {
    const expired: string[] = [];
    for (const { key, value } of this.uploads.getRange()) if (value.expiresAt <= now) expired.push(key);
    if (expired.length === 0) return 0;
    return this.write((b) => {
      let removed = 0;
      for (const id of expired) {
        // Read again inside the transaction: a session may have changed since the scan.
        const record = this.uploads.get(id);
        if (!record || record.expiresAt > now) continue;
        if (record.blob) release(b, record.blob.sha256);
        if (
          record.idempotencyKey !== null &&
          this.uploadKeys.get([record.tenant, record.idempotencyKey]) === id
        )
          this.uploadKeys.removeSync([record.tenant, record.idempotencyKey]);
        this.uploads.removeSync(id);
        removed++;
      }
      return removed;
    });
  }
}
