// Where dataset examples are kept. Callers depend on the ExampleStore interface; LmdbExampleStore
// keeps them in LMDB (named database `examples`, key [tenant, automationId, exampleId]): every
// read names the caller's tenant, so another tenant's example is simply absent. File bytes live
// in the shared content-addressed blob store; each reference from an example holds one count in
// `blobRefs`, so a blob is removed only when nothing (file, example) uses it.

import type { Database } from 'lmdb';
import { randomBytes } from 'node:crypto';
import type { AutomationDb } from '../db.js';
import { ApiError, notFound } from '../errors.js';
import type { BlobStore } from '../files/blob-store.js';
import { byDatasetOrder, type ExampleRecord } from './types.js';

export const newExampleId = () => `ex_${randomBytes(9).toString('hex')}`;

export type ImportMode = 'append' | 'replace';

export interface ImportOutcome {
  created: ExampleRecord[];
  /** Append only: records not stored because the dataset already has an example of their name. */
  skipped: ExampleRecord[];
  deleted: number;
  filesDeleted: number;
}

export interface ExampleStore {
  /** A tenant's examples of an automation in dataset order (rowOrder, null last, then id). */
  list(tenant: string, automationId: string): Promise<ExampleRecord[]>;
  /** The tenant's example, or undefined (another tenant's is not found either). */
  get(tenant: string, automationId: string, id: string): Promise<ExampleRecord | undefined>;
  /** As get, or a 404. */
  find(tenant: string, automationId: string, id: string): Promise<ExampleRecord>;
  /** One past the highest rowOrder of the dataset (0 when empty). */
  nextRowOrder(tenant: string, automationId: string): Promise<number>;
  /** Stores a record, replacing one of the same key. */
  put(record: ExampleRecord): Promise<void>;
  /** Stores a new record; a 409 when the id is taken (checked in the same transaction). */
  insert(record: ExampleRecord): Promise<void>;
  /** Read-modify-write in one transaction; `change` returns the new record or throws. */
  update(
    tenant: string,
    automationId: string,
    id: string,
    change: (current: ExampleRecord) => ExampleRecord,
  ): Promise<ExampleRecord>;
  delete(tenant: string, automationId: string, id: string): Promise<ExampleRecord>;
  /**
   * Applies an import in one transaction. `replace` drops every example the tenant has of the
   * automation first; `append` adds only records whose name the dataset does not have yet.
   */
  apply(
    tenant: string,
    automationId: string,
    mode: ImportMode,
    records: readonly ExampleRecord[],
  ): Promise<ImportOutcome>;
}

export class LmdbExampleStore implements ExampleStore {
  readonly table: Database<ExampleRecord, [string, string, string]>;

  constructor(
    readonly db: AutomationDb,
    readonly blobs: BlobStore,
  ) {
    this.table = db.root.openDB<ExampleRecord, [string, string, string]>({ name: 'examples' });
  }

  private range(tenant: string, automationId: string) {
    return this.table.getRange({ start: [tenant, automationId, ''], end: [tenant, automationId, '\uffff'] });
  }

  async list(tenant: string, automationId: string): Promise<ExampleRecord[]> {
    const out: ExampleRecord[] = [];
    for (const { value } of this.range(tenant, automationId)) out.push(value);
    return out.sort(byDatasetOrder);
  }

  async get(tenant: string, automationId: string, id: string): Promise<ExampleRecord | undefined> {
    return this.table.get([tenant, automationId, id]);
  }

  async find(tenant: string, automationId: string, id: string): Promise<ExampleRecord> {
    const e = this.table.get([tenant, automationId, id]);
    if (!e) throw notFound(`example ${JSON.stringify(id)}`, 'exampleId');
    return e;
  }

  async nextRowOrder(tenant: string, automationId: string): Promise<number> {
    let max = -1;
    for (const { value } of this.range(tenant, automationId))
      if (value.rowOrder !== null) max = Math.max(max, Math.floor(value.rowOrder));
    return max + 1;
  }

