// `sluice restore <dir>`: puts a backup back into the data directory the server would use.
// It refuses to run while a server uses that directory, to overwrite a directory that holds
// anything (unless forced, which empties it first), and to use a backup whose manifest or LMDB
// copies do not check out; every check runs before anything is written.

import { existsSync } from 'node:fs';
import { copyFile, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { runningServerPid } from '../core/pid-file.js';
import { syncFolder } from './files.js';
import { FILE_FOLDERS, LMDB_ENVIRONMENTS, type DataLayout } from './layout.js';
import { BackupError, DATA, readManifest, REGISTRY, sha256File, type Manifest } from './manifest.js';
import { restoreRegistry, verifyRegistry } from './registry.js';
import { checkCopy, environmentFiles, readersOf } from './storage.js';

export interface RestoreOptions {
  /** Empty a data directory (and registry folder) that holds something, then restore. */
  force: boolean;
}

/** Checks a backup's manifest against the known layout and its LMDB copies against their sums. */
export async function verifyBackup(source: string): Promise<Manifest> {
  const manifest = readManifest(source);
  for (const copy of manifest.lmdb) {
    const env = LMDB_ENVIRONMENTS.find((e) => e.name === copy.name);
    const expected = env && environmentFiles(env);
    // Only the known layout is ever written: a manifest cannot name a path of its own.
    if (
      !env ||
      env.path !== copy.path ||
      JSON.stringify(expected) !== JSON.stringify(copy.files.map((f) => f.path))
    )
      throw new BackupError(
        'backup_invalid',
        `the manifest lists an unknown LMDB environment ${JSON.stringify(copy.name)}`,
      );
    for (const file of copy.files) {
      const path = join(source, DATA, file.path);
      if (!existsSync(path))
        throw new BackupError('backup_invalid', `the backup lacks ${relative(source, path)}`);
      if ((await stat(path)).size !== file.bytes || (await sha256File(path)) !== file.sha256)
        throw new BackupError(
          'backup_corrupt',
          `${relative(source, path)} does not match its checksum in the manifest`,
        );
    }
  }
  for (const folder of manifest.folders) {
    const known = FILE_FOLDERS.find((f) => f.name === folder.name);
    if (!known || known.path !== folder.path)
      throw new BackupError(
        'backup_invalid',
        `the manifest lists an unknown folder ${JSON.stringify(folder.name)}`,
      );
  }
  if (manifest.registry) {
    const mirror = join(source, REGISTRY);
    if (!existsSync(mirror)) throw new BackupError('backup_invalid', `the backup lacks ${REGISTRY}`);
    try {
      await verifyRegistry(mirror, manifest.registry);
    } catch (err) {
      throw new BackupError(
        'backup_corrupt',
        `the registry copy does not check out: ${(err as Error).message}`,
      );
    }
  }
  return manifest;
}

/** Refuses while a server (or any process) uses the data directory. */
async function refuseIfInUse(dataDir: string): Promise<void> {
  const pid = runningServerPid(dataDir);
  if (pid !== undefined)
    throw new BackupError(
      'server_running',
      `a sluice server (pid ${pid}) is using ${dataDir}; stop it before restoring ` +
        `(if no server runs, remove the stale ${join(dataDir, 'sluice.pid')})`,
    );
  for (const env of LMDB_ENVIRONMENTS) {
    const pids = await readersOf(env, dataDir);
    if (pids.length > 0)
      throw new BackupError(
        'server_running',
        `process ${pids.join(', ')} has ${join(dataDir, env.path)} open; stop it before restoring`,
      );
  }
}

async function isEmpty(dir: string): Promise<boolean> {
  return !existsSync(dir) || (await readdir(dir)).length === 0;
}

async function emptyFolder(dir: string): Promise<void> {
  if (!existsSync(dir)) return;
  for (const name of await readdir(dir)) await rm(join(dir, name), { recursive: true, force: true });
}

export async function runRestore(
  layout: DataLayout,
  source: string,
  options: RestoreOptions,
  log: (line: string) => void,
): Promise<Manifest> {
  const manifest = await verifyBackup(source);
  const { dataDir, registryPath } = layout;
  await refuseIfInUse(dataDir);
  const registryInside = registryPath === dataDir || registryPath.startsWith(dataDir + sep);
  const targets = registryInside ? [dataDir] : [dataDir, registryPath];
  for (const dir of targets)
    if (!(await isEmpty(dir))) {
      if (!options.force)
        throw new BackupError(
          'restore_target_not_empty',
          `${dir} is not empty; restore into an empty data directory, or pass --force to replace what it holds`,
        );
      log(`--force: emptying ${dir}`);
      await emptyFolder(dir);
    }
  await mkdir(dataDir, { recursive: true, mode: 0o700 });

  for (const copy of manifest.lmdb) {
    for (const file of copy.files) {
      const to = join(dataDir, file.path);
      await mkdir(dirname(to), { recursive: true, mode: 0o700 });
      await copyFile(join(source, DATA, file.path), to);
    }
    log(`lmdb ${copy.path}`);
  }
  for (const folder of manifest.folders) {
    await syncFolder(join(source, DATA, folder.path), join(dataDir, folder.path), []);
    log(`files ${folder.path}: ${folder.files} files`);
  }
  if (manifest.registry) {
    await restoreRegistry(join(source, REGISTRY), registryPath, manifest.registry);
    log(`registry ${registryPath}: HEAD ${manifest.registry.head}`);
  }

  // The restored environments open, and hold what the backup counted.
  for (const copy of manifest.lmdb) {
    const env = LMDB_ENVIRONMENTS.find((e) => e.name === copy.name)!;
    const entries = await checkCopy(env, dataDir);
    if (JSON.stringify(entries) !== JSON.stringify(copy.entries))
      throw new BackupError(
        'restore_mismatch',
        `${join(dataDir, copy.path)} does not hold what the backup counted`,
      );
  }
  return manifest;
}
