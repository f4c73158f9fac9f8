// Content-addressed blobs: blobs/sha256/<2 hex>/<64 hex>. Written to a temp file while hashing,
// then renamed into place, so a blob path always holds complete content.

import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import { link, copyFile, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { once } from 'node:events';
import { CodedError } from '../../core/errors.js';

export interface StoredBlob {
  sha256: string;
  size: number;
  path: string;
}

export class TooLargeError extends CodedError {
  constructor(readonly limit: number) {
    super('too_large', `upload larger than ${limit} bytes`);
  }
}

export class BlobStore {
  constructor(readonly dir: string) {}

  pathOf(sha256: string): string {
    return join(this.dir, 'sha256', sha256.slice(0, 2), sha256);
  }

  /** Streams `source` to disk; throws TooLargeError past `limit` bytes (and keeps nothing). */
  async write(source: AsyncIterable<Buffer>, limit = Number.POSITIVE_INFINITY): Promise<StoredBlob> {
    const temp = await writeTemp(join(this.dir, 'tmp'), source, limit);
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
    return { sha256: temp.sha256, size: temp.size, path };
  }

  async writeBuffer(data: Buffer): Promise<StoredBlob> {
    return this.write(
      (async function* () {
        yield data;
      })(),
    );
  }

  async remove(sha256: string): Promise<void> {
    await rm(this.pathOf(sha256), { force: true });
  }
}

/** A run's own copy: a hard link when possible (free, and immune to the blob's deletion). */
export async function snapshot(from: string, to: string): Promise<void> {
  await mkdir(dirname(to), { recursive: true });
  try {
    await link(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    await copyFile(from, to);
  }
}

export interface TempFile {
  path: string;
  sha256: string;
  size: number;
}

/** A uniquely named temporary file (not content-addressed), for run inputs moved into a run. */
export async function writeTemp(
  dir: string,
  source: AsyncIterable<Buffer>,
  limit: number,
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
      hash.update(chunk);
      if (!out.write(chunk)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    return { path, sha256: hash.digest('hex'), size };
  } catch (err) {
    out.destroy();
    await rm(path, { force: true });
    throw err;
  }
}
