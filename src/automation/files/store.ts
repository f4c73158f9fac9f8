// Reusable uploaded files: metadata in LMDB, content in the blob store. Deleting a file drops
// its metadata and, when no other file shares the content, the blob; runs that referenced it
// hold their own snapshot (runs/<id>/input/…), so they are unaffected.

import type { AutomationDb } from '../db.js';
import { randomId } from '../../core/ids.js';
import type { BlobStore, StoredBlob } from './blobs.js';

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

export class FileStore {
  constructor(
    private readonly db: AutomationDb,
    readonly blobs: BlobStore,
  ) {}

  async create(
    tenant: string,
    blob: StoredBlob,
    meta: { filename: string; contentType: string; purpose: string | null },
  ): Promise<FileRecord> {
    const record: FileRecord = {
      id: randomId(12, 'file_'),
      tenant,
      filename: meta.filename,
      contentType: meta.contentType,
      size: blob.size,
      sha256: blob.sha256,
      purpose: meta.purpose,
      createdAt: new Date().toISOString(),
    };
    await this.db.root.transaction(() => {
      this.db.files.putSync(record.id, record);
      this.db.blobRefs.putSync(blob.sha256, (this.db.blobRefs.get(blob.sha256) ?? 0) + 1);
    });
    return record;
  }

  get(tenant: string, id: string): FileRecord | undefined {
    const record = this.db.files.get(id) as FileRecord | undefined;
    return record && record.tenant === tenant ? record : undefined;
  }

  async delete(tenant: string, id: string): Promise<FileRecord | undefined> {
    const record = this.get(tenant, id);
    if (!record) return undefined;
    let lastRef = false;
    await this.db.root.transaction(() => {
      this.db.files.removeSync(id);
      const refs = (this.db.blobRefs.get(record.sha256) ?? 1) - 1;
      if (refs <= 0) {
        this.db.blobRefs.removeSync(record.sha256);
        lastRef = true;
      } else this.db.blobRefs.putSync(record.sha256, refs);
    });
    if (lastRef) await this.blobs.remove(record.sha256);
    return record;
  }

  /** Drops a blob written for an upload that never became a file (run inputs keep their snapshot). */
  async discardIfUnreferenced(sha256: string): Promise<void> {
    if (this.db.blobRefs.get(sha256) === undefined) await this.blobs.remove(sha256);
  }
}
