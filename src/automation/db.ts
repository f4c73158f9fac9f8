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
  /** [run id, path in the run's record] → the bytes of an output file kept with its run. */
  readonly runFiles: Database<Buffer, [string, string]>;
  readonly files: Database<unknown, string>;
  readonly blobRefs: Database<number, string>;
  readonly scores: Database<unknown, [string, string]>;
  readonly meta: Database<unknown, string>;
  close(): Promise<void>;
}

/** Where a database's shared structures are kept in `meta`. */
export const structuresKey = (name: string) => `structures:${name}`;

/**
 * msgpackr's shared structures of one database, kept in `meta` rather than under a key of the
 * database itself (lmdb-js's `sharedStructuresKey`), so a scan of the database meets only its
 * records. The same protocol as lmdb-js's own: the structures are read once and extended when a
 * new record shape is written, in a synchronous transaction (part of the current one when a
 * transaction callback writes it) that declines when another writer extended them meanwhile,
 * so they are committed no later than the first value that uses them. Values written before
 * (each carrying its structures inline) still read: msgpackr decodes an inline definition
 * over a shared one and puts the shared one back afterwards.
 */
function sharedStructures(root: RootDatabase, meta: Database<unknown, string>, name: string) {
  const key = structuresKey(name);
  return {
    getStructures: () => meta.get(key),
    saveStructures: (structures: unknown[], isCompatible: number | ((existing: unknown) => boolean)) =>
      root.transactionSync(() => {
        const existing = meta.get(key) as unknown[] | undefined;
        const compatible =
          typeof isCompatible === 'function'
            ? isCompatible(existing)
            : !existing || existing.length === isCompatible;
        if (!compatible) return false;
        meta.putSync(key, structures);
        return true;
      }),
  };
}

export function openAutomationDb(path: string): AutomationDb {
  // A failed commit must reach the writer as an error, never end the thread (lmdb-commit.ts).
  guardLmdbCommitFailures((message, cause) => createLogger('automation').warn({ err: cause, path }, message));
  // maxDbs leaves room for the named databases of datasets, experiments and reviews. No write
  // map: on a full disk a write through the map is a SIGBUS (core/disk/reserve.ts).
  const root = open({ path, compression: false, maxDbs: 64 });
  const db = <V, K extends import('lmdb').Key>(name: string) => root.openDB<V, K>({ name });
  const meta = db<unknown, string>('meta');
  // The databases every run reads and writes keep their msgpack record structures shared
  // (docs/architecture.md, "Stored formats"): a value then names its structure instead of
  // carrying it, and a read does not compile a reader per value.
  const shared = <V, K extends import('lmdb').Key>(name: string) =>
    root.openDB<V, K>({ name, ...sharedStructures(root, meta, name) });
  return {
    root,
    automations: shared('automations'),
    aliases: db('aliases'),
    versions: shared('versions'),
    runs: shared('runs'),
    runDetails: shared('run-details'),
    runIndex: db('run-index'),
    events: shared('run-events'),
    runFiles: root.openDB<Buffer, [string, string]>({ name: 'run-files', encoding: 'binary' }),
    files: db('files'),
    blobRefs: db('blob-refs'),
    scores: db('scores'),
    meta,
    // Writes lmdb-js has batched but not started yet would start on a closed environment (an
    // error thrown on a timer, and a native crash): let them commit first.
    close: async () => {
      await root.committed;
      await root.close();
    },
  };
}
