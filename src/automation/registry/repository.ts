// The registry's git repository: created (or cloned) on first start, seeded with the built-in
// automations, and read by commit. Each package version used by a run is materialised once
// into a cache folder keyed by commit, so runs of old versions keep their exact code. With a
// shared database (several nodes) commits also travel as bundles in its blob store (bundles.ts).

import { cp, mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { archiveInto, git, GitError } from './git.js';
import { compareSemver, SEMVER } from './semver.js';
import { MANIFEST_NAMES, type AutomationType } from './manifest.js';
import { CommitUnavailableError, RegistryBundles, type BundlePort } from './bundles.js';
import { CodedError } from '../../core/errors.js';

export interface Release {
  version: string;
  tag: string;
  commit: string;
  createdAt: string;
}

export interface ResolvedRef {
  requestedRef: string;
  resolvedRef: string;
  resolvedTag: string | null;
  version: string;
  commitSha: string;
}

export class RefNotFoundError extends CodedError {
  constructor(readonly ref: string) {
    super('ref_not_found', `version ${JSON.stringify(ref)} not found`);
  }
}

export const PACKAGE_SEGMENT = /^[a-z0-9][a-z0-9-]*$/;

export function packageName(type: AutomationType, slug: string): string {
  return `${type}s.${slug}`;
}

export function packagePath(type: AutomationType, slug: string): string {
  return `${type}s/${slug}`;
}

export interface RepositoryOptions {
  path: string;
  cacheDir: string;
  cloneUrl?: string | undefined;
  /** Folder with workflows/ and agents/ copied in and released as 1.0.0 when the repository is created. */
  seedDir?: string | undefined;
  /**
   * With a database several nodes share: commits are published there as bundles and fetched from
   * there, and without `cloneUrl` a new repository starts from the cluster's registry base.
   */
  sources?: BundlePort | undefined;
}

/**
 * How open() found the repository: there already, cloned from the remote, seeded here, or
 * joined (cloned from the registry base another node seeded and published).
 */
export type OpenedAs = 'existing' | 'cloned' | 'seeded' | 'joined';

export class RegistryRepository {
  private readonly materialising = new Map<string, Promise<string>>();
  /**
   * Packages this process found or made complete in the cache: a folder keyed by commit never
   * changes and nothing here removes one, so each is checked on disk once, not once per run.
   */
  private readonly materialised = new Map<string, string>();
  private fetching: Promise<void> | undefined;
  private readonly bundles: RegistryBundles | undefined;

  constructor(private readonly options: RepositoryOptions) {
    this.bundles = options.sources && new RegistryBundles(options.path, options.sources);
  }

  get path(): string {
    return this.options.path;
  }

  /** Creates, clones or opens the repository (see OpenedAs). */
  async open(): Promise<OpenedAs> {
    const { path, cloneUrl } = this.options;
    const bundles = cloneUrl ? undefined : this.bundles;
    if (existsSync(join(path, '.git'))) {
      // A repository made before the cluster had a base (or on LMDB) becomes the base.
      await bundles?.withBase(async (base) => (base === undefined ? this.head() : undefined));
      return 'existing';
    }
    await mkdir(path, { recursive: true });
    if (cloneUrl) {
      await git(path, ['clone', '--quiet', cloneUrl, '.']);
      return 'cloned';
    }
    if (!bundles) {
      await this.seed();
      return 'seeded';
    }
    // Under the base's lock: of nodes starting together one seeds, the others clone its base.
    let opened: OpenedAs = 'seeded';
    await bundles.withBase(async (base) => {
      if (base === undefined) {
        await this.seed();
        return this.head();
      }
      await bundles.cloneBase(base, path);
      opened = 'joined';
      return undefined;
    });
    return opened;
  }

  /** A new history: the built-in examples released as 1.0.0, or an empty registry. */
  private async seed(): Promise<void> {
    const { path, seedDir } = this.options;
    await git(path, ['init', '--quiet', '-b', 'main']);
    if (seedDir && existsSync(seedDir)) {
      await cp(seedDir, path, { recursive: true });
      await git(path, ['add', '-A']);
      await git(path, ['commit', '--quiet', '-m', 'Built-in example automations']);
      for (const pkg of await this.packagesInTree('HEAD')) {
        await git(path, ['tag', '-a', `${pkg}@1.0.0`, '-m', `${pkg} 1.0.0`]);
      }
    } else {
      await writeFile(
        join(path, 'automation.json'),
        JSON.stringify({ schemaVersion: 1, platformVersion: '1' }, null, 2) + '\n',
      );
      await git(path, ['add', '-A']);
      await git(path, ['commit', '--quiet', '-m', 'Empty automation registry']);
    }
  }

  private async head(): Promise<string> {
    return (await git(this.options.path, ['rev-parse', 'HEAD^{commit}'])).trim();
  }

  /** Whether commits are published to a shared database (several nodes). */
  get publishes(): boolean {
    return this.bundles !== undefined;
  }

  /** Shared with other nodes, but without a remote: each node's tags are only its own. */
  get sharedWithoutRemote(): boolean {
    return this.bundles !== undefined && !this.options.cloneUrl;
  }

  /**
   * With a shared database: makes sure a bundle of `commit` (which this repository has) is stored
   * there, so that any node can run it. Known commits cost nothing after the first call.
   */
  async publish(commit: string): Promise<void> {
    await this.bundles?.publish(commit);
  }

  /** With a remote, brings tags and branches up to date before a sync reads them. */
  async refresh(): Promise<void> {
    if (!this.options.cloneUrl) return;
    await git(this.options.path, ['fetch', '--quiet', '--tags', '--force', '--prune', 'origin']);
  }

  /**
   * Brings this node's copy to `commit` when it lacks it: several nodes each keep their own
   * repository, and a run pins a commit that the node that started it saw. From the remote when
   * there is one (one fetch at a time), else (or when the remote lacks it) from the commit's
   * bundle in the shared database. Throws CommitUnavailableError naming the commit when neither
   * has it.
   */
  async ensureCommit(commit: string): Promise<void> {
    if (!/^[0-9a-f]{40}$/.test(commit) || (await this.hasCommit(commit))) return;
    let where = "this node's registry repository";
    if (this.options.cloneUrl) {
      this.fetching ??= this.refresh().finally(() => (this.fetching = undefined));
      try {
        await this.fetching;
        where += ' or its remote';
      } catch (err) {
        if (!this.bundles || !(err instanceof GitError)) throw err;
        where += ` (the remote cannot be fetched: ${err.message})`;
      }
      if (await this.hasCommit(commit)) return;
    }
    let reason = '';
    if (this.bundles) {
      try {
        await this.bundles.fetch(commit);
        if (await this.hasCommit(commit)) return;
        reason = '; its stored bundle does not hold it';
      } catch (err) {
        if (!(err instanceof CommitUnavailableError)) throw err;
        reason = `; ${err.message}`;
      }
    }
    throw new CommitUnavailableError(`commit ${commit} is not in ${where}${reason}`);
  }

  private async hasCommit(commit: string): Promise<boolean> {
    try {
      await git(this.options.path, ['cat-file', '-e', `${commit}^{commit}`]);
      return true;
    } catch (err) {
      if (err instanceof GitError) return false;
      throw err;
    }
  }

  /** Package names (`workflows.<slug>`) present in a commit's tree. */
  async packagesInTree(commit: string): Promise<string[]> {
    const out: string[] = [];
    for (const type of ['workflow', 'agent'] as const) {
      let listing = '';
      try {
        listing = await git(this.options.path, ['ls-tree', '--name-only', commit, `${type}s/`]);
      } catch {
        continue;
      }
      for (const line of listing.split('\n')) {
        const slug = line.trim().split('/')[1];
        if (slug && PACKAGE_SEGMENT.test(slug)) out.push(packageName(type, slug));
      }
    }
    return out;
  }

  /** All packages that have at least one release tag. */
  async releasedPackages(): Promise<string[]> {
    const out = await git(this.options.path, ['tag', '--list', '*@*']);
    const names = new Set<string>();
    for (const tag of out.split('\n')) {
      const at = tag.lastIndexOf('@');
      if (at > 0 && SEMVER.test(tag.slice(at + 1))) names.add(tag.slice(0, at));
    }
    return [...names].sort();
  }

  /** Releases of a package, newest version first. */
  async releases(pkg: string): Promise<Release[]> {
    const out = await git(this.options.path, [
      'for-each-ref',
      '--format=%(refname:strip=2)%00%(objectname)%00%(*objectname)%00%(creatordate:iso-strict)',
      `refs/tags/${pkg}@*`,
    ]);
    const releases: Release[] = [];
    for (const line of out.split('\n')) {
      if (line === '') continue;
      const [tag = '', object = '', peeled = '', date = ''] = line.split('\0');
      const version = tag.slice(pkg.length + 1);
      if (!SEMVER.test(version)) continue;
      releases.push({ version, tag, commit: peeled || object, createdAt: new Date(date).toISOString() });
    }
    return releases.sort((a, b) => compareSemver(b.version, a.version));
  }

  /** `latest`, a release version, a branch, tag or commit → the commit it names. */
  async resolve(pkg: string, ref: string): Promise<ResolvedRef> {
    if (ref === 'latest') {
      const latest = (await this.releases(pkg))[0];
      if (!latest) throw new RefNotFoundError(ref);
      return {
        requestedRef: ref,
        resolvedRef: latest.tag,
        resolvedTag: latest.tag,
        version: latest.version,
        commitSha: latest.commit,
      };
    }
    if (SEMVER.test(ref)) {
      const release = (await this.releases(pkg)).find((r) => r.version === ref);
      if (!release) throw new RefNotFoundError(ref);
      return {
        requestedRef: ref,
        resolvedRef: release.tag,
        resolvedTag: release.tag,
        version: release.version,
        commitSha: release.commit,
      };
    }
    if (!/^[A-Za-z0-9][A-Za-z0-9._\/-]*$/.test(ref) || ref.includes('..')) throw new RefNotFoundError(ref);
    const candidates = this.options.cloneUrl ? [`origin/${ref}`, ref] : [ref];
    for (const candidate of candidates) {
      try {
        const sha = (
          await git(this.options.path, ['rev-parse', '--verify', '--quiet', `${candidate}^{commit}`])
        ).trim();
        if (sha)
          return {
            requestedRef: ref,
            resolvedRef: candidate,
            resolvedTag: null,
            version: /^[0-9a-f]{40}$/.test(ref) ? ref.slice(0, 12) : ref,
            commitSha: sha,
          };
      } catch (err) {
        if (!(err instanceof GitError)) throw err;
      }
    }
    throw new RefNotFoundError(ref);
  }

  /** The manifest file of a package at a commit, or null when the package has none there. */
  async readManifest(commit: string, pkgPath: string): Promise<{ fileName: string; text: string } | null> {
    await this.ensureCommit(commit);
    let listing: string;
    try {
      listing = await git(this.options.path, ['ls-tree', '--name-only', commit, `${pkgPath}/`]);
    } catch {
      return null;
    }
    const files = new Set(listing.split('\n').map((l) => l.slice(pkgPath.length + 1)));
    for (const name of MANIFEST_NAMES) {
      if (files.has(name))
        return {
          fileName: name,
          text: await git(this.options.path, ['show', `${commit}:${pkgPath}/${name}`]),
        };
    }
    return null;
  }

  /** The package folder at `commit`, unpacked once into the cache and reused afterwards. */
  materialise(commit: string, pkgPath: string): Promise<string> {
    const key = `${commit}:${pkgPath}`;
    const known = this.materialised.get(key);
    if (known) return Promise.resolve(known);
    const final = join(this.options.cacheDir, commit, pkgPath);
    const pending = this.materialising.get(key);
    if (pending) return pending;
    const work = (async () => {
      if (existsSync(join(final, '.sluice-complete'))) {
        this.materialised.set(key, final);
        return final;
      }
      await this.ensureCommit(commit);
      const staging = join(this.options.cacheDir, `.staging-${randomBytes(6).toString('hex')}`);
      await mkdir(staging, { recursive: true });
      try {
        await archiveInto(this.options.path, commit, pkgPath, staging);
        await writeFile(join(staging, pkgPath, '.sluice-complete'), commit);
        await mkdir(join(final, '..'), { recursive: true });
        await rm(final, { recursive: true, force: true });
        await rename(join(staging, pkgPath), final);
      } finally {
        await rm(staging, { recursive: true, force: true });
      }
      this.materialised.set(key, final);
      return final;
    })();
    this.materialising.set(key, work);
    work.then(
      () => this.materialising.delete(key),
      () => this.materialising.delete(key),
    );
    return work;
  }

  async cacheEntries(): Promise<number> {
    try {
      return (await readdir(this.options.cacheDir)).length;
    } catch {
      return 0;
    }
  }

  async exists(): Promise<boolean> {
    try {
      return (await stat(join(this.options.path, '.git'))).isDirectory();
    } catch {
      return false;
    }
  }
}
