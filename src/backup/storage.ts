// LMDB's side of backup and restore: a consistent copy of a live environment, a check that a
// copy opens, and which processes hold an environment open.
//
// The copy is LMDB's own (mdb_env_copy2 with compaction, through lmdb-js `backup`): it runs in
// one read transaction of this process, so a server writing the same environment from another
// process goes on committing while the copy is made, and the copy is the state of one commit.
// Several processes may open one environment; its lock file (`lock.mdb` / `<file>-lock`) holds
// the shared reader table. The environment is opened read-only and only where it exists, so
// nothing is ever created in the data directory.

import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { open, type Database } from 'lmdb';
import type { LmdbEnvironment } from './layout.js';

/** The files an environment consists of (the lock file excluded), relative to its `path`'s parent. */
export function environmentFiles(env: LmdbEnvironment): string[] {
  return env.file ? [env.path] : [join(env.path, 'data.mdb')];
}

export function lockFileOf(env: LmdbEnvironment, root: string): string {
  return env.file ? join(root, `${env.path}-lock`) : join(root, env.path, 'lock.mdb');
}

export function environmentExists(env: LmdbEnvironment, root: string): boolean {
  return environmentFiles(env).every((f) => existsSync(join(root, f)));
}

/** Copies the environment at `from` (its root) into `to` (an empty root), compacted. */
export async function copyEnvironment(env: LmdbEnvironment, from: string, to: string): Promise<void> {
  const source = open({ path: join(from, env.path), readOnly: true });
  try {
    const target = join(to, env.path);
    // A folder environment is copied into an existing folder; a file one beside its parent.
    mkdirSync(env.file ? dirname(target) : target, { recursive: true, mode: 0o700 });
    await source.backup(target, true);
  } finally {
    await source.close();
  }
}

/**
 * Opens a copied environment read-only and counts the entries (keys, read as raw bytes) of its named databases (a copy
 * that does not open throws), then removes the lock file the open left, so the backup holds
 * data files only.
 */
export async function checkCopy(env: LmdbEnvironment, root: string): Promise<Record<string, number>> {
  const lock = lockFileOf(env, root);
  const hadLock = existsSync(lock);
  const copy = open({ path: join(root, env.path), readOnly: true, maxDbs: 256 });
  try {
    const counts: Record<string, number> = {};
    // The main database's keys are the names of the named databases.
    // Names first: opening a database ends the read transaction an open iterator runs in.
    const names = [...copy.getKeys()].filter((name): name is string => typeof name === 'string');
    for (const name of names) {
      // Read-only: a name that is no database opens nothing (lmdb-js answers undefined).
      const db = copy.openDB({ name, keyEncoding: 'binary', encoding: 'binary' }) as Database | undefined;
      if (db) counts[name] = db.getKeysCount();
    }
    return counts;
  } finally {
    await copy.close();
    if (!hadLock) rmSync(lock, { force: true });
  }
}

/**
 * Process ids (other than this one) in the environment's reader table: processes that have it
 * open and have read from it. Stale entries of dead processes are cleared first. An environment
 * without a lock file is open nowhere.
 */
export async function readersOf(env: LmdbEnvironment, root: string): Promise<number[]> {
  if (!environmentExists(env, root) || !existsSync(lockFileOf(env, root))) return [];
  const handle = open({ path: join(root, env.path), readOnly: true });
  try {
    handle.readerCheck();
    const pids = new Set<number>();
    for (const line of handle.readerList().split('\n')) {
      const match = /^\s*(\d+)\s+[0-9a-f]+\s/.exec(line);
      if (match && Number(match[1]) !== process.pid) pids.add(Number(match[1]));
    }
    return [...pids];
  } finally {
    await handle.close();
  }
}
