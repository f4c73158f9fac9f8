// `manifest.json` of a backup: what was copied, with sizes and the SHA-256 of every LMDB copy.
// It is written last (through a temporary name), so a folder without one is no backup; restore
// reads it back and refuses a folder whose manifest or LMDB copies do not match.

import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CodedError } from '../core/errors.js';
import type { FolderCopy } from './files.js';
import type { RegistryCopy } from './registry.js';

export const MANIFEST = 'manifest.json';
export const FORMAT = 'sluice-backup';
export const FORMAT_VERSION = 1;
/** Inside a backup: the data directory's copy, and the registry mirror. */
export const DATA = 'data';
export const REGISTRY = 'registry.git';

export interface LmdbCopy {
  name: string;
  /** Relative to the data directory (and to the backup's `data/`). */
  path: string;
  /** Each data file of the copy (relative to `data/`): size and SHA-256. */
  files: { path: string; bytes: number; sha256: string }[];
  /** Entries per named database, as counted in the copy. */
  entries: Record<string, number>;
}

export interface Manifest {
  format: typeof FORMAT;
  formatVersion: number;
  sluiceVersion: string;
  startedAt: string;
  finishedAt: string;
  /** The data directory backed up. */
  dataDir: string;
  lmdb: LmdbCopy[];
  registry: (RegistryCopy & { path: string }) | null;
  folders: ({ name: string; path: string } & FolderCopy)[];
  /** What the data directory did not hold (a service not used, or its data elsewhere). */
  absent: string[];
}

export class BackupError extends CodedError {}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

export async function writeManifest(dir: string, manifest: Manifest): Promise<void> {
  const temp = join(dir, `.${MANIFEST}.tmp`);
  await writeFile(temp, JSON.stringify(manifest, null, 2) + '\n', { mode: 0o600 });
  await rename(temp, join(dir, MANIFEST));
}

/** Reads and checks the shape of a backup's manifest; throws BackupError saying what is wrong. */
export function readManifest(dir: string): Manifest {
  if (!existsSync(dir))
    throw new BackupError('backup_missing', `no backup at ${dir}: the folder does not exist`);
  const path = join(dir, MANIFEST);
  if (!existsSync(path))
    throw new BackupError(
      'backup_invalid',
      `${dir} is not a sluice backup: it has no ${MANIFEST} (a backup that did not finish has none)`,
    );
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new BackupError('backup_invalid', `${path} is not valid JSON: ${(err as Error).message}`);
  }
  const m = parsed as Partial<Manifest> | null;
  if (typeof m !== 'object' || m === null || m.format !== FORMAT)
    throw new BackupError(
      'backup_invalid',
      `${path} is not a sluice backup manifest (format is not "${FORMAT}")`,
    );
  if (m.formatVersion !== FORMAT_VERSION)
    throw new BackupError(
      'backup_invalid',
      `${path} has format version ${String(m.formatVersion)}; this sluice reads version ${FORMAT_VERSION}`,
    );
  const shaped =
    Array.isArray(m.lmdb) &&
    m.lmdb.every(
      (e) =>
        typeof e?.name === 'string' &&
        typeof e.path === 'string' &&
        Array.isArray(e.files) &&
        e.files.every(
          (f) => typeof f?.path === 'string' && typeof f.sha256 === 'string' && typeof f.bytes === 'number',
        ),
    ) &&
    Array.isArray(m.folders) &&
    (m.registry === null ||
      (typeof m.registry === 'object' &&
        typeof m.registry.head === 'string' &&
        typeof m.registry.refs === 'number'));
  if (!shaped)
    throw new BackupError('backup_invalid', `${path} is missing fields or has fields of the wrong type`);
  return m as Manifest;
}

/** This installation's version (package.json above this module, in src/ or dist/src/). */
export function sluiceVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'sluice' && pkg.version) return pkg.version;
    }
    dir = dirname(dir);
  }
  return 'unknown';
}
