// Archive bytes in and out of HTTP: an upload is streamed to a temp file (never held whole), an
// archive is built by the pool into a temp file and streamed to the client with backpressure.
// Temp files are removed whatever happens.

import { randomBytes } from 'node:crypto';
import { mkdir, open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { contentDisposition, type HttpRequest, type HttpResponse } from '../../core/http/index.js';
import { invalid } from '../errors.js';
import { TooLargeError } from '../files/blob-store.js';
import { writeTemp } from '../files/blobs.js';
import { isMultipart, parseMultipart } from '../http/multipart.js';
import { overLimit, toServiceError, type ArchiveLimits } from './limits.js';
import type { ArchivePool } from './pool.js';
import type { BuildEntry } from './zip-writer.js';

export interface ReceivedArchive {
  path: string;
  /** Text fields of a multipart upload. */
  fields: Record<string, string>;
  discard(): Promise<void>;
}

/** The archive of a request (multipart part `file`, or the raw body) as a temp file under `dir`. */
export async function receiveArchive(
  req: HttpRequest,
  dir: string,
  limits: ArchiveLimits,
): Promise<ReceivedArchive> {
  const tooLarge = () => toServiceError(overLimit('maxBytes', limits, 'the archive has'));
  if (isMultipart(req)) {
    const form = await parseMultipart(
      req,
      { fileBytes: limits.maxBytes, files: 1, fieldBytes: 1024 },
      (source, limit) =>
        writeTemp(dir, source, limit).catch((err: unknown) => {
          throw err instanceof TooLargeError ? tooLarge() : err;
        }),
      (temp) => rm(temp.path, { force: true }),
    );
    const part = form.files[0];
    if (!part) throw invalid('file', 'the multipart body has no file part');
    const path = part.stored.path;
    return { path, fields: form.fields, discard: () => rm(path, { force: true }) };
  }
  try {
    const temp = await writeTemp(dir, req.bodyStream(), limits.maxBytes);
    return { path: temp.path, fields: {}, discard: () => rm(temp.path, { force: true }) };
  } catch (err) {
    throw err instanceof TooLargeError ? tooLarge() : err;
  }
}

/** The limits an archive of `entries` entries and `bytes` bytes must stay within, before any work. */
export function checkArchive(entries: number, bytes: number, limits: ArchiveLimits): void {
  if (entries > limits.maxEntries)
    throw toServiceError(overLimit('maxEntries', limits, 'the archive would have'));
  if (bytes > limits.maxUncompressedBytes)
    throw toServiceError(overLimit('maxUncompressedBytes', limits, 'the archive would expand to'));
}

/**
 * Answers with a ZIP of `entries`. `bytes` (the sum of the entries' sizes, known from stored
 * metadata) and the entry count are checked first, so an oversize archive is a 413 before any
 * work; the worker checks the bytes it really reads again.
 */
export async function sendArchive(
  res: HttpResponse,
  pool: ArchivePool,
  opts: {
    dir: string;
    entries: BuildEntry[];
    bytes: number;
    mtime: number;
    limits: ArchiveLimits;
    filename: string;
    /** Runs once the archive is built, before any byte is sent (removes what the build read). */
    built?: () => Promise<void>;
  },
): Promise<void> {
  const { limits } = opts;
  checkArchive(opts.entries.length, opts.bytes, limits);
  await mkdir(opts.dir, { recursive: true });
  const path = join(opts.dir, `archive-${randomBytes(12).toString('hex')}.zip`);
  let handle: FileHandle | undefined;
  try {
    await pool.build(path, opts.entries, opts.mtime, limits);
    await opts.built?.();
    // Unlinked before the first byte is sent: the open handle keeps the bytes readable, and no
    // temp file outlives the response (or a crash in the middle of it).
    handle = await open(path, 'r');
    await rm(path, { force: true });
    res
      .header('content-type', 'application/zip')
      .header('content-disposition', contentDisposition(opts.filename));
    const out = res.stream(200);
    try {
      for await (const chunk of handle.createReadStream({ autoClose: false })) {
        if (out.aborted) return;
        await out.write(chunk as Buffer);
      }
      out.end();
    } catch {
      // The client went away (nothing to answer), or the file could not be read after the
      // headers went out: end the body, which the client's ZIP reader then finds incomplete.
      if (!out.aborted) out.end();
    }
  } finally {
    await handle?.close();
    await rm(path, { force: true });
  }
}
