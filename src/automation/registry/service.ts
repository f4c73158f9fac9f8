// The automation registry: records synced from the git repository's latest releases, looked up
// by id or typed alias, plus version resolution for runs. Sync is the only writer.

import { createHash } from 'node:crypto';
import type { AutomationStore } from './store.js';
import { invalid, notFound, ApiError } from '../errors.js';
import {
  ManifestError,
  parseManifest,
  type AutomationType,
  type Manifest,
  type Triggers,
} from './manifest.js';
import { GitError } from './git.js';
import { CommitUnavailableError } from './bundles.js';
import { compareSemver, SEMVER } from './semver.js';
import {
  packageName,
  packagePath,
  PACKAGE_SEGMENT,
  RefNotFoundError,
  type OpenedAs,
  type RegistryRepository,
  type ResolvedRef,
} from './repository.js';

export interface AutomationRecord {
  id: string;
  type: AutomationType;
  slug: string;
  name: string;
  description: string;
  status: 'active' | 'archived';
  version: string;
  tag: string;
  commit: string;
  versionId: string;
  triggers: Triggers;
  inputSchema: Record<string, unknown> | null;
  outputSchema: Record<string, unknown> | null;
  model: string | null;
  createdAt: string;
  updatedAt: string;
  /**
   * Who last synced the record with a key: runs a trigger starts (email, schedules) belong to
   * this tenant (docs/automation.md "Triggers"). Absent when only the start-up sync of the
   * built-in packages wrote it: such an automation takes no triggered runs.
   */
  syncedBy?: { tenant: string; user: string };
}

export interface VersionRecord {
  id: string;
  automationId: string;
  version: string;
  sourceRef: string;
  commit: string;
  createdAt: string;
}

export interface SyncResult {
  automation: {
    id: string;
    type: AutomationType;
    slug: string;
    status: 'active' | 'archived';
    updatedAt: string;
  };
  release: { version: string; tag: string; commit: string };
  warnings: string[];
  changed: boolean;
  /** The release the records named before this sync; undefined for a first sync. */
  previous: { version: string; commit: string } | undefined;
  /** Release versions the records did not list before (all of them on a first sync). */
  newVersions: string[];
}

export interface Target {
  type: AutomationType;
  slug: string;
  version: string | undefined;
}

const hashId = (prefix: string, text: string) =>
  prefix + createHash('sha256').update(text).digest('hex').slice(0, 20);

/**
 * The id a newly synced automation gets: `wf_` for workflows (the product SDK's examples show
 * workflow ids such as `wf_1`), `agt_` for agents. An automation synced before keeps the id it
 * has (see sync), so runs, datasets and experiments that name it stay valid.
 */
export function automationIdFor(type: AutomationType, slug: string): string {
  return hashId(type === 'workflow' ? 'wf_' : 'agt_', `${type}:${slug}`);
}

/** `workflows.<id>` / `agents.<id>`: an automation id under its type's alias prefix. */
const TYPED_ID = /^(workflows|agents)\.([A-Za-z0-9_][A-Za-z0-9_-]*)$/;

/** `workflows.<slug>` / `agents.<slug>`, with an optional `@<version>`; null when not alias-shaped. */
export function parseAlias(text: string): Target | null {
  const at = text.indexOf('@');
  const base = at >= 0 ? text.slice(0, at) : text;
  const version = at >= 0 ? text.slice(at + 1) : undefined;
  const m = /^(workflows|agents)\.([^.@/]+)$/.exec(base);
  if (!m || !PACKAGE_SEGMENT.test(m[2]!)) return null;
  return { type: m[1] === 'workflows' ? 'workflow' : 'agent', slug: m[2]!, version };
}

/** A run target: what `POST /runs` and `client.run()` name. */
export interface RunTarget {
  /** From the `workflows.` / `agents.` prefix; undefined for a bare automation id. */
  type: AutomationType | undefined;
  /** A slug or an automation id. */
  name: string;
  version: string | undefined;
}

/**
 * `workflows.<slug or id>`, `agents.<slug or id>` or a bare automation id, each with an optional
 * `@<version>`. The product SDK builds `workflows.<id>` from `client.run({type, id})`, so the part
 * after the prefix may be either; slugs and ids never look alike (ids hold `_`, slugs cannot).
 */
