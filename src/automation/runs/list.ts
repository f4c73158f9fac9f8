// Run listing: the query the list route builds (list-query.ts), the opaque cursor, the filter
// every implementation applies (matches) and listRuns, which asks the store for a page and lays
// the service's live records over it. Cursors name the last (sort key, id) returned, so a page
// never repeats or skips a run while others are being added; the reference allows short pages
// (sample_rate already makes them), so a store may bound the work per page.

import { idProblem } from '../http/ids.js';
import type { RunStore } from './store.js';
import type { RunRecord } from './types.js';
import { CodedError } from '../../core/errors.js';

export interface RunListQuery {
  /** Only this tenant's runs: the index scan is limited to them (see store.ts). */
  tenant: string;
  types?: string[];
  sources?: string[];
  statuses?: string[];
  triggers?: string[];
  triggeredBy?: string[];
  sourceRef?: string;
  batchIds?: string[];
  exampleIds?: string[];
  exampleIdContains?: string;
  createdFrom?: number;
  createdTo?: number;
  completedFrom?: number;
  completedTo?: number;
  cursor?: string;
  offset?: number;
  limit: number;
  ids?: string[];
  experiments?: boolean;
  sort: 'createdAt' | 'completedAt';
  order: 'asc' | 'desc';
  reviewStatuses?: string[];
  reviewVerdicts?: string[];
  hasReview?: boolean;
  hasCorrections?: boolean;
  reviewNoteContains?: string;
  /**
   * Any of run id, example id or review note contains it, or a string anywhere in the run's input
   * metadata does, ignoring case (the console's search box).
   */
  search?: string;
  reviewCreated?: [number | undefined, number | undefined];
  reviewUpdated?: [number | undefined, number | undefined];
  reviewClosed?: [number | undefined, number | undefined];
  /** Runs created after this time (the latest closed review, resolved by the caller). */
  createdAfterExclusive?: number;
  sampleRate?: number;
}

export class CursorError extends CodedError {
  constructor(message: string) {
    super('invalid_cursor', message);
  }
}

export function encodeCursor(sortKey: number, id: string): string {
  return Buffer.from(JSON.stringify([sortKey, id])).toString('base64url');
}

export function decodeCursor(cursor: string): { sortKey: number; id: string } {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    // The id goes into an index key: one that is not a run id shape could overflow LMDB's key size.
    if (
      Array.isArray(value) &&
      Number.isFinite(value[0]) &&
      typeof value[1] === 'string' &&
      idProblem(value[1]) === undefined
    )
      return { sortKey: value[0] as number, id: value[1] };
  } catch {
    // fall through
  }
  throw new CursorError('cursor is not one this service returned');
}

const inRange = (v: number | null | undefined, lo?: number, hi?: number) =>
  v !== null && v !== undefined
    ? (lo === undefined || v >= lo) && (hi === undefined || v <= hi)
    : lo === undefined && hi === undefined;

/** A run's input metadata, for `search` (a store reads it from the run's detail). */
export type MetadataOf = (run: RunRecord) => unknown;

export function matches(run: RunRecord, q: RunListQuery, metadataOf?: MetadataOf): boolean {
  if (run.tenant !== q.tenant) return false;
  if (q.types && !q.types.includes(run.type)) return false;
  if (q.sources && !q.sources.includes(run.automationId)) return false;
  if (q.statuses && !q.statuses.includes(run.status)) return false;
  if (q.triggers && !q.triggers.includes(run.trigger.type)) return false;
  if (q.triggeredBy && !q.triggeredBy.includes(run.trigger.by)) return false;
  if (q.sourceRef !== undefined) {
    const r = q.sourceRef;
    const g = run.git;
    if (
      r !== run.version &&
      r !== g.requestedRef &&
      r !== g.resolvedRef &&
      r !== g.resolvedTag &&
      !(r.length >= 7 && g.commitSha.startsWith(r))
    )
      return false;
  }
  if (q.batchIds && !(run.batchId && q.batchIds.includes(run.batchId))) return false;
  if (q.exampleIds && !(run.exampleId && q.exampleIds.includes(run.exampleId))) return false;
  if (q.exampleIdContains !== undefined && !(run.exampleId ?? '').includes(q.exampleIdContains)) return false;
  if (!inRange(run.createdAt, q.createdFrom, q.createdTo)) return false;
  if (
    (q.completedFrom !== undefined || q.completedTo !== undefined) &&
    !inRange(run.completedAt, q.completedFrom, q.completedTo)
  )
    return false;
  if (q.experiments === false && run.batchId) return false;
  if (q.createdAfterExclusive !== undefined && run.createdAt <= q.createdAfterExclusive) return false;
  if (q.sampleRate !== undefined && !(run.sampleRank < q.sampleRate)) return false;
  const review = run.review;
  if (q.hasReview === true && !review) return false;
  if (q.hasReview === false && review) return false;
  if (q.hasCorrections !== undefined && (review?.hasCorrections ?? false) !== q.hasCorrections) return false;
  if (q.reviewStatuses && !(review && q.reviewStatuses.includes(review.status))) return false;
  if (q.reviewVerdicts && !(review && q.reviewVerdicts.includes(review.verdict ?? 'nit'))) return false;
  if (
    q.reviewNoteContains !== undefined &&
    !(review?.note ?? '').toLowerCase().includes(q.reviewNoteContains.toLowerCase())
  )
    return false;
  if (q.search !== undefined && !searchMatches(run, q.search, metadataOf)) return false;
  for (const [range, field] of [
    [q.reviewCreated, 'createdAt'],
    [q.reviewUpdated, 'updatedAt'],
    [q.reviewClosed, 'closedAt'],
  ] as const) {
    if (range && (range[0] !== undefined || range[1] !== undefined)) {
      if (!review || !inRange(review[field], range[0], range[1])) return false;
    }
  }
  return true;
}

/**
 * The fields `search` looks in; the PostgreSQL store's residual reads the same ones. Metadata is
 * read only when the record's own fields do not match (it lives in the run's detail), and only
 * its strings count, at any depth (as PostgreSQL's `$.** ? (@ like_regex …)` sees them).
 */
function searchMatches(run: RunRecord, term: string, metadataOf?: MetadataOf): boolean {
  const t = term.toLowerCase();
  if ([run.id, run.exampleId ?? '', run.review?.note ?? ''].some((field) => field.toLowerCase().includes(t)))
    return true;
  return metadataOf !== undefined && someString(metadataOf(run), (s) => s.toLowerCase().includes(t));
}

/** Whether any string in a JSON value (object values and array items, at any depth) passes. */
function someString(value: unknown, test: (s: string) => boolean): boolean {
  if (typeof value === 'string') return test(value);
  if (Array.isArray(value)) return value.some((v) => someString(v, test));
  if (value !== null && typeof value === 'object')
    return Object.values(value).some((v) => someString(v, test));
  return false;
}

export interface RunListPage {
  runs: RunRecord[];
  nextCursor: string | null;
}

/**
 * A page from the store with live records (runs in flight, whose latest state may not be
 * committed yet) laid over the stored ones; a run whose live state no longer matches is left out.
 */
export async function listRuns(
  store: RunStore,
  q: RunListQuery,
  overlay: (run: RunRecord) => RunRecord = (r) => r,
): Promise<RunListPage> {
  const page = await store.list(q);
  // The store has applied `search`, whose fields a live state does not change (id, example id
  // and input metadata are fixed at the start; a run in flight has no review to change).
  const { search: _applied, ...live } = q;
  return { runs: page.runs.map(overlay).filter((r) => matches(r, live)), nextCursor: page.nextCursor };
}
