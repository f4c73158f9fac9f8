// Reviews in PostgreSQL: a `reviews` row per (tenant, run), saved in one transaction with the run
// record that carries its summary (so list filters on reviews and the review never disagree).
// The latest close time per tenant is a `meta` row that only ever moves forward.

import { reviewSummary, type ReviewStore } from '../../reviews/store.js';
import type { ReviewRecord } from '../../reviews/types.js';
import { upgradeReview } from '../../reviews/upgrade.js';
import type { RunRecord } from '../../runs/types.js';
import type { PgDatabase } from '../pool.js';
import { holdBlobs } from './blob-refs.js';
import { runHolder, runRecordWriter } from './run-columns.js';

/** The meta key holding a tenant's latest review close time (the same as LMDB's). */
const lastClosedKey = (tenant: string) => `last-review-closed-at/${tenant}`;

export class PgReviewStore implements ReviewStore {
  constructor(private readonly db: PgDatabase) {}

  async get(run: Pick<RunRecord, 'tenant' | 'id'>): Promise<ReviewRecord | undefined> {
    const { rows } = await this.db.query<{ record: ReviewRecord }>(
      'SELECT record FROM reviews WHERE tenant = $1 AND run_id = $2',
      [run.tenant, run.id],
    );
    const stored = rows[0]?.record;
    return stored && upgradeReview(stored);
  }

  async lastClosedAt(tenant: string): Promise<number | undefined> {
    const { rows } = await this.db.query<{ value: number }>('SELECT value FROM meta WHERE key = $1', [
      lastClosedKey(tenant),
    ]);
    return rows[0]?.value;
  }

  async save(run: RunRecord, review: ReviewRecord | null): Promise<void> {
    const writeRun = runRecordWriter({ ...run, review: review ? reviewSummary(review) : null });
    const reviewJson = review && JSON.stringify(review);
    const closedAt = review?.closedAt;
    await this.db.transaction(async (tx) => {
      await writeRun(tx);
      if (review)
        await tx.query(
          `INSERT INTO reviews (tenant, run_id, automation_id, record) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant, run_id) DO UPDATE SET automation_id = excluded.automation_id,
             record = excluded.record`,
          [run.tenant, run.id, review.automationId, reviewJson],
        );
      else await tx.query('DELETE FROM reviews WHERE tenant = $1 AND run_id = $2', [run.tenant, run.id]);
      // Corrected files shared through the blob store (several nodes) are held by the run.
      const shared = (review?.expectedFiles ?? []).flatMap((f) => (f.sha256 ? [f.sha256] : []));
      await holdBlobs(tx, runHolder(run.id), shared);
      if (closedAt != null)
        await tx.query(
          `INSERT INTO meta (key, value) VALUES ($1, to_jsonb($2::numeric))
           ON CONFLICT (key) DO UPDATE SET value = excluded.value
           WHERE (meta.value #>> '{}')::numeric < (excluded.value #>> '{}')::numeric`,
          [lastClosedKey(run.tenant), closedAt],
        );
    });
  }
}
