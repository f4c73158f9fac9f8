// The registry's records in PostgreSQL: automations, their aliases and versions (replaced
// together in one transaction), and the service's shared secrets in `meta`. Not tenant-scoped:
// the registry is the service's. Reads by key go through the node's registry cache (when it
// is given one: registry-cache.ts), and every write notifies REGISTRY_CHANNEL in its transaction.

import type { AutomationStore } from '../../registry/store.js';
import { versionSortKey } from '../../registry/store.js';
import type { AutomationRecord, VersionRecord } from '../../registry/service.js';
import { KeyedReads } from '../keyed-reads.js';
import type { PgDatabase } from '../pool.js';
import { REGISTRY_CHANNEL, RegistryCache } from '../registry-cache.js';
import { validTime } from './experiments.js';

/** Secrets live in `meta` under this prefix, base64 in a jsonb string. */
const secretKey = (name: string) => `secret/${name}`;

export class PgAutomationStore implements AutomationStore {
  // Every run start and every run execution reads these: concurrent reads share statements.
  private readonly records: KeyedReads<AutomationRecord>;
  private readonly aliases: KeyedReads<string>;
  private readonly versionRecords: KeyedReads<VersionRecord>;

  /**
   * `cache` is the node's registry cache, trusted only while its listening connection hears
   * REGISTRY_CHANNEL (backend.ts wires it); without one every read goes to the database.
   */
  constructor(
    private readonly db: PgDatabase,
    private readonly cache: RegistryCache = new RegistryCache(),
  ) {
    this.records = new KeyedReads(
      db,
      'SELECT id AS k, record AS v FROM automations WHERE id = ANY($1::text[])',
    );
    this.aliases = new KeyedReads(
      db,
      'SELECT alias AS k, automation_id AS v FROM automation_aliases WHERE alias = ANY($1::text[])',
    );
    this.versionRecords = new KeyedReads(
      db,
      `SELECT automation_id AS k, record AS v FROM automation_versions WHERE automation_id = ANY($1::text[])
       ORDER BY automation_id, sort_key DESC`,
    );
  }

  get(id: string): Promise<AutomationRecord | undefined> {
    return this.cache.read(`a:${id}`, () => this.records.one(id));
  }

  idOfAlias(alias: string): Promise<string | undefined> {
    return this.cache.read(`l:${alias}`, () => this.aliases.one(alias));
  }

  async list(): Promise<AutomationRecord[]> {
    const { rows } = await this.db.query<{ record: AutomationRecord }>('SELECT record FROM automations');
    return rows.map((r) => r.record);
  }

  versions(automationId: string): Promise<VersionRecord[]> {
    return this.cache.read(`v:${automationId}`, () => this.versionRecords.all(automationId));
  }

  async save(record: AutomationRecord, alias: string, versions: readonly VersionRecord[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO automations (id, type, slug, status, updated_at, record) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET type = excluded.type, slug = excluded.slug,
           status = excluded.status, updated_at = excluded.updated_at, record = excluded.record`,
        [
          record.id,
          record.type,
          record.slug,
          record.status,
          validTime(record.updatedAt),
          JSON.stringify(record),
        ],
      );
      await tx.query(
        `INSERT INTO automation_aliases (alias, automation_id) VALUES ($1, $2)
         ON CONFLICT (alias) DO UPDATE SET automation_id = excluded.automation_id`,
        [alias, record.id],
      );
      await tx.query('DELETE FROM automation_versions WHERE automation_id = $1', [record.id]);
      // The same sort key twice: the later version wins, as LMDB's put does.
      const last = [...new Map(versions.map((v) => [versionSortKey(v.version), v])).values()];
      if (last.length > 0)
        await tx.query(
          `INSERT INTO automation_versions (automation_id, sort_key, version, commit_sha, record)
           SELECT $1, * FROM unnest($2::text[], $3::text[], $4::text[], $5::json[])`,
          [
            record.id,
            last.map((v) => versionSortKey(v.version)),
            last.map((v) => v.version),
            last.map((v) => v.commit),
            last.map((v) => JSON.stringify(v)),
          ],
        );
      // Sent at commit, to every node's listening connection (this one's too).
      await tx.query('SELECT pg_notify($1, $2)', [REGISTRY_CHANNEL, record.id]);
    });
    // This node's next read sees the write without waiting for its own notification.
    this.cache.drop();
  }

  async secret(name: string, make: () => Buffer): Promise<Buffer> {
    const key = secretKey(name);
    const read = async () => {
      const { rows } = await this.db.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [key]);
      return rows[0] && Buffer.from(rows[0].value, 'base64');
    };
    const stored = await read();
    if (stored) return stored;
    // Of racing callers (on any node) only the first insert is kept; everyone reads that one.
    await this.db.query(
      'INSERT INTO meta (key, value) VALUES ($1, to_jsonb($2::text)) ON CONFLICT DO NOTHING',
      [key, make().toString('base64')],
    );
    return (await read())!;
  }
}
