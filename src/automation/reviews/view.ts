// Stored review → the SDK's RunReview / RunFile shapes (src/automation/wire/reviews.ts). Also what
// a run's `execution.review` and `execution.expected.files` carry under `expand=execution`.

import type { RunFile } from '../wire/common.js';
import type { RunReview, RunReviewCorrection } from '../wire/reviews.js';
import type { ReviewRecord, StoredCorrection } from './types.js';

const iso = (ms: number) => new Date(ms).toISOString();

function correctionView(c: StoredCorrection): RunReviewCorrection {
  const out: RunReviewCorrection = {
    id: c.id,
    kind: c.kind,
    path: c.path,
    label: c.label,
    note: c.note,
    createdAt: iso(c.createdAt),
    updatedAt: iso(c.updatedAt),
  };
  if (c.originalValue !== undefined) out.originalValue = c.originalValue;
  if (c.correctedValue !== undefined) out.correctedValue = c.correctedValue;
  if (c.correctedArtifactPath !== undefined) out.correctedArtifactPath = c.correctedArtifactPath;
  return out;
}

export function runReviewView(r: ReviewRecord): RunReview {
  const out: RunReview = {
    id: r.id,
    verdict: r.verdict,
    status: r.status,
    note: r.note,
    reviewedBy: r.reviewedBy,
    // Keys carry no e-mail address here; the fields exist for the SDK's shape.
    reviewedByEmail: null,
    reviewedAt: iso(r.reviewedAt),
    closedBy: r.closedBy,
    closedByEmail: null,
    closedAt: r.closedAt === null ? null : iso(r.closedAt),
    closedNote: r.closedNote,
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
    corrections: r.corrections.map(correctionView),
  };
  if (r.correctedOutput !== undefined) out.correctedOutput = r.correctedOutput;
  return out;
}

/** The corrected files of a review, in the order they were added. */
export function expectedFilesView(r: ReviewRecord | undefined): RunFile[] {
  return (r?.expectedFiles ?? []).map((f) => ({ name: f.name }));
}
