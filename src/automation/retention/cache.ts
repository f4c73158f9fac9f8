// The `.blobs/` caches of this node's run folders (runs/folder.ts): with several nodes, a run's
// shared files (inputs, outputs, corrected files) are copied from the blob store into
// `<runsDir>/<run id>/.blobs/<sha256>` on first use and read from there after
// (files/local-copy.ts). Each use of a cached copy sets its modification time (touchCached), so
// the oldest one is the least recently used; over AUTOMATION_CACHE_MAX_BYTES the least recently
// used go first. An evicted copy is fetched again on its next use; a reader that opened it
// before keeps reading it (an unlinked file stays for open descriptors).

import { readdir, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { BLOB_CACHE_DIR, runFolder } from '../runs/folder.js';

interface Cached {
  path: string;
  size: number;
  usedAt: number;
}

const missing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * A copy is marked used at most once a minute: a use costs a system call only then (reading a
 * hot copy stays as cheap as before), and eviction order needs no finer time than that.
 */
const TOUCH_EVERY_MS = 60_000;
/** Copies marked lately and when; forgotten all at once when it grows past TOUCHED_MAX. */
const touched = new Map<string, number>();
const TOUCHED_MAX = 10_000;

/** Marks a cached copy used now (its modification time): it is evicted after older ones. */
export async function touchCached(path: string): Promise<void> {
  const at = Date.now();
  const last = touched.get(path);
  if (last !== undefined && at - last < TOUCH_EVERY_MS) return;
  if (touched.size >= TOUCHED_MAX) touched.clear();
  touched.set(path, at);
  const now = new Date(at);
  await utimes(path, now, now).catch((err: unknown) => {
    // Evicted meanwhile: the caller's next use fetches it again.
    if (!missing(err)) throw err;
  });
}

async function entries(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if (missing(err) || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return [];
    throw err;
  }
}

/** Every cached copy under `runsDir`. */
async function cachedFiles(runsDir: string): Promise<Cached[]> {
  const out: Cached[] = [];
  for (const run of await entries(runsDir)) {
    const dir = join(runFolder(runsDir, run), BLOB_CACHE_DIR);
    for (const name of await entries(dir)) {
      // Copies still being written (`<sha256>.part-…`) are not the cache's yet.
      if (name.includes('.part-')) continue;
      const path = join(dir, name);
      try {
        const s = await stat(path);
        if (s.isFile()) out.push({ path, size: s.size, usedAt: s.mtimeMs });
      } catch (err) {
        if (!missing(err)) throw err;
      }
    }
  }
  return out;
}

/** Removes the least recently used copies until the caches hold at most `maxBytes`. */
export async function boundCache(
  runsDir: string,
  maxBytes: number,
): Promise<{ files: number; bytes: number }> {
  const files = await cachedFiles(runsDir);
  let total = files.reduce((sum, f) => sum + f.size, 0);
  const removed = { files: 0, bytes: 0 };
  files.sort((a, b) => a.usedAt - b.usedAt || (a.path < b.path ? -1 : 1));
  for (const file of files) {
    if (total <= maxBytes) break;
    await rm(file.path, { force: true });
    total -= file.size;
    removed.files++;
    removed.bytes += file.size;
  }
  return removed;
}
