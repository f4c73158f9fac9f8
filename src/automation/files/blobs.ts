// The local directory blob store: blobs/sha256/<2 hex>/<64 hex>. Written to a temp file while
// hashing, then renamed into place, so a blob path always holds complete content. Also the local
// temp-file helpers the upload and archive paths share.

import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { link, copyFile, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import { asStorageFull, type DiskReserve } from '../../core/disk/reserve.js';
import { blobNotFound, TooLargeError, type BlobStore, type StoredBlob } from './blob-store.js';

const SHA256 = /^[0-9a-f]{64}$/;
const missing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

export class LocalBlobStore implements BlobStore {
  /** `reserve`: every chunk written is admitted by it first (the disk is shared with LMDB). */
  constructor(
    readonly dir: string,
    private readonly reserve?: DiskReserve,
  ) {}

  private pathOf(sha256: string): string {
    // Only a hex digest names a file: anything else could climb out of the directory.
    if (!SHA256.test(sha256)) throw blobNotFound(sha256);
    return join(this.dir, 'sha256', sha256.slice(0, 2), sha256);
  }

  async write(source: AsyncIterable<Buffer>, limit = Number.POSITIVE_INFINITY): Promise<StoredBlob> {
    const temp = await writeTemp(join(this.dir, 'tmp'), source, limit, this.reserve);
    const path = this.pathOf(temp.sha256);
    try {
      if (existsSync(path)) await rm(temp.path, { force: true });
      else {
        await mkdir(dirname(path), { recursive: true });
        await rename(temp.path, path);
      }
    } catch (err) {
      await rm(temp.path, { force: true });
      throw err;
    }
    return { sha256: temp.sha256, size: temp.size };
  }

  async stat(sha256: string): Promise<{ size: number } | undefined> {
    if (!SHA256.test(sha256)) return undefined;
    try {
      return { size: (await stat(this.pathOf(sha256))).size };
    } catch (err) {
      if (missing(err)) return undefined;
      throw err;
    }
  }

  async read(sha256: string, range?: { start: number; end: number }): Promise<Readable> {
    // Opened before resolving: a blob deleted after that still reads to its end.
    let handle;
    try {
      handle = await open(this.pathOf(sha256), 'r');
    } catch (err) {
      if (missing(err)) throw blobNotFound(sha256);
      throw err;
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async delete(sha256: string): Promise<void> {
    await rm(this.pathOf(sha256), { force: true });
  }

  /** A hard link where the file system allows one (free, and immune to the blob's deletion). */
  async copyTo(sha256: string, path: string): Promise<void> {
    try {
      await snapshot(this.pathOf(sha256), path);
    } catch (err) {
      if (missing(err)) throw blobNotFound(sha256);
      throw err;
    }
  }
}

/** A run's own copy: a hard link when possible (free, and immune to the blob's deletion). */
export async function snapshot(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  try {
    await link(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    if (code === 'ENOENT') throw err;
    await copyFile(from, to);
  }
}

export interface TempFile {
  path: string;
  sha256: string;
  size: number;
}

/**
 * A uniquely named temporary file (not content-addressed), for run inputs moved into a run. With a
 * `reserve`, each chunk is admitted by it before it is written; a full disk is a StorageFullError.
 */
export async function writeTemp(
  dir: string,
  source: AsyncIterable<Buffer>,
  limit: number,
  reserve?: DiskReserve,
): Promise<TempFile> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, randomBytes(12).toString('hex'));
  const hash = createHash('sha256');
  const out = createWriteStream(path);
  let size = 0;
  try {
    for await (const chunk of source) {
      size += chunk.length;
      if (size > limit) throw new TooLargeError(limit);
      reserve?.admit(chunk.length);
      hash.update(chunk);
      if (!out.write(chunk)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    return { path, sha256: hash.digest('hex'), size };
  } catch (err) {
    out.destroy();
    await rm(path, { force: true });
    throw asStorageFull(err, 'automation files', dir);
  }
}