export function parseTarget(text: string): RunTarget {
  const at = text.indexOf('@');
  const base = at >= 0 ? text.slice(0, at) : text;
  const version = at >= 0 ? text.slice(at + 1) : undefined;
  const m = /^(workflows|agents)\.(.+)$/.exec(base);
  if (!m) return { type: undefined, name: base, version };
  return { type: m[1] === 'workflows' ? 'workflow' : 'agent', name: m[2]!, version };
}

/**
 * Who synced a release: the caller's tenant and user (none for the syncs of the registry's
 * first start). Runs its triggers start (schedules, mail) belong to that tenant.
 */
export interface SyncedBy {
  tenant: string;
  user: string;
}

/**
 * What other parts of the service do at a sync (schedules: triggers/cron/registration.ts).
 * `check` runs before the records are written and fails the sync by throwing; `synced` runs
 * after they are.
 */
export interface SyncHook {
  check?(manifest: Manifest, automation: { id: string; slug: string }): Promise<void>;
  synced?(record: AutomationRecord, manifest: Manifest, by: SyncedBy | undefined): Promise<void>;
}

export class AutomationRegistry {
  private readonly manifests = new Map<string, Manifest>();
  private readonly hooks: SyncHook[] = [];

  constructor(
    private readonly store: AutomationStore,
    readonly repo: RegistryRepository,
    private readonly defaultTimeoutMs: number,
  ) {}

  /**
   * Opens the repository; when it was seeded or cloned now, syncs every released package. A
   * repository joined from the cluster's registry base is not synced: the cluster's records may
   * be newer than the base's tags. With a shared database every local release's commit is
   * published (sync does it for what it syncs).
   */
  async init(): Promise<{ created: boolean; opened: OpenedAs; synced: string[] }> {
    const opened = await this.repo.open();
    const synced: string[] = [];
    if (opened === 'seeded' || opened === 'cloned') {
      for (const pkg of await this.repo.releasedPackages()) {
        await this.sync(pkg);
        synced.push(pkg);
      }
    } else if (this.repo.publishes) {
      for (const pkg of await this.repo.releasedPackages())
        for (const r of await this.repo.releases(pkg)) await this.repo.publish(r.commit);
    }
    return { created: opened !== 'existing', opened, synced };
  }

  /**
   * With a shared database (several nodes): makes sure `commit` is there for whichever node
   * runs it. Free once the commit is known to be published.
   */
  publish(commit: string): Promise<void> {
    return this.repo.publish(commit);
  }

  get(id: string): Promise<AutomationRecord | undefined> {
    return this.store.get(id);
  }

  /**
   * By id, typed alias `workflows.<slug>`, or an id under its type's prefix `workflows.<id>` (the
   * product SDK builds that form from `{type, id}` targets); no version. Throws 404.
   */
  async find(idOrAlias: string): Promise<AutomationRecord> {
    const record = await this.lookup(idOrAlias);
    if (!record) throw notFound(`automation ${JSON.stringify(idOrAlias)}`, 'id');
    return record;
  }

  private async lookup(text: string): Promise<AutomationRecord | undefined> {
    const alias = parseAlias(text);
    if (alias) {
      const id = await this.store.idOfAlias(packageName(alias.type, alias.slug));
      if (id) return this.get(id);
    }
    const typed = TYPED_ID.exec(text);
    if (typed) {
      const record = await this.get(typed[2]!);
      return record && `${record.type}s` === typed[1] ? record : undefined;
    }
    return alias ? undefined : this.get(text);
  }

  async list(q: { search?: string; type?: AutomationType; limit: number; offset: number }): Promise<{
    data: AutomationRecord[];
    total: number;
  }> {
    const all: AutomationRecord[] = [];
    const needle = q.search?.toLowerCase();
    for (const a of await this.store.list()) {
      if (q.type && a.type !== q.type) continue;
      if (needle && ![a.slug, a.name, a.description].some((s) => s.toLowerCase().includes(needle))) continue;
      all.push(a);
    }
    all.sort((a, b) => (a.type === b.type ? (a.slug < b.slug ? -1 : 1) : a.type === 'agent' ? -1 : 1));
    return { data: all.slice(q.offset, q.offset + q.limit), total: all.length };
  }

