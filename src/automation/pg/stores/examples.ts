// Dataset examples in PostgreSQL: a `dataset_examples` row per (tenant, automation, id), the record
// as json. Every change is one transaction with the reference counts of the blobs the example's
// files name (blob-refs.ts); a changed example is locked (FOR UPDATE) while it is read and
// written, so a read-modify-write on one node never loses another node's.

import { ApiError, notFound } from '../../errors.js';
import type { ImportMode, ImportOutcome, ExampleStore } from '../../datasets/store.js';
import type { ExampleRecord } from '../../datasets/types.js';
import type { BlobStore } from '../../files/blob-store.js';
import type { PgDatabase, Queryable } from '../pool.js';
import { adjustRefs, writeWithRefs } from './blob-refs.js';

/** How many references each blob gets from an example's files. */
function fileRefs(e: ExampleRecord | undefined): Map<string, number> {
  const m = new Map<string, number>();
  if (e)
    for (const folder of ['input', 'expected'] as const)
      for (const ref of Object.values(e.files[folder])) m.set(ref.sha256, (m.get(ref.sha256) ?? 0) + 1);
  return m;
}

const missing = (id: string) => notFound(`example ${JSON.stringify(id)}`, 'exampleId');

export class PgExampleStore implements ExampleStore {
  constructor(
    private readonly db: PgDatabase,
    readonly blobs: BlobStore,
  ) {}

  private write<T>(work: (tx: Queryable, dropped: string[]) => Promise<T>): Promise<T> {
    return writeWithRefs(this.db, this.blobs, work);
  }

  /** Moves the blob references from `before`'s files to `after`'s. */
  private async moveRefs(
    tx: Queryable,
    before: ExampleRecord | undefined,
    after: ExampleRecord | undefined,
    dropped: string[],
  ): Promise<void> {
    const b = fileRefs(before);
    const a = fileRefs(after);
    for (const sha of new Set([...b.keys(), ...a.keys()]))
      await adjustRefs(tx, sha, (a.get(sha) ?? 0) - (b.get(sha) ?? 0), dropped);
  }

  private async store(tx: Queryable, r: ExampleRecord): Promise<void> {
    await tx.query(
      `INSERT INTO dataset_examples (tenant, automation_id, id, name, row_order, record)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (tenant, automation_id, id) DO UPDATE SET name = excluded.name,
         row_order = excluded.row_order, record = excluded.record`,
      [r.tenant, r.automationId, r.id, r.name, r.rowOrder, JSON.stringify(r)],
    );
  }

  private async lock(tx: Queryable, tenant: string, automationId: string, id: string) {
    const { rows } = await tx.query<{ record: ExampleRecord }>(
      'SELECT record FROM dataset_examples WHERE tenant = $1 AND automation_id = $2 AND id = $3 FOR UPDATE',
      [tenant, automationId, id],
    );
    return rows[0]?.record;
  }

  async list(tenant: string, automationId: string): Promise<ExampleRecord[]> {
    const { rows } = await this.db.query<{ record: ExampleRecord }>(
      `SELECT record FROM dataset_examples WHERE tenant = $1 AND automation_id = $2
       ORDER BY row_order NULLS LAST, id`,
      [tenant, automationId],
    );
    return rows.map((r) => r.record);
  }

  async get(tenant: string, automationId: string, id: string): Promise<ExampleRecord | undefined> {
    const { rows } = await this.db.query<{ record: ExampleRecord }>(
      'SELECT record FROM dataset_examples WHERE tenant = $1 AND automation_id = $2 AND id = $3',
      [tenant, automationId, id],
    );
    return rows[0]?.record;
  }

  async find(tenant: string, automationId: string, id: string): Promise<ExampleRecord> {
    const e = await this.get(tenant, automationId, id);
    if (!e) throw missing(id);
    return e;
  }

