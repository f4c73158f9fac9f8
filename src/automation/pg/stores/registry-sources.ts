// Registry sources in PostgreSQL (schema 2): `registry_sources` maps a commit to the blob holding
// its git bundle, held as `registry:<commit>` in `blob_holds`; the registry base is a commit in
// `meta`, chosen under an advisory lock so that of nodes starting together one seeds and the
// others start from its bundle (docs/automation.md, "Several nodes (PostgreSQL)").

import type { BlobStore } from '../../files/blob-store.js';
import type { RegistrySourceStore } from '../../registry/source-store.js';
import { Client } from 'pg';
import { mapDatabaseError, type PgDatabase } from '../pool.js';
import { holdBlobs, writeWithRefs } from './blob-refs.js';

/** The advisory lock key of the registry base (an arbitrary constant: "sluice:registry:base"). */
export const REGISTRY_BASE_LOCK_KEY = 7_301_239_547_011_317n;

const BASE_KEY = 'registry/base';

export class PgRegistrySourceStore implements RegistrySourceStore {
  constructor(
    private readonly db: PgDatabase,
    private readonly blobs: BlobStore,
  ) {}

  async get(commit: string): Promise<string | undefined> {
    // A look-up marks the bundle used (at most once a minute): the retention pass keeps a bundle
    // used within its grace, the time a node remembers a commit as published (schema 4).
    const { rows } = await this.db.query<{ sha256: string }>(
      `WITH used AS (
         UPDATE registry_sources SET used_at = now()
         WHERE commit_sha = $1 AND used_at < now() - interval '1 minute')
       SELECT sha256 FROM registry_sources WHERE commit_sha = $1`,
      [commit],
    );
    return rows[0]?.sha256;
  }

  async put(commit: string, sha256: string): Promise<void> {
    await writeWithRefs(this.db, this.blobs, async (tx, dropped) => {
      const { rowCount } = await tx.query(
        'INSERT INTO registry_sources (commit_sha, sha256) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [commit, sha256],
      );
      // Another node recorded the commit first: this copy is collected unless something holds it.
      if ((rowCount ?? 0) === 0) dropped.push(sha256);
      else await holdBlobs(tx, `registry:${commit}`, [sha256]);
    });
  }

  async withBase(work: (base: string | undefined) => Promise<string | undefined>): Promise<void> {
    // The lock is held on a connection of its own, outside the pool, so that `work` (which
    // writes a bundle through the pool) can have the whole pool even when it is one connection.
    // A transaction-level lock: released by the commit, the rollback when work throws, or the
    // server when this node dies holding it.
    const client = new Client({
      connectionString: this.db.options.url,
      keepAlive: true,
      connectionTimeoutMillis: this.db.options.connectTimeoutMs ?? 10_000,
      application_name: 'sluice-registry-base',
    });
    // A connection that breaks fails the query in progress; the event itself is not thrown.
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [REGISTRY_BASE_LOCK_KEY.toString()]);
      const { rows } = await client.query<{ value: string }>('SELECT value FROM meta WHERE key = $1', [
        BASE_KEY,
      ]);
      const base = rows[0]?.value;
      const made = await work(base);
      if (made && base === undefined)
        await client.query(
          'INSERT INTO meta (key, value) VALUES ($1, to_jsonb($2::text)) ON CONFLICT DO NOTHING',
          [BASE_KEY, made],
        );
      await client.query('COMMIT');
    } catch (err) {
      throw mapDatabaseError(err);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