  /** The automation a run target names (its version aside), or undefined; a typed target must match the type. */
  async resolveTarget(target: Pick<RunTarget, 'type' | 'name'>): Promise<AutomationRecord | undefined> {
    if (target.type === undefined) return this.get(target.name);
    if (PACKAGE_SEGMENT.test(target.name)) {
      const id = await this.store.idOfAlias(packageName(target.type, target.name));
      const record = id ? await this.get(id) : undefined;
      if (record) return record;
    }
    const record = await this.get(target.name);
    return record?.type === target.type ? record : undefined;
  }

  /** Newest first. */
  versions(automationId: string): Promise<VersionRecord[]> {
    return this.store.versions(automationId);
  }

  addSyncHook(hook: SyncHook): void {
    this.hooks.push(hook);
  }

  async sync(idOrAlias: string, by?: SyncedBy): Promise<SyncResult> {
    if (idOrAlias.includes('@'))
      throw invalid(
        'id',
        'sync takes an automation without a version; it always uses the latest release',
        'versioned_target',
      );
    const alias = parseAlias(idOrAlias);
    let target: { type: AutomationType; slug: string };
    if (alias) target = alias;
    else {
      const existing = await this.lookup(idOrAlias);
      if (!existing) throw notFound(`automation ${JSON.stringify(idOrAlias)}`, 'id');
      target = existing;
    }
    const pkg = packageName(target.type, target.slug);
    try {
      await this.repo.refresh();
    } catch (err) {
      throw new ApiError(
        502,
        'source_unavailable',
        `registry remote cannot be fetched: ${(err as Error).message}`,
      );
    }
    let releases;
    try {
      releases = await this.repo.releases(pkg);
    } catch (err) {
      throw new ApiError(
        500,
        'source_error',
        `registry repository cannot be read: ${(err as Error).message}`,
      );
    }
    const latest = releases[0];
    if (!latest) throw notFound(`release of ${pkg} (tag ${pkg}@X.Y.Z)`, 'id');
    const manifest = await this.manifestAt(latest.commit, target.type, target.slug);
    const knownId = (await this.store.idOfAlias(pkg)) ?? automationIdFor(target.type, target.slug);
    for (const h of this.hooks) await h.check?.(manifest, { id: knownId, slug: target.slug });
    // Before the records name them: any node may then run any of the package's releases.
    for (const r of releases) await this.repo.publish(r.commit);
    const warnings: string[] = [];
    const id = knownId;
    const previous = await this.get(id);
    // Without a remote each node's tags are its own: a node that never saw the synced release
    // would roll the shared records back to the releases it has.
    if (previous && this.repo.sharedWithoutRemote && compareSemver(previous.version, latest.version) > 0)
      throw new ApiError(
        409,
        'stale_registry',
        `${pkg} ${previous.version} is synced, but this node's registry repository has releases up to ` +
          `${latest.version}: sync through the node whose repository has the release`,
      );
    const now = new Date().toISOString();
    const record: AutomationRecord = {
      id,
      type: target.type,
      slug: target.slug,
      name: manifest.name,
      description: manifest.description,
      status: 'active',
      version: latest.version,
      tag: latest.tag,
      commit: latest.commit,
      versionId: hashId('ver_', `${id}@${latest.version}`),
      triggers: manifest.triggers,
      inputSchema: manifest.inputSchema,
      outputSchema: manifest.outputSchema,
      model: manifest.model,
      createdAt: previous?.createdAt ?? now,
      updatedAt: previous?.updatedAt ?? now,
    };
    const syncedBy = by ? { tenant: by.tenant, user: by.user } : previous?.syncedBy;
    if (syncedBy) record.syncedBy = syncedBy;
    // Who synced is kept, but is not a change of the automation: syncing an unchanged release
    // answers the same and keeps updatedAt, whoever syncs it (docs/automation.md, "Releasing").
    const comparable = (r: AutomationRecord) => JSON.stringify({ ...r, updatedAt: '', syncedBy: undefined });
    const changed = !previous || comparable(previous) !== comparable(record);
    const newOwner = JSON.stringify(previous?.syncedBy) !== JSON.stringify(record.syncedBy);
    if (changed) record.updatedAt = now;
    const versions: VersionRecord[] = releases.map((r) => ({
      id: hashId('ver_', `${id}@${r.version}`),
      automationId: id,
      version: r.version,
      sourceRef: r.tag,
      commit: r.commit,
      createdAt: r.createdAt,
    }));
    const known = new Set((await this.versions(id)).map((v) => `${v.version}:${v.commit}`));
    const versionsChanged =
      versions.some((v) => !known.has(`${v.version}:${v.commit}`)) || known.size !== versions.length;
    if (changed || versionsChanged || newOwner) await this.store.save(record, pkg, versions);
    const result = previous && !changed && !newOwner ? previous : record;
    for (const h of this.hooks) await h.synced?.(result, manifest, by);
    return {
      automation: {
        id,
        type: result.type,
        slug: result.slug,
        status: result.status,
        updatedAt: result.updatedAt,
      },
      release: { version: latest.version, tag: latest.tag, commit: latest.commit },
      warnings,
      changed: changed || versionsChanged,
      previous: previous ? { version: previous.version, commit: previous.commit } : undefined,
      newVersions: versions.filter((v) => !known.has(`${v.version}:${v.commit}`)).map((v) => v.version),
    };
  }

