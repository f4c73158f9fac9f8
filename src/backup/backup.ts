// `sluice backup <dir>`: an online, consistent copy of what a data directory holds, taken while
// the server goes on serving. Order matters for consistency between the parts:
//   1. files, first pass (blobs and run files that exist now);
//   2. every LMDB environment, each a snapshot of one commit (LMDB's copy in a read transaction);
//   3. the registry repository (git only adds commits, so it holds every commit the snapshot names);
//   4. files, second pass: what appeared or changed since the first. A blob is renamed into place
//      before a record names it and a run's files are in place before the run's record says it
//      ended, so every file the snapshot names is complete in the copy.
// The manifest is written last; a folder without one is an unfinished backup.

import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { FILE_FOLDERS, LMDB_ENVIRONMENTS, type DataLayout } from './layout.js';
import { folderSize, syncFolder } from './files.js';
import {
  BackupError,
  DATA,
  FORMAT,
  FORMAT_VERSION,
  REGISTRY,
  sha256File,
  sluiceVersion,
  writeManifest,
  type LmdbCopy,
  type Manifest,
} from './manifest.js';
import { backupRegistry, isRegistry } from './registry.js';
import { checkCopy, copyEnvironment, environmentExists, environmentFiles } from './storage.js';

/** Creates `target` with mode 0700, refusing one that exists and is not an empty folder. */
async function prepareTarget(target: string): Promise<void> {
  if (existsSync(target)) {
    const info = await stat(target);
    if (!info.isDirectory())
      throw new BackupError(
        'backup_target_exists',
        `${target} exists and is not a folder; choose a new folder`,
      );
    if ((await readdir(target)).length > 0)
      throw new BackupError(
        'backup_target_not_empty',
        `${target} is not empty; back up into a new or empty folder (nothing was written)`,
      );
  }
  await mkdir(target, { recursive: true, mode: 0o700 });
  // The mode given to mkdir is reduced by the umask, and an existing folder keeps its own.
  await chmod(target, 0o700);
}

export async function runBackup(
  layout: DataLayout,
  target: string,
  log: (line: string) => void,
): Promise<Manifest> {
  if (!existsSync(layout.dataDir))
    throw new BackupError(
      'data_dir_missing',
      `the data directory ${layout.dataDir} does not exist (SLUICE_DATA_DIR)`,
    );
  await prepareTarget(target);
  try {
    return await copyAll(layout, target, log);
  } catch (err) {
    // A backup that failed is removed, so no folder without a manifest is left looking like one.
    await rm(target, { recursive: true, force: true });
    throw err;
  }
}

async function copyAll(layout: DataLayout, target: string, log: (line: string) => void): Promise<Manifest> {
  const startedAt = new Date().toISOString();
  const data = join(target, DATA);
  await mkdir(data, { mode: 0o700 });
  const absent: string[] = [];

  const present = FILE_FOLDERS.filter((f) => existsSync(join(layout.dataDir, f.path)));
  for (const f of FILE_FOLDERS) if (!present.includes(f)) absent.push(f.path);
  for (const f of present) await syncFolder(join(layout.dataDir, f.path), join(data, f.path), f.skip);

  const lmdb: LmdbCopy[] = [];
  for (const env of LMDB_ENVIRONMENTS) {
    if (!environmentExists(env, layout.dataDir)) {
      absent.push(env.path);
      continue;
    }
    await copyEnvironment(env, layout.dataDir, data);
    const entries = await checkCopy(env, data);
    const files = [];
    for (const file of environmentFiles(env)) {
      const path = join(data, file);
      await chmod(path, 0o600);
      files.push({ path: file, bytes: (await stat(path)).size, sha256: await sha256File(path) });
    }
    lmdb.push({ name: env.name, path: env.path, files, entries });
    log(`lmdb ${env.path}: ${files.reduce((n, f) => n + f.bytes, 0)} bytes`);
  }

  let registry: Manifest['registry'] = null;
  if (isRegistry(layout.registryPath)) {
    const copy = await backupRegistry(layout.registryPath, join(target, REGISTRY));
    registry = { ...copy, path: layout.registryPath };
    log(`registry ${layout.registryPath}: ${copy.refs} refs, HEAD ${copy.head}`);
  } else absent.push(relative(layout.dataDir, layout.registryPath) || layout.registryPath);

  const folders: Manifest['folders'] = [];
  for (const f of present) {
    await syncFolder(join(layout.dataDir, f.path), join(data, f.path), f.skip);
    const copy = await folderSize(join(data, f.path));
    folders.push({ name: f.name, path: f.path, ...copy });
    log(`files ${f.path}: ${copy.files} files, ${copy.bytes} bytes`);
  }

  const manifest: Manifest = {
    format: FORMAT,
    formatVersion: FORMAT_VERSION,
    sluiceVersion: sluiceVersion(),
    startedAt,
    finishedAt: new Date().toISOString(),
    dataDir: layout.dataDir,
    lmdb,
    registry,
    folders,
    absent,
  };
  await writeManifest(target, manifest);
  return manifest;
}
