// Where a server keeps its data, found the same way by the server and by every `sluice` command
// that works on that data (keys, backup, restore …): SLUICE_DATA_DIR, else `./data` in the
// current folder. A command must not silently start a new, empty store in a folder that holds
// none (run from another folder, a typo in the setting); requireDataDir refuses unless asked to
// create one (`--init`).

import { existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CodedError } from '../errors.js';
import type { EnvReader } from './index.js';

export const DATA_DIR_SETTING = 'SLUICE_DATA_DIR';
export const DATA_DIR_DEFAULT = './data';

/**
 * The key store's folder: every server creates it at its first start, so its presence is what
 * tells a server's data directory from any other folder.
 */
export const DATA_DIR_MARKER = 'auth';

/** The absolute data directory: SLUICE_DATA_DIR, or ./data resolved against the current folder. */
export function resolveDataDir(env: EnvReader): string {
  return resolve(env.string(DATA_DIR_SETTING, DATA_DIR_DEFAULT));
}

export class DataDirError extends CodedError {
  constructor(readonly dir: string) {
    super(
      'no_data_dir',
      `no Sluice data in ${dir} (no ${DATA_DIR_MARKER}/ folder, which a server creates at its first ` +
        `start). The data directory is ${DATA_DIR_SETTING} (unset: ${DATA_DIR_DEFAULT} in the current ` +
        `folder). Set ${DATA_DIR_SETTING} to the server's data directory, or pass --init to create a ` +
        'new, empty one there',
    );
  }
}

/**
 * The data directory of an existing server (resolveDataDir), for a command that reads or changes
 * its data. Throws DataDirError when it holds no server data, unless `init` is true: then the
 * directory is created (a new, empty store is what the caller asked for).
 */
export function requireDataDir(env: EnvReader, options: { init: boolean }): string {
  const dir = resolveDataDir(env);
  if (existsSync(join(dir, DATA_DIR_MARKER))) return dir;
  if (!options.init) throw new DataDirError(dir);
  mkdirSync(dir, { recursive: true });
  return dir;
}
