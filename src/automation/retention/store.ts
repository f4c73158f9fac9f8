// What the retention pass (pass.ts) asks of the stores, beyond their own interfaces: which old
// things are candidates for removal, read across every tenant (the pass is the service's, not a
// tenant's), and the lock that lets one node of several pass at a time. lmdb-store.ts answers
// from the LMDB environment, pg-store.ts from PostgreSQL. Removals go through the stores' own
// methods (RunStore.removeEnded, FileStore.delete), so references are kept as every writer keeps them.

/** A run old enough to go, as the pass needs it. */
export interface RunCandidate {
  id: string;
  tenant: string;
  completedAt: number;
}

export interface FileCandidate {
  id: string;
  tenant: string;
  size: number;
}

export interface BundleCandidate {
  commit: string;
  sha256: string;
}

export interface RetentionStore {
  /**
   * Runs a dataset example or an experiment needs, whatever their age: an example's latest run
   * (shown with the example) and every run an experiment started (its results).
   */
  neededRuns(): Promise<Set<string>>;
  /**
   * Up to `limit` ended runs without a review completed before `before` (epoch ms), oldest
   * first, leaving out the runs in `keep`.
   */
  endedRuns(before: number, keep: ReadonlySet<string>, limit: number): Promise<RunCandidate[]>;
  /** Up to `limit` files with `purpose` created before `before` (epoch ms), oldest first. */
  filesBefore(purpose: string, before: number, limit: number): Promise<FileCandidate[]>;
  /**
   * Registry bundles (several nodes) of commits no stored run pins, that are neither the registry
   * base nor a release of an automation, and were not looked up since `before`.
   */
  idleBundles(before: number, limit: number): Promise<BundleCandidate[]>;
  /**
   * Removes the bundle of `commit` when it still qualifies as in idleBundles, and its blob when
   * nothing else holds it; the bytes freed, or undefined when it was kept.
   */
  removeBundle(commit: string, before: number): Promise<number | undefined>;
  /** Deletes each blob nothing references or holds any more; the bytes freed. */
  collectBlobs(sha256s: readonly string[]): Promise<number>;
  /**
   * Runs `work` unless another node is running it (PostgreSQL: an advisory lock); false when
   * it did not run.
   */
  exclusive(work: () => Promise<void>): Promise<boolean>;
}
