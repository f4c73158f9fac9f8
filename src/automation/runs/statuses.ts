// The one list of run statuses (the reference's ExecutionStatus; `pending` is "queued"): the
// stored records' type, the wire enum (wire/runs.ts), which statuses are terminal (also the
// client's TERMINAL_STATUSES) or not (the stores' scans for unfinished runs), and which are
// still queued all come from here. `waiting`, `finalizing` and
// `rejected` exist in the enum and are not produced yet.

export const RUN_STATUSES = [
  'created',
  'pending',
  'running',
  'waiting',
  'finalizing',
  'completed',
  'failed',
  'cancelled',
  'rejected',
] as const;

export type RunStatus = (typeof RUN_STATUSES)[number];

export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'rejected'];

export const TERMINAL: ReadonlySet<RunStatus> = new Set(TERMINAL_STATUSES);

/** The statuses of runs waiting to be claimed: created (queued, not yet announced) and pending. */
export const QUEUED_STATUSES: readonly RunStatus[] = ['created', 'pending'];

export const QUEUED: ReadonlySet<RunStatus> = new Set(QUEUED_STATUSES);

/** The statuses of runs that have not ended, in lifecycle order. */
export const UNFINISHED_STATUSES: readonly RunStatus[] = RUN_STATUSES.filter((s) => !TERMINAL.has(s));
