// Reviews in LMDB (named database `reviews`, key: run id). The summary that run listings filter
// on (verdict, status, note, dates, corrections) is written onto the run record in the same
// transaction, so `GET /runs?has_review=…` and the review never disagree.

import type { Database } from 'lmdb';
import type { AutomationDb } from '../db.js';
import type { RunRecord, RunReviewSummary } from '../runs/types.js';
import type { ReviewRecord } from './types.js';

export function reviewSummary(r: ReviewRecord): RunReviewSummary {
  return {
    status: r.status,
    verdict: r.verdict,
    note: r.note,
    hasCorrections: r.corrections.length > 0 || r.correctedOutput !== undefined || r.expectedFiles.length > 0,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    closedAt: r.closedAt,
  };
}

export class ReviewStore {
  private readonly table: Database<ReviewRecord, string>;

  constructor(private readonly db: AutomationDb) {
    this.table = db.root.openDB<ReviewRecord, string>({ name: 'reviews' });
  }

  get(runId: string): ReviewRecord | undefined {
    return this.table.get(runId);
  }

  /** Stores (or with `null` removes) the review and the run's summary of it together. */
  async save(run: RunRecord, review: ReviewRecord | null): Promise<void> {
    const next: RunRecord = { ...run, review: review ? reviewSummary(review) : null };
    await this.db.root.transaction(() => {
      // No index key depends on the review, so the record is replaced in place.
      this.db.runs.putSync(run.id, next);
      if (review) this.table.putSync(run.id, review);
      else this.table.removeSync(run.id);
      if (review?.closedAt != null) {
        const last = this.db.meta.get('last-review-closed-at') as number | undefined;
        if (last === undefined || review.closedAt > last)
          this.db.meta.putSync('last-review-closed-at', review.closedAt);
      }
    });
  }
}
