// The retention pass's reads on the LMDB environment (one node: no bundles to collect, no other
// node to take turns with). Runs are found through the run index's `done` entries, keyed
// (tenant, completedAt, id), so the records read are the ended ones only.

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import type { ExampleRecord } from '../datasets/types.js';
import type { ExperimentRecord } from '../experiments/types.js';
import type { BlobStore } from '../files/blob-store.js';
import type { FileRecord } from '../files/store.js';
import { TERMINAL, type RunRecord } from '../runs/types.js';
import type { BundleCandidate, FileCandidate, RetentionStore, RunCandidate } from './store.js';

export class LmdbRetentionStore implements RetentionStore {
  private readonly examples: Database<ExampleRecord, string[]>;
  private readonly experiments: Database<ExperimentRecord, string[]>;

  constructor(
    private readonly db: AutomationDb,
    private readonly blobs: BlobStore,
  ) {
    // The named databases of datasets/store.ts and experiments/store.ts, read only here.
    this.examples = db.root.openDB<ExampleRecord, string[]>({ name: 'examples' });
    this.experiments = db.root.openDB<ExperimentRecord, string[]>({ name: 'experiments' });
  }

  async neededRuns(): Promise<Set<string>> {
    const needed = new Set<string>();
    for (const { value } of this.examples.getRange()) if (value.latestRunId) needed.add(value.latestRunId);
    for (const { value } of this.experiments.getRange()) for (const run of value.runs) needed.add(run.id);
    return needed;
  }

  async endedRuns(before: number, keep: ReadonlySet<string>, limit: number): Promise<RunCandidate[]> {
    const out: RunCandidate[] = [];
    for (const { key } of this.db.runIndex.getRange({ start: ['done', ''], end: ['done', '\uffff'] })) {
      const [, , tenant, completedAt, id] = key as [string, string, string, number, string];
      if (completedAt >= before || keep.has(id)) continue;
      const run = this.db.runs.get(id) as RunRecord | undefined;
      if (!run || !TERMINAL.has(run.status) || run.review !== null) continue;
      out.push({ id, tenant, completedAt });
    }
    return out.sort((a, b) => a.completedAt - b.completedAt).slice(0, limit);
  }

  async filesBefore(purpose: string, before: number, limit: number): Promise<FileCandidate[]> {
    const out: (FileCandidate & { at: number })[] = [];
    for (const { value } of this.db.files.getRange()) {
      const file = value as FileRecord;
      const at = Date.parse(file.createdAt);
      if (file.purpose === purpose && at < before)
        out.push({ id: file.id, tenant: file.tenant, size: file.size, at });
    }
    return out
      .sort((a, b) => a.at - b.at)
      .slice(0, limit)
      .map(({ id, tenant, size }) => ({ id, tenant, size }));
  }

  /** Registry bundles exist only with a shared database (registry/source-store.ts). */
  async idleBundles(): Promise<BundleCandidate[]> {
    return [];
  }

  async removeBundle(): Promise<number | undefined> {
    return undefined;
  }

  async collectBlobs(sha256s: readonly string[]): Promise<number> {
    let bytes = 0;
    for (const sha256 of new Set(sha256s)) {
      if (this.db.blobRefs.get(sha256) !== undefined) continue;
      const stat = await this.blobs.stat(sha256);
      if (!stat) continue;
      await this.blobs.delete(sha256);
      bytes += stat.size;
    }
    return bytes;
  }

  /** One process owns the environment; the runner never overlaps its own passes. */
  async exclusive(work: () => Promise<void>): Promise<boolean> {
    await work();
    return true;
  }
}
