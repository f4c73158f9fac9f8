// Content-addressed blobs in PostgreSQL, for nodes that share nothing but the database. A blob is
// a row of `blobs` and its bytes are rows of `blob_chunks` (256 KiB each by default, bytea stored
// out of line uncompressed). Content of one chunk or less is stored by a single statement once
// read. Larger content is streamed into chunks while hashing it, so the blob is never whole in
// memory: the row has no sha256 until the last chunk is in, then takes
// it; when that content is already stored (the unique sha256), the new copy is dropped and the
// stored one answers. Reading pulls one chunk per read of the stream (backpressure), and a
// range reads only the chunks it covers, each cut with substring().

import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { CodedError } from '../../core/errors.js';
import { copyFromRead, TooLargeError, type BlobStore } from '../files/blob-store.js';
import { mapDatabaseError, type PgDatabase } from './pool.js';

export const DEFAULT_CHUNK_BYTES = 256 * 1024;

const UNIQUE_VIOLATION = '23505';

export class PgBlobStore implements BlobStore {
  private readonly chunkBytes: number;

  constructor(
    private readonly db: PgDatabase,
    options: { chunkBytes?: number } = {},
  ) {
    this.chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  }

  async write(
    source: AsyncIterable<Buffer>,
    limit = Number.POSITIVE_INFINITY,
  ): Promise<{ sha256: string; size: number }> {
    const chunkBytes = this.chunkBytes;
    const hash = createHash('sha256');
    let size = 0;
    let pending: Buffer[] = [];
    let pendingBytes = 0;
    // Up to one chunk is read before anything is written: content that fits in one chunk (most
    // run outputs, small uploads) is stored by one statement, or by none when it is stored
    // already, instead of a row, a chunk and a final update, each a commit of its own.
    const pieces = source[Symbol.asyncIterator]();
    let ended = false;
    while (pendingBytes <= chunkBytes) {
      const next = await pieces.next();
      if (next.done) {
        ended = true;
        break;
      }
      size += next.value.length;
      if (size > limit) {
        await pieces.return?.().catch(() => undefined);
        throw new TooLargeError(limit);
      }
      hash.update(next.value);
      pending.push(next.value);
      pendingBytes += next.value.length;
    }
    if (ended) return this.writeSmall(Buffer.concat(pending, pendingBytes), hash.digest('hex'));
    let created;
    try {
      created = await this.db.query<{ id: string }>(
        "INSERT INTO blobs (chunk_size, state) VALUES ($1, 'writing') RETURNING id",
        [chunkBytes],
      );
    } catch (err) {
      await pieces.return?.().catch(() => undefined);
      throw mapDatabaseError(err);
    }
    const id = created.rows[0]!.id;
    let seq = 0;
    const insert = (data: Buffer) =>
      this.db.query('INSERT INTO blob_chunks (blob_id, seq, data) VALUES ($1, $2, $3)', [id, seq++, data]);
    try {
      for (;;) {
        // The next piece is pulled only after the full chunks are stored: the source waits.
        while (pendingBytes >= chunkBytes) {
          const all = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
          await insert(all.subarray(0, chunkBytes));
          const tail = all.subarray(chunkBytes);
          pending = tail.length > 0 ? [tail] : [];
          pendingBytes = tail.length;
        }
        const next = await pieces.next();
        if (next.done) break;
        const piece = next.value;
        size += piece.length;
        if (size > limit) throw new TooLargeError(limit);
        hash.update(piece);
        pending.push(piece);
        pendingBytes += piece.length;
      }
      if (pendingBytes > 0) await insert(Buffer.concat(pending, pendingBytes));
      pending = [];
      const sha256 = hash.digest('hex');
      try {
        await this.db.query("UPDATE blobs SET sha256 = $2, size = $3, state = 'ready' WHERE id = $1", [
          id,
          sha256,
          size,
        ]);
      } catch (err) {
        if ((err as { code?: unknown }).code !== UNIQUE_VIOLATION) throw err;
        // The same content is stored already (perhaps by another node meanwhile): keep that one.
        await this.dropWriting(id);
      }
      return { sha256, size };
    } catch (err) {
      await this.dropWriting(id).catch(() => undefined);
      await pieces.return?.().catch(() => undefined);
      throw mapDatabaseError(err);
    }
  }

