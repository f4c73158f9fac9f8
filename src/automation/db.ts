// One LMDB environment for the automation service's metadata; each kind of record has its own
// named database. Keys are arrays (ordered-binary) so range scans follow (field, time, id).

import { open, type Database, type RootDatabase } from 'lmdb';
import { guardLmdbCommitFailures } from '../core/disk/lmdb-commit.js';
import { createLogger } from '../core/log.js';

export interface AutomationDb {
  readonly root: RootDatabase;
  readonly automations: Database<unknown, string>;
  /** `workflows.<slug>` → automation id. */
  readonly aliases: Database<string, string>;
  readonly versions: Database<unknown, [string, string]>;
  readonly runs: Database<unknown, string>;
  readonly runDetails: Database<unknown, string>;
  /** Value: the run's sampleRank. */
  readonly runIndex: Database<number, (string | number)[]>;
  readonly events: Database<unknown, [string, number]>;
  readonly files: Database<unknown, string>;
  readonly blobRefs: Database<number, string>;
  readonly scores: Database<unknown, [string, string]>;
  readonly meta: Database<unknown, string>;
  close(): Promise<void>;
}

export function openAutomationDb(path: string): AutomationDb {
  // A failed commit must reach the writer as an error, never end the thread (lmdb-commit.ts).
  guardLmdbCommitFailures((message, cause) => createLogger('automation').warn({ err: cause, path }, message));
  // maxDbs leaves room for the named databases of datasets, experiments and reviews. No write
  // map: on a full disk a write through the map is a SIGBUS (core/disk/reserve.ts).
  const root = open({ path, compression: false, maxDbs: 64 });
  const db = <V, K extends import('lmdb').Key>(name: string) => root.openDB<V, K>({ name });
  return {
    root,
    automations: db('automations'),
    aliases: db('aliases'),
    versions: db('versions'),
    runs: db('runs'),
    runDetails: db('run-details'),
    runIndex: db('run-index'),
    events: db('run-events'),
    files: db('files'),
    blobRefs: db('blob-refs'),
    scores: db('scores'),
    meta: db('meta'),
    // Writes lmdb-js has batched but not started yet would start on a closed environment (an
    // error thrown on a timer, and a native crash): let them commit first.
    close: async () => {
      await root.committed;
      await root.close();
    },
  };
}
