// Human reviews of runs as stored (separate from evaluator scores).

export type Verdict = 'correct' | 'incorrect' | null;
export type ReviewStatus = 'open' | 'closed' | 'wont_fix';

export interface Correction {
  kind: 'field' | 'file';
  path: string;
  label?: string;
  originalValue?: unknown;
  correctedValue?: unknown;
  note?: string;
  correctedArtifactPath?: string;
}

export interface ExpectedFile {
  name: string;
  size: number;
  contentType: string;
  /** `upload`, or `output:<name>` when copied from a run output file. */
  source: string;
}

export interface ReviewRecord {
  runId: string;
  automationId: string;
  verdict: Verdict;
  status: ReviewStatus;
  note: string | null;
  /** undefined = no corrected output given (null is a legitimate corrected value). */
  correctedOutput?: unknown;
  corrections: Correction[];
  reviewedBy: string;
  closedBy: string | null;
  createdAt: number;
  updatedAt: number;
  closedAt: number | null;
  expectedFiles: ExpectedFile[];
}
