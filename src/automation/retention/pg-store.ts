// The retention pass's reads on PostgreSQL, shared by every node. One node passes at a time: the
// pass runs under a session advisory lock taken without waiting (pg/advisory-lock.ts), so a node
// that finds it held skips its pass. A removal re-checks its conditions in the statement that
// removes (a bundle looked up meanwhile stays), as RunStore.removeEnded does for runs.

import type { BlobStore } from '../files/blob-store.js';
import { withTryLock } from '../pg/advisory-lock.js';
import type { PgDatabase } from '../pg/pool.js';
import { TERMINAL } from '../runs/types.js';
import type { BundleCandidate, FileCandidate, RetentionStore, RunCandidate } from './store.js';

/** The advisory lock key of the retention pass (an arbitrary constant: "sluice:automation:retention"). */
export const RETENTION_LOCK_KEY = 7_301_239_547_011_429n;

const BASE_KEY = 'registry/base';

/**
 * A bundle that may go: no stored run pins its commit, it is not the registry base, no release
 * record names it, and no node looked it up since $1 (epoch ms). Every release is kept, not only
 * the current one: a node without a remote that lacks an older release's commit can start a run
 * of it only from its bundle (registry/bundles.ts), and only the node that made the release has
 * it otherwise.
 */
const IDLE_BUNDLE = `s.used_at < to_timestamp($1::double precision / 1000)
  AND s.commit_sha IS DISTINCT FROM (SELECT value #>> '{}' FROM meta WHERE key = '${BASE_KEY}')
  AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.list_fields -> 'git' ->> 'commitSha' = s.commit_sha)
  AND NOT EXISTS (SELECT 1 FROM automation_versions v WHERE v.commit_sha = s.commit_sha)`;

export class PgRetentionStore implements RetentionStore {
  constructor(
    private readonly db: PgDatabase,
    private readonly blobs: BlobStore,
  ) {}

  /**
   * Read from the records' text: json operators fail on a record holding U+0000 anywhere (an
   * example's input may). Every match counts, so a look-alike key inside an example's input can
   * only keep a run longer, never let one go: for experiments, every `"id"` string is kept.
   */
  async neededRuns(): Promise<Set<string>> {
    const { rows } = await this.db.query<{ id: string }>(
      `SELECT (regexp_matches(record::text, '"latestRunId":"([^"\\\\]+)"', 'g'))[1] AS id FROM dataset_examples
       UNION
       SELECT (regexp_matches(record::text, '"id":"([^"\\\\]+)"', 'g'))[1] FROM experiments`,
    );
    return new Set(rows.map((r) => r.id));
  }

  async endedRuns(before: number, keep: ReadonlySet<string>, limit: number): Promise<RunCandidate[]> {
    const { rows } = await this.db.query<{ id: string; tenant: string; completed_at: string }>(
      `SELECT id, tenant, completed_at FROM runs r
       WHERE completed_at < $1 AND status = ANY($2::text[]) AND NOT (id = ANY($3::text[]))
         AND NOT EXISTS (SELECT 1 FROM reviews v WHERE v.run_id = r.id)
       ORDER BY completed_at, id LIMIT $4`,
      [before, [...TERMINAL], [...keep], limit],
    );
    return rows.map((r) => ({ id: r.id, tenant: r.tenant, completedAt: Number(r.completed_at) }));
  }

  async filesBefore(purpose: string, before: number, limit: number): Promise<FileCandidate[]> {
    const { rows } = await this.db.query<{ id: string; tenant: string; size: number | null }>(
      `SELECT id, tenant, (record ->> 'size')::bigint AS size FROM files
       WHERE record ->> 'purpose' = $1 AND created_at < to_timestamp($2::double precision / 1000)
       ORDER BY created_at, id LIMIT $3`,
      [purpose, before, limit],
    );
    return rows.map((r) => ({ id: r.id, tenant: r.tenant, size: Number(r.size ?? 0) }));
  }

  async idleBundles(before: number, limit: number): Promise<BundleCandidate[]> {
    const { rows } = await this.db.query<{ commit_sha: string; sha256: string }>(
      `SELECT commit_sha, sha256 FROM registry_sources s WHERE ${IDLE_BUNDLE} ORDER BY used_at LIMIT $2`,
      [before, limit],
    );
    return rows.map((r) => ({ commit: r.commit_sha, sha256: r.sha256 }));
  }

  async removeBundle(commit: string, before: number): Promise<number | undefined> {
    const sha256 = await this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ sha256: string }>(
        `DELETE FROM registry_sources s WHERE ${IDLE_BUNDLE} AND s.commit_sha = $2 RETURNING sha256`,
        [before, commit],
      );
      const gone = rows[0]?.sha256;
      if (gone !== undefined)
        await tx.query('DELETE FROM blob_holds WHERE holder = $1', [`registry:${commit}`]);
      return gone;
    });
    return sha256 === undefined ? undefined : this.collectBlobs([sha256]);
  }

  async collectBlobs(sha256s: readonly string[]): Promise<number> {
    if (sha256s.length === 0) return 0;
    const { rows } = await this.db.query<{ sha256: string; size: string }>(
      `SELECT b.sha256, b.size FROM blobs b WHERE b.sha256 = ANY($1::text[])
         AND NOT EXISTS (SELECT 1 FROM blob_refs f WHERE f.sha256 = b.sha256)
         AND NOT EXISTS (SELECT 1 FROM blob_holds h WHERE h.sha256 = b.sha256)`,
      [[...new Set(sha256s)]],
    );
    let bytes = 0;
    for (const row of rows) {
      await this.blobs.delete(row.sha256);
      bytes += Number(row.size);
    }
    return bytes;
  }

  exclusive(work: () => Promise<void>): Promise<boolean> {
    return withTryLock(this.db, RETENTION_LOCK_KEY, work, 'sluice-retention');
  }
}
