// Run folders on this node's disk (runs/folder.ts): removed with their run, measured first so
// the pass can say how many bytes went.

import { lstat, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

const missing = (err: unknown) => (err as NodeJS.ErrnoException).code === 'ENOENT';

/** Bytes of the regular files under `dir` (symbolic links are not followed); 0 when absent. */
export async function folderBytes(dir: string): Promise<number> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (missing(err) || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return 0;
    throw err;
  }
  let bytes = 0;
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) bytes += await folderBytes(path);
    else if (entry.isFile())
      bytes += await lstat(path).then(
        (s) => s.size,
        () => 0,
      );
  }
  return bytes;
}

/** Removes the folder and everything in it; the bytes its files held. */
export async function removeFolder(dir: string): Promise<number> {
  const bytes = await folderBytes(dir);
  await rm(dir, { recursive: true, force: true });
  return bytes;
}

/** Names of the folders in `dir` last changed before `before` (epoch ms); none when it is absent. */
export async function foldersChangedBefore(dir: string, before: number): Promise<string[]> {
  let names;
  try {
    names = await readdir(dir);
  } catch (err) {
    if (missing(err)) return [];
    throw err;
  }
  const out: string[] = [];
  for (const name of names) {
    const s = await stat(join(dir, name)).catch(() => undefined);
    if (s?.isDirectory() && s.mtimeMs < before) out.push(name);
  }
  return out;
}
