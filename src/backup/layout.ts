// What `sluice backup` copies out of a data directory and `sluice restore` puts back: the LMDB
// environments (copied through LMDB's own snapshot copy), the automation registry's git
// repository (copied through git), and the folders of plain files. Paths are relative to the
// data directory so a backup restores into any data directory.

import { join, resolve } from 'node:path';
import { loadAutomationSettings } from '../automation/settings.js';
import { loadCoreSettings, type EnvReader } from '../core/settings/index.js';

export interface LmdbEnvironment {
  /** Stable name in the manifest. */
  readonly name: string;
  /** Relative to the data directory: a folder (`data.mdb` inside) or a file (`*.mdb`, `*.lmdb`). */
  readonly path: string;
  /** True when `path` is the database file itself (LMDB's "no subdirectory" layout). */
  readonly file: boolean;
}

/** Every LMDB environment the services open under the data directory (see each opener). */
export const LMDB_ENVIRONMENTS: readonly LmdbEnvironment[] = [
  // src/core/auth/key-store.ts: the API keys (hashes only).
  { name: 'auth', path: 'auth', file: false },
  // src/streams/storage.ts: topic logs, topics, committed offsets, consumer instances.
  { name: 'streams', path: join('streams', 'streams.mdb'), file: true },
  // src/automation/stores.ts: the automation metadata (runs, files, datasets, reviews ...).
  { name: 'automation-meta', path: join('automation', 'meta.lmdb'), file: true },
];

export interface FileFolder {
  readonly name: string;
  /** Relative to the data directory. */
  readonly path: string;
  /** Sub-folders (relative to `path`) never copied: files being written before a rename. */
  readonly skip: readonly string[];
}

/**
 * Folders of plain files. Left out on purpose: `automation/tmp` (uploads and archives being
 * written), `automation/versions` (a cache of registry commits, rebuilt from the repository on
 * use) and every LMDB lock file (recreated by LMDB).
 */
export const FILE_FOLDERS: readonly FileFolder[] = [
  // Run folders: each run's input files and the output files its automation wrote.
  { name: 'runs', path: join('automation', 'runs'), skip: [] },
  // Content-addressed blobs (uploaded files, dataset files); written in tmp/ and renamed in.
  { name: 'blobs', path: join('automation', 'blobs'), skip: ['tmp'] },
  // The rate limit configuration seeded on first start and edited by the operator.
  { name: 'ratelimit', path: 'ratelimit', skip: [] },
];

export interface DataLayout {
  /** Absolute data directory. */
  readonly dataDir: string;
  /** Absolute path of the automation registry repository (a non-bare git repository). */
  readonly registryPath: string;
}

/**
 * Finds the data directory the way the server does (SLUICE_DATA_DIR, default `./data`, through
 * the core settings) and the registry repository the way the automation service does
 * (AUTOMATION_REGISTRY_PATH, default `<data>/automation/registry.git`).
 */
export function dataLayout(env: EnvReader): DataLayout {
  const core = loadCoreSettings(env);
  const automation = loadAutomationSettings(env, core);
  return { dataDir: core.dataDir, registryPath: resolve(automation.registryPath) };
}
