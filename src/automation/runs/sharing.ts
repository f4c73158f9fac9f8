// What of a run other nodes need, put where they can read it. The run service calls these at the
// same points whatever the backend; the backend chosen at start decides what they do: on one
// node (LMDB) nothing leaves this node (`localOnly`); with several nodes (PostgreSQL) the pinned
// commit and every input and output file go to the shared stores (`throughSharedStores`), so
// whichever node claims a run can execute it, and any node can serve its files.

import { createReadStream } from 'node:fs';
import type { BlobStore } from '../files/blob-store.js';

export interface RunSharing {
  /** Whether run files are read through the shared blob store (by sha256) on this backend. */
  readonly sharesFiles: boolean;
  /** The pinned commit of a new run, where every node can fetch it. */
  publishCommit(commitSha: string): Promise<void>;
  /** An input file staged from a local file (not from the blob store already). */
  putInput(path: string): Promise<void>;
  /** An output file; its sha256 when it was stored for other nodes, undefined when not. */
  putOutput(path: string): Promise<string | undefined>;
}

export const localOnly: RunSharing = {
  sharesFiles: false,
  publishCommit: () => Promise.resolve(),
  putInput: () => Promise.resolve(),
  putOutput: () => Promise.resolve(undefined),
};

export function throughSharedStores(
  blobs: BlobStore,
  registry: { publish(commitSha: string): Promise<void> },
): RunSharing {
  return {
    sharesFiles: true,
    publishCommit: (commitSha) => registry.publish(commitSha),
    putInput: async (path) => {
      await blobs.write(createReadStream(path));
    },
    putOutput: async (path) => (await blobs.write(createReadStream(path))).sha256,
  };
}
