// A file of a run on this node's disk. With several nodes (docs/automation.md "Several nodes")
// a run's input, output and corrected files are kept in the shared blob store and named there
// by their sha256; the run folder of each node is then a cache of them, filled on first use.
// A copy lands under a temporary name and is renamed into place, so a reader that finds the
// file never sees it half-written (two nodes' requests may fetch the same file at once).

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { BlobStore } from './blob-store.js';
import { blobCachePath } from '../runs/folder.js';
import { touchCached } from '../retention/cache.js';

/**
 * Where a file of a run is read on this node. Shared files (several nodes) are read from a
 * folder of the run named by content, `.blobs/<sha256>`, not from their path in the run folder:
 * a corrected file may be replaced under the same name, and a run taken over may have written
 * other outputs on the node that lost it, so a copy kept under a name could go stale; one kept
 * under its content address cannot.
 */
export function runFilePath(
  runDir: string,
  file: { path: string; sha256?: string | undefined },
  shared: boolean,
): string {
  return shared && file.sha256 ? blobCachePath(runDir, file.sha256) : join(runDir, file.path);
}

/**
 * True when the file is at `path`: already there, or copied now from the blob store by
 * `sha256`. False when it is not there and no blob names it (or the blob is gone).
 */
export async function localCopy(
  blobs: BlobStore,
  path: string,
  sha256: string | undefined,
): Promise<boolean> {
  if (existsSync(path)) {
    // A copy in a run's `.blobs/` cache is used: the cache bound evicts it after older ones.
    if (sha256 && basename(path) === sha256) await touchCached(path);
    return true;
  }
  if (!sha256) return false;
  try {
    await intoPlace(path, (part) => blobs.copyTo(sha256, part));
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === 'not_found') return false;
    throw err;
  }
}

/**
 * Puts `content` at `path` (its folder made as needed), renamed into place like a copy from the
 * blob store: a file the worker kept off the disk, written on first read.
 */
export async function writeRunFile(path: string, content: Uint8Array): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  await intoPlace(path, (part) => writeFile(part, content));
}

/** `fill` writes a temporary name beside `path`, renamed into place; removed if it fails. */
async function intoPlace(path: string, fill: (part: string) => Promise<void>): Promise<void> {
  const part = `${path}.part-${randomBytes(6).toString('hex')}`;
  try {
    await fill(part);
    await rename(part, path);
  } catch (err) {
    await rm(part, { force: true });
    throw err;
  }
}
