// One retention pass of the automation service (docs/operations.md "Data lifecycle"). On this
// node: the `.blobs/` caches are brought under AUTOMATION_CACHE_MAX_BYTES, and with several
// nodes the folders of runs another node removed are removed here too. Then, on one node at a
// time (RetentionStore.exclusive): ended runs past AUTOMATION_RUN_RETENTION go (record, events,
// steps, folder, blob holds) unless a review, a dataset example or an experiment needs them;
// `run-input` uploads past AUTOMATION_UPLOAD_RETENTION go; registry bundles of commits nothing
// needs go. Blobs are deleted only once nothing references or holds them.

import type { FileStore } from '../files/store.js';
import type { RunStore } from '../runs/store.js';
import { runFolder } from '../runs/folder.js';
import type { RetentionSettings } from '../settings.js';
import { boundCache } from './cache.js';
import { foldersChangedBefore, removeFolder } from './folders.js';
import type { RetentionStore } from './store.js';

export const REMOVAL_KINDS = ['runs', 'uploads', 'cache', 'bundles', 'blobs'] as const;
export type RemovalKind = (typeof REMOVAL_KINDS)[number];

/** Records (runs, files, cached copies, bundles, blobs) and bytes removed, per kind. */
export type Removals = Record<RemovalKind, { records: number; bytes: number }>;

/** The purpose upload-first files for a run's input are created with (the product's). */
export const RUN_INPUT_PURPOSE = 'run-input';

/**
 * How long a registry bundle is kept after its last look-up, whoever pins it: a node remembers
 * a commit as published for a few minutes (registry/bundles.ts PUBLISHED_TTL_MS) and starts runs
 * of it without looking again; this is well beyond that.
 */
export const BUNDLE_GRACE_MS = 60 * 60_000;

/** Candidates read per query; a pass reads at most MAX_BATCHES of them per kind. */
const BATCH = 500;
const MAX_BATCHES = 20;

export interface PassDeps {
  readonly settings: RetentionSettings;
  readonly store: RetentionStore;
  readonly runs: Pick<RunStore, 'get' | 'removeEnded'>;
  readonly files: Pick<FileStore, 'delete'>;
  /** This node's run folders. */
  readonly runsDir: string;
  /** Several nodes: run folders of runs removed by another node are removed here. */
  readonly shared: boolean;
  readonly now: () => number;
}

export interface PassResult {
  /** False when another node was passing: this node did only its own caches and folders. */
  collected: boolean;
  removed: Removals;
}

export function noRemovals(): Removals {
  const out = {} as Removals;
  for (const kind of REMOVAL_KINDS) out[kind] = { records: 0, bytes: 0 };
  return out;
}

export async function retentionPass(deps: PassDeps): Promise<PassResult> {
  const removed = noRemovals();
  const add = (kind: RemovalKind, records: number, bytes: number) => {
    removed[kind].records += records;
    removed[kind].bytes += bytes;
  };
  const { settings } = deps;
  if (settings.cacheMaxBytes !== undefined) {
    const cache = await boundCache(deps.runsDir, settings.cacheMaxBytes);
    add('cache', cache.files, cache.bytes);
  }
  if (deps.shared && settings.runRetentionMs !== undefined) await removeOrphanFolders(deps, add);
  const collected = await deps.store.exclusive(async () => {
    if (settings.runRetentionMs !== undefined) await removeRuns(deps, settings.runRetentionMs, add);
    await removeUploads(deps, add);
    await removeBundles(deps, add);
  });
  return { collected, removed };
}

type Add = (kind: RemovalKind, records: number, bytes: number) => void;

/** Reads candidates in batches until one comes back short (or the pass has read enough). */
async function inBatches<T>(next: () => Promise<T[]>, each: (item: T) => Promise<boolean>): Promise<void> {
  for (let i = 0; i < MAX_BATCHES; i++) {
    const batch = await next();
    let progressed = false;
    for (const item of batch) if (await each(item)) progressed = true;
    // A batch of candidates that all stayed (changed meanwhile) would come back the same.
    if (batch.length < BATCH || !progressed) return;
  }
}

async function removeRuns(deps: PassDeps, retentionMs: number, add: Add): Promise<void> {
  const before = deps.now() - retentionMs;
  const keep = await deps.store.neededRuns();
  await inBatches(
    () => deps.store.endedRuns(before, keep, BATCH),
    async (candidate) => {
      const gone = await deps.runs.removeEnded(candidate.id);
      if (!gone) return false;
      add('runs', 1, await removeFolder(runFolder(deps.runsDir, candidate.id)));
      if (gone.released.length > 0) {
        const bytes = await deps.store.collectBlobs(gone.released);
        if (bytes > 0) add('blobs', 0, bytes);
      }
      return true;
    },
  );
}

/**
 * Several nodes: a run removed by the node that passed leaves its folder on the others. A
 * folder unchanged for longer than the run retention whose run is gone is removed (a folder
 * being filled for a new run is recent, so never taken for one).
 */
async function removeOrphanFolders(deps: PassDeps, add: Add): Promise<void> {
  const before = deps.now() - deps.settings.runRetentionMs!;
  for (const id of await foldersChangedBefore(deps.runsDir, before)) {
    if (await deps.runs.get(id)) continue;
    add('runs', 0, await removeFolder(runFolder(deps.runsDir, id)));
  }
}

async function removeUploads(deps: PassDeps, add: Add): Promise<void> {
  const before = deps.now() - deps.settings.uploadRetentionMs;
  await inBatches(
    () => deps.store.filesBefore(RUN_INPUT_PURPOSE, before, BATCH),
    async (file) => {
      const gone = await deps.files.delete(file.tenant, file.id);
      if (gone) add('uploads', 1, gone.size);
      return gone !== undefined;
    },
  );
}

async function removeBundles(deps: PassDeps, add: Add): Promise<void> {
  const before = deps.now() - BUNDLE_GRACE_MS;
  await inBatches(
    () => deps.store.idleBundles(before, BATCH),
    async (bundle) => {
      const bytes = await deps.store.removeBundle(bundle.commit, before);
      if (bytes === undefined) return false;
      add('bundles', 1, bytes);
      return true;
    },
  );
}
