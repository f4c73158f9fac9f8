// Copies folders of plain files for backup and restore. Only regular files are copied (a file
// whose name a writer is still about to rename into place lives in a skipped folder), each
// through a temporary name and a rename, so a copy is never seen half-written. A second pass
// after the LMDB snapshot brings files that appeared or changed since the first pass.

import { constants, existsSync } from 'node:fs';
import { copyFile, lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join, relative } from 'node:path';

export interface FolderCopy {
  files: number;
  bytes: number;
}

const missing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/**
 * Copies every regular file under `from` into `to` (same relative paths) that `to` lacks or
 * holds with another size or an older modification time; sub-folders named in `skip` (relative
 * to `from`) are left out. A file removed while the walk runs is skipped. A missing `from` copies
 * nothing.
 */
export async function syncFolder(from: string, to: string, skip: readonly string[]): Promise<void> {
  const skipped = new Set(skip.map((s) => join(from, s)));
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (missing(err)) return;
      throw err;
    }
    const target = join(to, relative(from, dir));
    await mkdir(target, { recursive: true, mode: 0o700 });
    for (const entry of entries) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!skipped.has(path)) await walk(path);
        continue;
      }
      if (!entry.isFile()) continue;
      await copyIfChanged(path, join(target, entry.name));
    }
  };
  await walk(from);
}

/** The regular files under `dir` and their total size. */
export async function folderSize(dir: string): Promise<FolderCopy> {
  const result: FolderCopy = { files: 0, bytes: 0 };
  const walk = async (path: string): Promise<void> => {
    for (const entry of await readdir(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) await walk(child);
      else if (entry.isFile()) {
        result.files++;
        result.bytes += (await lstat(child)).size;
      }
    }
  };
  if (existsSync(dir)) await walk(dir);
  return result;
}

/** Copies `from` to `to` unless `to` is already the same size and no older; returns the size. */
async function copyIfChanged(from: string, to: string): Promise<number | undefined> {
  let source;
  try {
    source = await lstat(from);
  } catch (err) {
    if (missing(err)) return undefined;
    throw err;
  }
  try {
    const existing = await lstat(to);
    if (existing.size === source.size && existing.mtimeMs >= source.mtimeMs) return source.size;
  } catch (err) {
    if (!missing(err)) throw err;
  }
  const temp = `${to}.copying-${process.pid}`;
  try {
    await copyFile(from, temp, constants.COPYFILE_FICLONE);
    await rename(temp, to);
  } catch (err) {
    await rm(temp, { force: true });
    if (missing(err)) return undefined;
    throw err;
  }
  return (await lstat(to)).size;
}