  async nextRowOrder(tenant: string, automationId: string): Promise<number> {
    const { rows } = await this.db.query<{ next: number }>(
      `SELECT coalesce(max(floor(row_order)), -1) + 1 AS next FROM dataset_examples
       WHERE tenant = $1 AND automation_id = $2`,
      [tenant, automationId],
    );
    return Number(rows[0]?.next ?? 0);
  }

  async put(record: ExampleRecord): Promise<void> {
    await this.write(async (tx, dropped) => {
      const before = await this.lock(tx, record.tenant, record.automationId, record.id);
      await this.moveRefs(tx, before, record, dropped);
      await this.store(tx, record);
    });
  }

  async insert(record: ExampleRecord): Promise<void> {
    const taken = await this.write(async (tx, dropped) => {
      const { rowCount } = await tx.query(
        `INSERT INTO dataset_examples (tenant, automation_id, id, name, row_order, record)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`,
        [record.tenant, record.automationId, record.id, record.name, record.rowOrder, JSON.stringify(record)],
      );
      if ((rowCount ?? 0) === 0) return true;
      await this.moveRefs(tx, undefined, record, dropped);
      return false;
    });
    if (taken)
      throw new ApiError(409, 'conflict', `example ${record.id} already exists`, [
        { field: 'id', message: `example ${record.id} already exists`, code: 'conflict' },
      ]);
  }

  update(
    tenant: string,
    automationId: string,
    id: string,
    change: (current: ExampleRecord) => ExampleRecord,
  ): Promise<ExampleRecord> {
    return this.write(async (tx, dropped) => {
      const current = await this.lock(tx, tenant, automationId, id);
      if (!current) throw missing(id);
      const next = change(current);
      await this.moveRefs(tx, current, next, dropped);
      await this.store(tx, next);
      return next;
    });
  }

  delete(tenant: string, automationId: string, id: string): Promise<ExampleRecord> {
    return this.write(async (tx, dropped) => {
      const { rows } = await tx.query<{ record: ExampleRecord }>(
        'DELETE FROM dataset_examples WHERE tenant = $1 AND automation_id = $2 AND id = $3 RETURNING record',
        [tenant, automationId, id],
      );
      const removed = rows[0]?.record;
      if (!removed) throw missing(id);
      await this.moveRefs(tx, removed, undefined, dropped);
      return removed;
    });
  }

  apply(
    tenant: string,
    automationId: string,
    mode: ImportMode,
    records: readonly ExampleRecord[],
  ): Promise<ImportOutcome> {
    return this.write(async (tx, dropped) => {
      const created: ExampleRecord[] = [];
      const skipped: ExampleRecord[] = [];
      let deleted = 0;
      let filesDeleted = 0;
      // Locks the dataset's rows, so a concurrent import of the same dataset waits for this one.
      const { rows } = await tx.query<{ record: ExampleRecord }>(
        'SELECT record FROM dataset_examples WHERE tenant = $1 AND automation_id = $2 FOR UPDATE',
        [tenant, automationId],
      );
      // An archive names its examples by their folder: the name is what append compares.
      const names = new Set(mode === 'append' ? rows.map((r) => r.record.name) : []);
      const ids = new Set(mode === 'append' ? rows.map((r) => r.record.id) : []);
      if (mode === 'replace') {
        for (const { record } of rows) {
          await this.moveRefs(tx, record, undefined, dropped);
          filesDeleted += Object.keys(record.files.input).length + Object.keys(record.files.expected).length;
          deleted++;
        }
        await tx.query('DELETE FROM dataset_examples WHERE tenant = $1 AND automation_id = $2', [
          tenant,
          automationId,
        ]);
      }
      for (const r of records) {
        if (names.has(r.name) || ids.has(r.id)) {
          skipped.push(r);
          continue;
        }
        await this.moveRefs(tx, undefined, r, dropped);
        await this.store(tx, r);
        ids.add(r.id);
        created.push(r);
      }
      return { created, skipped, deleted, filesDeleted };
    });
  }
}
