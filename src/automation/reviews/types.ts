// Human reviews of runs as stored (separate from evaluator scores). Times are epoch milliseconds;
// the wire view (view.ts) turns them into ISO strings.

export type Verdict = 'correct' | 'incorrect' | null;
export type ReviewStatus = 'open' | 'closed' | 'wont_fix';

export interface StoredCorrection {
  /** `corr_<hex>`, or the id the client sent. */
  id: string;
  kind: 'field' | 'file';
  path: string;
  label: string | null;
  /** undefined = not given (null is a legitimate JSON value). */
  originalValue?: unknown;
  correctedValue?: unknown;
  note: string;
  correctedArtifactPath?: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface ExpectedFile {
  name: string;
  size: number;
  contentType: string;
  /** `upload`, or `output:<name>` when copied from a run output file. */
  source: string;
  /** The blob holding the bytes when nodes share a blob store (docs/automation.md "Several nodes"). */
  sha256?: string;
}

export interface ReviewRecord {
  /** `rev_<hex>`; kept while the review exists, new after a clear. */
  id: string;
  runId: string;
  automationId: string;
  verdict: Verdict;
  status: ReviewStatus;
  /** '' when none. */
  note: string;
  /** undefined = no corrected output (null is a legitimate corrected value). */
  correctedOutput?: unknown;
  corrections: StoredCorrection[];
  /** User id of the last reviewer. */
  reviewedBy: string;
  /** Time of the last PUT. */
  reviewedAt: number;
  closedBy: string | null;
  closedAt: number | null;
  /** The note as it was when the review left `open`. */
  closedNote: string | null;
  createdAt: number;
  updatedAt: number;
  expectedFiles: ExpectedFile[];
}
