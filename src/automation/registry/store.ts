// Where automation records, their release versions and their typed aliases are kept, plus the
// service's shared secrets. Callers (registry/service.ts, index.ts) depend on the
// AutomationStore interface; every method is async because an implementation may answer from a
// remote database. Automations are not tenant-scoped: the registry is the service's.

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import type { AutomationRecord, VersionRecord } from './service.js';

export interface AutomationStore {
  get(id: string): Promise<AutomationRecord | undefined>;
  /** The automation id behind a typed alias (`workflows.<slug>`), or undefined. */
  idOfAlias(alias: string): Promise<string | undefined>;
  /** Every automation, in no particular order. */
  list(): Promise<AutomationRecord[]>;
  /** The automation's versions, newest first (by versionSortKey); empty when unknown. */
  versions(automationId: string): Promise<VersionRecord[]>;
  /** Replaces the record, points the alias at it and replaces its versions, all together. */
  save(record: AutomationRecord, alias: string, versions: readonly VersionRecord[]): Promise<void>;
  /**
   * The secret stored under `name`; when there is none, `make()`'s value is stored first. Two
   * callers racing on one store get the same secret.
   */
  secret(name: string, make: () => Buffer): Promise<Buffer>;
}

/** Orders release versions numerically segment by segment (1.10.0 after 1.9.0). */
export function versionSortKey(version: string): string {
  return version
    .split('.')
    .map((n) => n.padStart(8, '0'))
    .join('.');
}

export class LmdbAutomationStore implements AutomationStore {
  private readonly meta: Database<unknown, string>;

  constructor(readonly db: AutomationDb) {
    this.meta = db.meta;
  }

  async get(id: string): Promise<AutomationRecord | undefined> {
    return this.db.automations.get(id) as AutomationRecord | undefined;
  }

  async idOfAlias(alias: string): Promise<string | undefined> {
    return this.db.aliases.get(alias);
  }

  async list(): Promise<AutomationRecord[]> {
    const out: AutomationRecord[] = [];
    for (const { value } of this.db.automations.getRange()) out.push(value as AutomationRecord);
    return out;
  }

  async versions(automationId: string): Promise<VersionRecord[]> {
    const out: VersionRecord[] = [];
    for (const { value } of this.db.versions.getRange({
      start: [automationId, ''],
      end: [automationId, '\uffff'],
    })) {
      out.push(value as VersionRecord);
    }
    return out.reverse();
  }

  async save(record: AutomationRecord, alias: string, versions: readonly VersionRecord[]): Promise<void> {
    const id = record.id;
    await this.db.root.transaction(() => {
      this.db.automations.putSync(id, record);
      this.db.aliases.putSync(alias, id);
      for (const { key } of this.db.versions.getRange({ start: [id, ''], end: [id, '\uffff'] }))
        this.db.versions.removeSync(key);
      for (const v of versions) this.db.versions.putSync([id, versionSortKey(v.version)], v);
    });
  }

  async secret(name: string, make: () => Buffer): Promise<Buffer> {
    const stored = this.meta.get(name) as Buffer | Uint8Array | undefined;
    if (stored) return Buffer.from(stored);
    const fresh = make();
    // Checked again inside the write: only the first writer's secret is kept.
    const kept = await this.db.root.transaction(() => {
      const again = this.meta.get(name) as Buffer | Uint8Array | undefined;
      if (again) return again;
      this.meta.putSync(name, fresh);
      return fresh;
    });
    return Buffer.from(kept);
  }
}
