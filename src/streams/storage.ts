// One LMDB environment holds everything the streams service stores (topic logs, topics,
// committed offsets, consumer instances), so a commit can carry writes of all kinds together.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type RootDatabase } from 'lmdb';
import { guardLmdbCommitFailures } from '../core/disk/lmdb-commit.js';
import { createLogger } from '../core/log.js';

export function openStreamsEnvironment(dataDir: string): RootDatabase {
  mkdirSync(dataDir, { recursive: true });
  // A failed commit must reach the writer as an error, never end the thread (lmdb-commit.ts).
  guardLmdbCommitFailures((message, cause) =>
    createLogger('streams').warn({ err: cause, path: dataDir }, message),
  );
  // separateFlushed: a write's promise resolves at commit and carries `.flushed` for the fsync.
  // Produce answers after `.flushed`, so an acknowledged record survives a power cut, while
  // overlappingSync (lmdb-js default on Linux) lets the next commit start during the flush.
  // No write map: on a full disk a write through the map is a SIGBUS (see core/disk/reserve.ts).
  return open({ path: join(dataDir, 'streams.mdb'), maxDbs: 8, separateFlushed: true });
}
