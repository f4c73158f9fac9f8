// Reviews stored by earlier versions lack the fields the SDK's RunReview requires (a review id,
// reviewedAt, closedNote, and ids, labels, notes and times on corrections). They are completed on
// read, deterministically from what the record holds, so the same old review always shows the
// same ids; the next save writes the completed record back.

import { createHash } from 'node:crypto';
import type { ReviewRecord, StoredCorrection } from './types.js';

const stableHex = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

type Partial<T> = { [K in keyof T]?: T[K] | undefined };

export function upgradeReview(stored: ReviewRecord): ReviewRecord {
  const r = stored as Partial<ReviewRecord> & ReviewRecord;
  if (
    typeof r.id === 'string' &&
    typeof r.reviewedAt === 'number' &&
    r.closedNote !== undefined &&
    r.corrections.every((c) => typeof c.id === 'string' && typeof c.createdAt === 'number')
  )
    return stored;
  const updatedAt = typeof r.updatedAt === 'number' ? r.updatedAt : r.createdAt;
  return {
    ...r,
    id: typeof r.id === 'string' ? r.id : `rev_${stableHex(`review:${r.runId}`)}`,
    reviewedAt: typeof r.reviewedAt === 'number' ? r.reviewedAt : updatedAt,
    closedNote: r.closedNote ?? null,
    corrections: (r.corrections ?? []).map((c: Partial<StoredCorrection> & StoredCorrection, i) => ({
      ...c,
      id: typeof c.id === 'string' ? c.id : `corr_${stableHex(`correction:${r.runId}:${i}`)}`,
      label: c.label ?? null,
      note: c.note ?? '',
      createdAt: typeof c.createdAt === 'number' ? c.createdAt : r.createdAt,
      updatedAt: typeof c.updatedAt === 'number' ? c.updatedAt : updatedAt,
    })),
    expectedFiles: r.expectedFiles ?? [],
  };
}
