// What of a run other nodes need, put where they can read it. The run service calls these at the
// same points whatever the backend; the backend chosen at start decides what they do: on one
// node (LMDB) nothing leaves this node (`localOnly`); with several nodes (PostgreSQL) the pinned
// commit and every input and output file go to the shared stores (`throughSharedStores`), so
// whichever node claims a run can execute it, and any node can serve its files.

import { createHash } from 'node:crypto';
import { createReadStream, readFileSync, statSync } from 'node:fs';
import { Readable } from 'node:stream';
import type { BlobStore } from '../files/blob-store.js';

/** An output file put where other nodes read it, named by its sha256. */
export interface SharedOutput {
  sha256: string;
  /**
   * Its content, when the run's end stores it (RunEnd.blobs) in the same commit instead of a
   * write of its own: a small file then costs no statement and no round trip before the end.
   */
  content?: Buffer;
}

export interface RunSharing {
  /** Whether run files are read through the shared blob store (by sha256) on this backend. */
  readonly sharesFiles: boolean;
  /** The pinned commit of a new run, where every node can fetch it. */
  publishCommit(commitSha: string): Promise<void>;
  /** An input file staged from a local file (not from the blob store already). */
  putInput(path: string): Promise<void>;
  /**
   * An output file: stored for other nodes, or to be stored by the run's end (`content`); undefined
   * when other nodes do not read it. `content`: its bytes, when the worker kept it off the disk
   * (then nothing is at `path`).
   */
  putOutput(path: string, content?: Buffer): Promise<SharedOutput | undefined>;
}

export const localOnly: RunSharing = {
  sharesFiles: false,
  publishCommit: () => Promise.resolve(),
  putInput: () => Promise.resolve(),
  putOutput: () => Promise.resolve(undefined),
};

/**
 * `endWrites`: output files of at most this many bytes are stored by the run's end, in its
 * commit (the queue's completeWith writes RunEnd.blobs); 0: every file is written on its own.
 */
export function throughSharedStores(
  blobs: BlobStore,
  registry: { publish(commitSha: string): Promise<void> },
  endWrites = 0,
): RunSharing {
  return {
    sharesFiles: true,
    publishCommit: (commitSha) => registry.publish(commitSha),
    putInput: async (path) => {
      await blobs.write(createReadStream(path));
    },
    putOutput: async (path, kept) => {
      // A small file the worker wrote is read synchronously: in the page cache it costs
      // microseconds, while each asynchronous fs call is a hop through the libuv thread pool that
      // the run's end (and the pool thread's next claim) would wait for on a loaded machine.
      const content =
        kept ?? (endWrites > 0 && statSync(path).size <= endWrites ? readFileSync(path) : undefined);
      // Whole in memory, so the content named is the content stored, whatever happens to the file.
      if (content && content.length <= endWrites)
        return { sha256: createHash('sha256').update(content).digest('hex'), content };
      return {
        sha256: (await blobs.write(content ? Readable.from([content]) : createReadStream(path))).sha256,
      };
    },
  };
}
