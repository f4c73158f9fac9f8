// Where reviews live. Callers depend on the ReviewStore interface; LmdbReviewStore keeps them in
// LMDB (named database `reviews`, key [tenant, runId]; a review belongs to its run's tenant).
// The summary that run listings filter on and show (verdict, status, note, correction count,
// dates) is written onto the run record in the same transaction, so `GET /runs?has_review=…` and
// the review never disagree. The time of the latest closed review (for `since_last_closed`) is
// kept per tenant, so one tenant's reviewing never moves another tenant's listing.

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import type { RunRecord, RunReviewSummary } from '../runs/types.js';
import type { ReviewRecord } from './types.js';
import { upgradeReview } from './upgrade.js';

export interface ReviewStore {
  /** The review of a run the caller already owns (its tenant is the run's). */
  get(run: Pick<RunRecord, 'tenant' | 'id'>): Promise<ReviewRecord | undefined>;
  /**
   * Stores (or with `null` removes) the review and the run's summary of it together: the run
   * record as given, with `review` set from it, replaces the stored one.
   */
  save(run: RunRecord, review: ReviewRecord | null): Promise<void>;
  /** The latest `closedAt` of the tenant's reviews as saved (never moves back); undefined when none. */
  lastClosedAt(tenant: string): Promise<number | undefined>;
}

export function reviewSummary(r: ReviewRecord): RunReviewSummary {
  return {
    status: r.status,
    verdict: r.verdict,
    // RunReviewSummary.hasNote is a non-empty note.
    note: r.note,
    hasCorrections: r.corrections.length > 0 || r.correctedOutput !== undefined || r.expectedFiles.length > 0,
    correctionCount: r.corrections.length,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    closedAt: r.closedAt,
  };
}

/** The meta key holding a tenant's latest review close time. */
const lastClosedKey = (tenant: string) => `last-review-closed-at/${tenant}`;

export class LmdbReviewStore implements ReviewStore {
  private readonly table: Database<ReviewRecord, [string, string]>;

  constructor(private readonly db: AutomationDb) {
    this.table = db.root.openDB<ReviewRecord, [string, string]>({ name: 'reviews' });
  }

  async get(run: Pick<RunRecord, 'tenant' | 'id'>): Promise<ReviewRecord | undefined> {
    const stored = this.table.get([run.tenant, run.id]);
    return stored && upgradeReview(stored);
  }

  async lastClosedAt(tenant: string): Promise<number | undefined> {
    return this.db.meta.get(lastClosedKey(tenant)) as number | undefined;
  }

  async save(run: RunRecord, review: ReviewRecord | null): Promise<void> {
    const next: RunRecord = { ...run, review: review ? reviewSummary(review) : null };
    await this.db.root.transaction(() => {
      // No index key depends on the review, so the record is replaced in place.
      this.db.runs.putSync(run.id, next);
      if (review) this.table.putSync([run.tenant, run.id], review);
      else this.table.removeSync([run.tenant, run.id]);
      if (review?.closedAt != null) {
        const key = lastClosedKey(run.tenant);
        const last = this.db.meta.get(key) as number | undefined;
        if (last === undefined || review.closedAt > last) this.db.meta.putSync(key, review.closedAt);
      }
    });
  }
}