  /** Inside a transaction: counts go up for refs the new record adds and down for those it drops. */
  private adjustRefs(before: ExampleRecord | undefined, after: ExampleRecord | undefined, dropped: string[]) {
    const count = (e: ExampleRecord | undefined) => {
      const m = new Map<string, number>();
      if (e)
        for (const folder of ['input', 'expected'] as const)
          for (const ref of Object.values(e.files[folder])) m.set(ref.sha256, (m.get(ref.sha256) ?? 0) + 1);
      return m;
    };
    const b = count(before);
    const a = count(after);
    for (const sha of new Set([...b.keys(), ...a.keys()])) {
      const delta = (a.get(sha) ?? 0) - (b.get(sha) ?? 0);
      if (delta === 0) continue;
      const refs = (this.db.blobRefs.get(sha) ?? 0) + delta;
      if (refs <= 0) {
        this.db.blobRefs.removeSync(sha);
        dropped.push(sha);
      } else this.db.blobRefs.putSync(sha, refs);
    }
  }

  private async collect(dropped: string[]): Promise<void> {
    for (const sha of dropped) if (this.db.blobRefs.get(sha) === undefined) await this.blobs.delete(sha);
  }

  async put(record: ExampleRecord): Promise<void> {
    const dropped: string[] = [];
    await this.db.root.transaction(() => {
      const key: [string, string, string] = [record.tenant, record.automationId, record.id];
      const before = this.table.get(key);
      this.adjustRefs(before, record, dropped);
      this.table.putSync(key, record);
    });
    await this.collect(dropped);
  }

  async insert(record: ExampleRecord): Promise<void> {
    const dropped: string[] = [];
    let taken = false;
    await this.db.root.transaction(() => {
      const key: [string, string, string] = [record.tenant, record.automationId, record.id];
      if (this.table.get(key) !== undefined) {
        taken = true;
        return;
      }
      this.adjustRefs(undefined, record, dropped);
      this.table.putSync(key, record);
    });
    if (taken)
      throw new ApiError(409, 'conflict', `example ${record.id} already exists`, [
        { field: 'id', message: `example ${record.id} already exists`, code: 'conflict' },
      ]);
    await this.collect(dropped);
  }

  async update(
    tenant: string,
    automationId: string,
    id: string,
    change: (current: ExampleRecord) => ExampleRecord,
  ): Promise<ExampleRecord> {
    const dropped: string[] = [];
    let next: ExampleRecord | undefined;
    let error: unknown;
    await this.db.root.transaction(() => {
      const current = this.table.get([tenant, automationId, id]);
      if (!current) {
        error = notFound(`example ${JSON.stringify(id)}`, 'exampleId');
        return;
      }
      try {
        next = change(current);
      } catch (err) {
        error = err;
        return;
      }
      this.adjustRefs(current, next, dropped);
      this.table.putSync([tenant, automationId, id], next);
    });
    if (error !== undefined) throw error instanceof Error ? error : new Error('example update failed');
    await this.collect(dropped);
    return next!;
  }

  async delete(tenant: string, automationId: string, id: string): Promise<ExampleRecord> {
    const dropped: string[] = [];
    let removed: ExampleRecord | undefined;
    await this.db.root.transaction(() => {
      removed = this.table.get([tenant, automationId, id]);
      if (!removed) return;
      this.adjustRefs(removed, undefined, dropped);
      this.table.removeSync([tenant, automationId, id]);
    });
    if (!removed) throw notFound(`example ${JSON.stringify(id)}`, 'exampleId');
    await this.collect(dropped);
    return removed;
  }

  async apply(
    tenant: string,
    automationId: string,
    mode: ImportMode,
    records: readonly ExampleRecord[],
  ): Promise<ImportOutcome> {
    const dropped: string[] = [];
    const created: ExampleRecord[] = [];
    const skipped: ExampleRecord[] = [];
    let deleted = 0;
    let filesDeleted = 0;
    await this.db.root.transaction(() => {
      // An archive names its examples by their folder: the name is what append compares.
      const names = new Set<string>();
      if (mode === 'append') for (const { value } of this.range(tenant, automationId)) names.add(value.name);
      if (mode === 'replace') {
        for (const { key, value } of this.range(tenant, automationId)) {
          this.adjustRefs(value, undefined, dropped);
          filesDeleted += Object.keys(value.files.input).length + Object.keys(value.files.expected).length;
          this.table.removeSync(key);
          deleted++;
        }
      }
      for (const r of records) {
        if (names.has(r.name) || this.table.get([tenant, automationId, r.id]) !== undefined) {
          skipped.push(r);
          continue;
        }
        this.adjustRefs(undefined, r, dropped);
        this.table.putSync([tenant, automationId, r.id], r);
        created.push(r);
      }
    });
    await this.collect(dropped);
    return { created, skipped, deleted, filesDeleted };
  }
}