  /** Manifest of the package at a commit (cached: a commit's content never changes). */
  async manifestAt(commit: string, type: AutomationType, slug: string): Promise<Manifest> {
    const key = `${commit}:${type}:${slug}`;
    const cached = this.manifests.get(key);
    if (cached) return cached;
    let file;
    try {
      file = await this.repo.readManifest(commit, packagePath(type, slug));
    } catch (err) {
      if (err instanceof GitError) throw new ApiError(500, 'source_error', err.message);
      if (err instanceof CommitUnavailableError)
        throw new ApiError(404, err.code, err.message, [
          { field: 'version', message: err.message, code: err.code },
        ]);
      throw err;
    }
    if (!file) throw notFound(`manifest of ${packageName(type, slug)} at ${commit.slice(0, 12)}`, 'id');
    let manifest: Manifest;
    try {
      manifest = parseManifest(file.text, file.fileName, type, this.defaultTimeoutMs);
    } catch (err) {
      if (err instanceof ManifestError) {
        throw new ApiError(
          400,
          'invalid_manifest',
          err.message,
          err.issues.map((i) => ({
            field: `manifest.${i.field}`,
            message: i.message,
            code: 'invalid_manifest',
          })),
        );
      }
      throw err;
    }
    this.manifests.set(key, manifest);
    return manifest;
  }

  /**
   * A run's version: `latest` is the synced current release; a release version `X.Y.Z` is the
   * synced version record (so every node sharing the records resolves it to the same commit,
   * whatever tags its own repository has), or else the release tag in git; anything else (a
   * branch, tag or commit) is resolved in this node's git repository.
   */
  async resolveVersion(automation: AutomationRecord, ref: string): Promise<ResolvedRef> {
    if (ref === 'latest' || ref === automation.version) {
      return {
        requestedRef: ref,
        resolvedRef: automation.tag,
        resolvedTag: automation.tag,
        version: automation.version,
        commitSha: automation.commit,
      };
    }
    const synced = SEMVER.test(ref)
      ? (await this.store.versions(automation.id)).find((v) => v.version === ref)
      : undefined;
    if (synced)
      return {
        requestedRef: ref,
        resolvedRef: synced.sourceRef,
        resolvedTag: synced.sourceRef,
        version: synced.version,
        commitSha: synced.commit,
      };
    try {
      return await this.repo.resolve(packageName(automation.type, automation.slug), ref);
    } catch (err) {
      if (err instanceof RefNotFoundError)
        throw notFound(
          `version ${JSON.stringify(ref)} of ${packageName(automation.type, automation.slug)}`,
          'version',
        );
      throw err;
    }
  }
}
