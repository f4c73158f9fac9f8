// Files' metadata and upload sessions in PostgreSQL; the bytes are in the blob store (PgBlobStore
// for a cluster). Each write is one transaction together with its blob reference counts
// (blob-refs.ts); rows read for a change are locked (FOR UPDATE), so two nodes changing one
// session take turns. Idempotency keys are unique per tenant among live sessions: an expired
// session gives its key up when a new one takes it.

import { randomId } from '../../../core/ids.js';
import type { StoredBlob } from '../../files/blob-store.js';
import type { BlobStore } from '../../files/blob-store.js';
import {
  fileRecord,
  type FileMeta,
  type FileRecord,
  type FileStore,
  type UploadRecord,
} from '../../files/store.js';
import type { PgDatabase, Queryable } from '../pool.js';
import { adjustRefs, collectUnreferenced, writeWithRefs } from './blob-refs.js';
import { validTime } from './experiments.js';

const UNIQUE_VIOLATION = '23505';

export class PgFileStore implements FileStore {
  constructor(
    private readonly db: PgDatabase,
    readonly blobs: BlobStore,
  ) {}

  private write<T>(work: (tx: Queryable, dropped: string[]) => Promise<T>): Promise<T> {
    return writeWithRefs(this.db, this.blobs, work);
  }

  private async insertFile(
    tx: Queryable,
    tenant: string,
    id: string,
    blob: { sha256: string; size: number },
    meta: FileMeta,
  ): Promise<FileRecord> {
    const record = fileRecord(tenant, id, blob, meta);
    await tx.query('INSERT INTO files (id, tenant, sha256, created_at, record) VALUES ($1, $2, $3, $4, $5)', [
      id,
      tenant,
      blob.sha256,
      validTime(record.createdAt),
      JSON.stringify(record),
    ]);
    return record;
  }

  create(tenant: string, blob: StoredBlob, meta: FileMeta): Promise<FileRecord> {
    return this.write(async (tx, dropped) => {
      await adjustRefs(tx, blob.sha256, 1, dropped);
      return this.insertFile(tx, tenant, randomId(12, 'file_'), blob, meta);
    });
  }

  async get(tenant: string, id: string): Promise<FileRecord | undefined> {
    const { rows } = await this.db.query<{ record: FileRecord }>(
      'SELECT record FROM files WHERE id = $1 AND tenant = $2',
      [id, tenant],
    );
    return rows[0]?.record;
  }

  delete(tenant: string, id: string): Promise<FileRecord | undefined> {
    return this.write(async (tx, dropped) => {
      const { rows } = await tx.query<{ record: FileRecord }>(
        'DELETE FROM files WHERE id = $1 AND tenant = $2 RETURNING record',
        [id, tenant],
      );
      const record = rows[0]?.record;
      if (record) await adjustRefs(tx, record.sha256, -1, dropped);
      return record;
    });
  }

  async discardIfUnreferenced(sha256: string): Promise<void> {
    await collectUnreferenced(this.db, this.blobs, [sha256]);
  }

  async createUpload(record: UploadRecord, now: number): Promise<{ record: UploadRecord; created: boolean }> {
    const json = JSON.stringify(record);
    const attempt = () =>
      this.db.transaction(async (tx) => {
        const key = record.idempotencyKey;
        if (key !== null) {
          const { rows } = await tx.query<{ record: UploadRecord }>(
            'SELECT record FROM file_uploads WHERE tenant = $1 AND idempotency_key = $2 FOR UPDATE',
            [record.tenant, key],
          );
          const existing = rows[0]?.record;
          if (existing && existing.expiresAt > now) return { record: existing, created: false };
          // The expired session keeps its record (and its idempotencyKey field) until removed.
          if (existing)
            await tx.query('UPDATE file_uploads SET idempotency_key = NULL WHERE id = $1', [existing.id]);
        }
        await tx.query(
          `INSERT INTO file_uploads (id, tenant, idempotency_key, state, expires_at, record)
           VALUES ($1, $2, $3, $4, $5, $6)`,
          [record.id, record.tenant, key, record.state, record.expiresAt, json],
        );
        return { record, created: true };
      });
    try {
      return await attempt();
    } catch (err) {
      // Another node stored a session under the same key meanwhile: answer that one.
      if (record.idempotencyKey !== null && (err as { code?: unknown }).code === UNIQUE_VIOLATION)
        return attempt();
      throw err;
    }
  }

  async upload(id: string): Promise<UploadRecord | undefined> {
    const { rows } = await this.db.query<{ record: UploadRecord }>(
      'SELECT record FROM file_uploads WHERE id = $1',
      [id],
    );
    return rows[0]?.record;
  }

  /** The session locked for a change in `tx`, or undefined. */
  private async lockUpload(tx: Queryable, id: string): Promise<UploadRecord | undefined> {
    const { rows } = await tx.query<{ record: UploadRecord }>(
      'SELECT record FROM file_uploads WHERE id = $1 FOR UPDATE',
      [id],
    );
    return rows[0]?.record;
  }

  private async putUpload(tx: Queryable, record: UploadRecord): Promise<void> {
    await tx.query('UPDATE file_uploads SET state = $2, record = $3 WHERE id = $1', [
      record.id,
      record.state,
      JSON.stringify(record),
    ]);
  }

  attachUpload(id: string, blob: StoredBlob, now: number): Promise<boolean> {
    return this.write(async (tx, dropped) => {
      const record = await this.lockUpload(tx, id);
      if (!record || record.expiresAt <= now) return false;
      if (record.state !== 'pending' && record.state !== 'uploaded') return false;
      await adjustRefs(tx, blob.sha256, 1, dropped);
      if (record.blob) await adjustRefs(tx, record.blob.sha256, -1, dropped);
      await this.putUpload(tx, {
        ...record,
        state: 'uploaded',
        blob: { sha256: blob.sha256, size: blob.size },
      });
      return true;
    });
  }

  completeUpload(id: string, now: number): Promise<FileRecord | undefined> {
    return this.write(async (tx) => {
      const record = await this.lockUpload(tx, id);
      if (!record || record.expiresAt <= now || record.state !== 'uploaded' || !record.blob) return undefined;
      // The session's blob reference becomes the file's.
      const file = await this.insertFile(tx, record.tenant, record.fileId, record.blob, record);
      await this.putUpload(tx, { ...record, state: 'completed', blob: null });
      return file;
    });
  }

  async abortUpload(id: string): Promise<void> {
    await this.write(async (tx, dropped) => {
      const record = await this.lockUpload(tx, id);
      if (!record || record.state === 'completed' || record.state === 'aborted') return;
      if (record.blob) await adjustRefs(tx, record.blob.sha256, -1, dropped);
      await this.putUpload(tx, { ...record, state: 'aborted', blob: null });
    });
  }

  removeExpiredUploads(now: number): Promise<number> {
    return this.write(async (tx, dropped) => {
      // SKIP LOCKED: a session another node is changing is left for the next sweep.
      const { rows } = await tx.query<{ record: UploadRecord }>(
        `DELETE FROM file_uploads WHERE id IN (
           SELECT id FROM file_uploads WHERE expires_at <= $1 FOR UPDATE SKIP LOCKED)
         RETURNING record`,
        [now],
      );
      for (const { record } of rows) if (record.blob) await adjustRefs(tx, record.blob.sha256, -1, dropped);
      return rows.length;
    });
  }
}
