// Content-addressed file bytes (uploads, dataset example files), named by their SHA-256. Callers
// depend on the BlobStore interface; the local directory (blobs.ts) is the default. Reference
// counting (which files and examples hold a blob) is the metadata stores' job: a blob store only
// keeps bytes.

import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { CodedError } from '../../core/errors.js';

export class TooLargeError extends CodedError {
  constructor(readonly limit: number) {
    super('too_large', `upload larger than ${limit} bytes`);
  }
}

/** What a write stored: the content's address and length. */
export interface StoredBlob {
  sha256: string;
  size: number;
}

export interface BlobStore {
  /** Streams source in; throws TooLargeError past limit and keeps nothing. Same bytes → same sha256, stored once. */
  write(source: AsyncIterable<Buffer>, limit?: number): Promise<{ sha256: string; size: number }>;
  /** Size of a stored blob, or undefined when absent. */
  stat(sha256: string): Promise<{ size: number } | undefined>;
  /** Streams the content, or the inclusive byte range. Rejects with a CodedError 'not_found' when absent. */
  read(sha256: string, range?: { start: number; end: number }): Promise<import('node:stream').Readable>;
  delete(sha256: string): Promise<void>;
  /**
   * Puts the content in a new file at `path` (a run's own copy of an input, a file an archive
   * worker reads): a file that later changes or deletions of the blob never touch. Rejects with
   * a CodedError 'not_found' when absent; an existing file at `path` is left as it is.
   */
  copyTo(sha256: string, path: string): Promise<void>;
}

export const blobNotFound = (sha256: string) => new CodedError('not_found', `blob ${sha256} is not stored`);

/** copyTo for a store without local files: the content streamed from `read` into the file. */
export async function copyFromRead(
  store: Pick<BlobStore, 'read'>,
  sha256: string,
  path: string,
): Promise<void> {
  const source = await store.read(sha256);
  await mkdir(dirname(path), { recursive: true });
  try {
    await pipeline(source, createWriteStream(path, { flags: 'wx' }));
  } catch (err) {
    source.destroy();
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    await rm(path, { force: true });
    throw err;
  }
}

/** A whole blob in memory: for small contents only (an evaluator's expected file). */
export async function readAll(store: Pick<BlobStore, 'read'>, sha256: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of await store.read(sha256)) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
