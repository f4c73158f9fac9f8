// Registry commits as git bundles in the blob store, for nodes that share a database but no git
// remote (docs/automation.md, "Several nodes (PostgreSQL)"). A node publishes the commit a run
// pins before the run is queued, and the one that runs it fetches the commit from that bundle
// when its own repository lacks it. Each bundle holds the commit's whole history under the ref
// refs/sluice/sources/<commit> (registry repositories are small); the registry base is a
// bundle of every ref that a new node clones instead of seeding a history of its own.

import { createReadStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { git, GitError } from './git.js';
import type { BlobStore } from '../files/blob-store.js';
import type { RegistrySourceStore } from './source-store.js';
import { CodedError, isCodedError } from '../../core/errors.js';

/** Where a node keeps and finds registry bundles. */
export interface BundlePort {
  store: RegistrySourceStore;
  blobs: BlobStore;
  /** A folder for bundle files while they are written or read (created when missing). */
  tmpDir: string;
}

/** A commit no means at hand (the repository, the remote, a stored bundle) could provide. */
export class CommitUnavailableError extends CodedError {
  constructor(message: string) {
    super('version_unavailable', message);
  }
}

/** How long a commit is remembered as published without asking the store again. */
export const PUBLISHED_TTL_MS = 5 * 60_000;

const sourceRef = (commit: string) => `refs/sluice/sources/${commit}`;

export class RegistryBundles {
  /**
   * Commits known to have a stored bundle, with when that was last confirmed: a run start of one
   * costs no query. Confirmed again after PUBLISHED_TTL_MS, well within the time the retention
   * pass keeps a bundle after its last look-up (retention/bundles.ts), so a bundle remembered
   * here is never one the pass has collected.
   */
  private readonly published = new Map<string, number>();
  private readonly publishing = new Map<string, Promise<void>>();
  private readonly fetching = new Map<string, Promise<void>>();

  constructor(
    private readonly repoPath: string,
    private readonly port: BundlePort,
  ) {}

  /** Stores a bundle of `commit` (which the repository has) unless one is stored already. */
  publish(commit: string): Promise<void> {
    const confirmed = this.published.get(commit);
    if (confirmed !== undefined && Date.now() - confirmed < PUBLISHED_TTL_MS) return Promise.resolve();
    return this.once(this.publishing, commit, async () => {
      if ((await this.port.store.get(commit)) === undefined) await this.put(commit, [sourceRef(commit)]);
      this.published.set(commit, Date.now());
    });
  }

  /**
   * Brings `commit` into the repository from its stored bundle, one fetch per commit at a time.
   * Throws CommitUnavailableError when no bundle is stored or it cannot be read or fetched; a
   * failing database's error is thrown as it is (the run is not at fault).
   */
  fetch(commit: string): Promise<void> {
    return this.once(this.fetching, commit, async () => {
      const sha256 = await this.port.store.get(commit);
      if (sha256 === undefined)
        throw new CommitUnavailableError(`no bundle of it is stored in the registry sources`);
      await this.withBundleOf(sha256, (file) =>
        git(this.repoPath, ['fetch', '--quiet', file, `${sourceRef(commit)}:${sourceRef(commit)}`]),
      );
      this.published.set(commit, Date.now());
    });
  }

  /**
   * Runs `work` with the registry base (a commit whose bundle holds every ref), under the store's
   * lock; a commit `work` returns is published with every ref of the repository and becomes the
   * base when there is none yet.
   */
  async withBase(work: (base: string | undefined) => Promise<string | undefined>): Promise<void> {
    await this.port.store.withBase(async (base) => {
      const made = await work(base);
      if (made === undefined) return undefined;
      await this.put(made, ['--all']);
      this.published.set(made, Date.now());
      return made;
    });
  }

  /** Clones the base (a commit recorded by withBase) into the empty folder `path`. */
  async cloneBase(base: string, path: string): Promise<void> {
    const sha256 = await this.port.store.get(base);
    if (sha256 === undefined)
      throw new CommitUnavailableError(
        `no bundle of the registry base ${base} is stored in the registry sources`,
      );
    try {
      await this.withBundleOf(sha256, async (file) => {
        await git(path, ['clone', '--quiet', file, '.']);
        // The bundle was a temporary file: nothing to fetch from later.
        await git(path, ['remote', 'remove', 'origin']);
      });
    } catch (err) {
      if (err instanceof CommitUnavailableError)
        throw new CommitUnavailableError(`the registry base ${base}: ${err.message}`);
      throw err;
    }
    this.published.set(base, Date.now());
  }

  /** `git bundle create` of `refs` (after `update-ref` of the commit's source ref), stored and recorded. */
  private async put(commit: string, refs: string[]): Promise<void> {
    await git(this.repoPath, ['update-ref', sourceRef(commit), commit]);
    const file = await this.tempFile();
    try {
      await git(this.repoPath, ['bundle', 'create', '--quiet', file, ...refs]);
      const blob = await this.port.blobs.write(createReadStream(file));
      await this.port.store.put(commit, blob.sha256);
    } finally {
      await rm(file, { force: true });
    }
  }

  private async withBundleOf<T>(sha256: string, use: (file: string) => Promise<T>): Promise<T> {
    const file = await this.tempFile();
    try {
      try {
        await this.port.blobs.copyTo(sha256, file);
      } catch (err) {
        if (isCodedError(err) && err.code === 'not_found')
          throw new CommitUnavailableError(`its bundle (blob ${sha256}) is not in the blob store`);
        throw err;
      }
      try {
        return await use(file);
      } catch (err) {
        if (err instanceof GitError)
          throw new CommitUnavailableError(`its bundle cannot be fetched: ${err.message}`);
        throw err;
      }
    } finally {
      await rm(file, { force: true });
    }
  }

  private async tempFile(): Promise<string> {
    await mkdir(this.port.tmpDir, { recursive: true });
    return join(this.port.tmpDir, `registry-${randomBytes(8).toString('hex')}.bundle`);
  }

  private once(
    pending: Map<string, Promise<void>>,
    commit: string,
    work: () => Promise<void>,
  ): Promise<void> {
    const known = pending.get(commit);
    if (known) return known;
    const started = work().finally(() => pending.delete(commit));
    pending.set(commit, started);
    return started;
  }
}
