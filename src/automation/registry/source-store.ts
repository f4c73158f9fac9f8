// Registry sources: which blob holds a git bundle of a registry commit, so that nodes sharing one
// database (and no git remote) can fetch the commit a run pins from the blob store, plus the
// registry base, the commit whose bundle (of every ref) a new node's repository starts from
// (docs/automation.md, "Several nodes (PostgreSQL)"). The PostgreSQL implementation is in
// pg/stores/registry-sources.ts; one node on LMDB never needs either, the interface has both.

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import type { BlobStore } from '../files/blob-store.js';

export interface RegistrySourceStore {
  /** The sha256 of the blob holding a bundle with `commit`, or undefined. */
  get(commit: string): Promise<string | undefined>;
  /**
   * Records that blob `sha256` holds a bundle with `commit` (fetchable as
   * `refs/sluice/sources/<commit>`) and keeps that blob while the record exists. The first record
   * of a commit is kept; a later one's blob is released (deleted when nothing else holds it).
   */
  put(commit: string, sha256: string): Promise<void>;
  /**
   * Runs `work` while no other caller on this store runs it (across nodes), with the base commit
   * recorded so far (undefined at first); a commit that `work` returns, whose bundle it put, is
   * recorded as the base when none is yet.
   */
  withBase(work: (base: string | undefined) => Promise<string | undefined>): Promise<void>;
}

const BASE_KEY = 'registry-base';

/** Sources in a named LMDB database; a source counts as a reference to its blob (`blob-refs`). */
export class LmdbRegistrySourceStore implements RegistrySourceStore {
  private readonly sources: Database<string, string>;
  private baseTurn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: AutomationDb,
    private readonly blobs: BlobStore,
  ) {
    this.sources = db.root.openDB<string, string>({ name: 'registry-sources' });
  }

  async get(commit: string): Promise<string | undefined> {
    return this.sources.get(commit);
  }

  async put(commit: string, sha256: string): Promise<void> {
    const kept = await this.db.root.transaction(() => {
      const known = this.sources.get(commit);
      if (known !== undefined) return known;
      this.sources.putSync(commit, sha256);
      this.db.blobRefs.putSync(sha256, (this.db.blobRefs.get(sha256) ?? 0) + 1);
      return sha256;
    });
    if (kept !== sha256 && this.db.blobRefs.get(sha256) === undefined) await this.blobs.delete(sha256);
  }

  withBase(work: (base: string | undefined) => Promise<string | undefined>): Promise<void> {
    // One process owns an LMDB environment: callers of this store only take turns with each other.
    const turn = this.baseTurn.then(async () => {
      const base = this.db.meta.get(BASE_KEY) as string | undefined;
      const made = await work(base);
      if (made && base === undefined) await this.db.meta.put(BASE_KEY, made);
    });
    this.baseTurn = turn.catch(() => undefined);
    return turn;
  }
}