  /**
   * Content of at most one chunk, whole in hand: one statement whether or not it is stored
   * already. The unique sha256 is the existence check (`ON CONFLICT DO NOTHING`): stored content
   * inserts nothing (no transaction id, so its commit flushes nothing), new content inserts the
   * `ready` row and its chunk together. A separate check first would be a statement (a
   * transaction) of its own for every write.
   */
  private async writeSmall(data: Buffer, sha256: string): Promise<{ sha256: string; size: number }> {
    try {
      await this.db.query(
        `WITH b AS (
           INSERT INTO blobs (chunk_size, state, sha256, size) VALUES ($1, 'ready', $2, $3)
           ON CONFLICT (sha256) DO NOTHING RETURNING id)
         INSERT INTO blob_chunks (blob_id, seq, data) SELECT id, 0, $4 FROM b WHERE $3 > 0`,
        [this.chunkBytes, sha256, data.length, data],
      );
    } catch (err) {
      throw mapDatabaseError(err);
    }
    return { sha256, size: data.length };
  }

  async stat(sha256: string): Promise<{ size: number } | undefined> {
    const { rows } = await this.db.query<{ size: string }>('SELECT size FROM blobs WHERE sha256 = $1', [
      sha256,
    ]);
    return rows[0] ? { size: Number(rows[0].size) } : undefined;
  }

  async read(sha256: string, range?: { start: number; end: number }): Promise<Readable> {
    const { rows } = await this.db.query<{ id: string; size: string; chunk_size: number }>(
      'SELECT id, size, chunk_size FROM blobs WHERE sha256 = $1',
      [sha256],
    );
    const blob = rows[0];
    if (!blob) throw new CodedError('not_found', `blob ${sha256} not found`);
    const size = Number(blob.size);
    const chunkBytes = blob.chunk_size;
    let pos = range?.start ?? 0;
    const last = Math.min(range?.end ?? size - 1, size - 1);
    if (range && (!Number.isSafeInteger(range.start) || !Number.isSafeInteger(range.end) || range.start < 0))
      throw new CodedError('invalid_range', `invalid byte range ${range.start}-${range.end}`);
    if (range && (range.start > range.end || range.start >= size))
      throw new CodedError(
        'invalid_range',
        `byte range ${range.start}-${range.end} is outside a blob of ${size} bytes`,
      );
    const db = this.db;
    let fetching = false;
    const stream = new Readable({
      // About one chunk is read ahead of the consumer, never more.
      highWaterMark: chunkBytes,
      read() {
        if (fetching) return;
        if (pos > last) {
          this.push(null);
          return;
        }
        fetching = true;
        const seq = Math.floor(pos / chunkBytes);
        const offset = pos - seq * chunkBytes;
        const length = Math.min(chunkBytes - offset, last - pos + 1);
        db.query<{ data: Buffer }>(
          'SELECT substring(data FROM $3 FOR $4) AS data FROM blob_chunks WHERE blob_id = $1 AND seq = $2',
          [blob.id, seq, offset + 1, length],
        ).then(
          (result) => {
            fetching = false;
            const data = result.rows[0]?.data;
            if (!data || data.length !== length) {
              // Deleted and swept while being read.
              this.destroy(new CodedError('not_found', `blob ${sha256} was deleted while it was read`));
              return;
            }
            pos += length;
            this.push(data);
          },
          (err: unknown) => {
            fetching = false;
            this.destroy(mapDatabaseError(err) as Error);
          },
        );
      },
    });
    return stream;
  }

  /** Nodes share no disk: the file is written from the stored chunks. */
  copyTo(sha256: string, path: string): Promise<void> {
    return copyFromRead(this, sha256, path);
  }

  /**
   * The content is gone for stat, read and copyTo at once, and its hash is free for a new write;
   * its chunks stay for reads opened before (as an unlinked file stays for open descriptors, the
   * BlobStore contract) until removeAbandoned sweeps them.
   */
  async delete(sha256: string): Promise<void> {
    await this.db.query(
      "UPDATE blobs SET sha256 = NULL, state = 'deleted', deleted_at = now() WHERE sha256 = $1",
      [sha256],
    );
  }

  /**
   * Removes blobs left half-written by a node that stopped mid-write (or lost the database),
   * started more than `olderThanMs` ago, and blobs deleted more than `olderThanMs` ago (a read
   * still going then fails as deleted); their count. The chunks go with the rows (ON DELETE
   * CASCADE).
   */
  async removeAbandoned(olderThanMs: number): Promise<number> {
    const { rowCount } = await this.db.query(
      `DELETE FROM blobs WHERE (state = 'writing' AND created_at < now() - make_interval(secs => $1))
         OR (state = 'deleted' AND deleted_at <= now() - make_interval(secs => $1))`,
      [olderThanMs / 1000],
    );
    return rowCount ?? 0;
  }

  private async dropWriting(id: string): Promise<void> {
    await this.db.query("DELETE FROM blobs WHERE id = $1 AND state = 'writing'", [id]);
  }
}
