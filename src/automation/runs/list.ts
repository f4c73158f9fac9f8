// Run listing: one index range scan in (sort key, id) order with the remaining filters applied
// to each record. The cursor is the last (sort key, id) returned, so a page never repeats or
// skips a run while others are being added. A scan stops after `scanLimit` index entries even
// if the page is not full (the cursor then points where it stopped), which bounds the cost of
// a page with rare matches; the reference allows short pages (sample_rate already makes them).

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

export function matches(run: RunRecord, q: RunListQuery): boolean {
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

function single(values: string[] | undefined): string | undefined {
  return values && values.length === 1 ? values[0] : undefined;
}

/** The most selective single-valued filter that has an index; `all` otherwise. */
function chooseIndex(q: RunListQuery): [string, string] {
  if (q.sort === 'completedAt') return ['done', ''];
  const candidates: [string, string | undefined][] = [
    ['batch', single(q.batchIds)],
    ['example', single(q.exampleIds)],
    ['source', single(q.sources)],
    ['by', single(q.triggeredBy)],
    ['status', single(q.statuses)],
    ['trigger', single(q.triggers)],
    ['type', single(q.types)],
  ];
  for (const [name, value] of candidates) if (value !== undefined) return [name, value];
  return ['all', ''];
}

export interface RunListPage {
  runs: RunRecord[];
  nextCursor: string | null;
}

const MAX_KEY = '\uffff';

export function listRuns(
  store: RunStore,
  q: RunListQuery,
  scanLimit: number,
  overlay: (run: RunRecord) => RunRecord = (r) => r,
): RunListPage {
  const cursor = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined;
  const sortOf = (r: RunRecord) => (q.sort === 'completedAt' ? (r.completedAt ?? 0) : r.createdAt);
  const desc = q.order === 'desc';
  let toSkip = cursor ? 0 : (q.offset ?? 0);
  const page: RunRecord[] = [];

  if (q.ids) {
    const found = q.ids
      .map((id) => store.get(id))
      .filter((r): r is RunRecord => r !== undefined)
      .map(overlay)
      .filter((r) => matches(r, q) && (q.sort !== 'completedAt' || r.completedAt !== null));
    found.sort(
      (a, b) => (sortOf(a) - sortOf(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)) * (desc ? -1 : 1),
    );
    const after = cursor
      ? found.filter((r) => {
          const cmp = sortOf(r) - cursor.sortKey || (r.id < cursor.id ? -1 : r.id > cursor.id ? 1 : 0);
          return desc ? cmp < 0 : cmp > 0;
        })
      : found.slice(toSkip);
    const rows = after.slice(0, q.limit);
    const last = rows[rows.length - 1];
    return {
      runs: rows,
      nextCursor: after.length > q.limit && last ? encodeCursor(sortOf(last), last.id) : null,
    };
  }

  const [name, value] = chooseIndex(q);
  const t = q.tenant;
  const lo = (q.sort === 'completedAt' ? q.completedFrom : q.createdFrom) ?? 0;
  const hi = (q.sort === 'completedAt' ? q.completedTo : q.createdTo) ?? Number.MAX_SAFE_INTEGER;
  const range = desc
    ? {
        start: cursor ? [name, value, t, cursor.sortKey, cursor.id] : [name, value, t, hi, MAX_KEY],
        end: [name, value, t, lo, ''],
        reverse: true,
      }
    : {
        start: cursor ? [name, value, t, cursor.sortKey, cursor.id] : [name, value, t, lo, ''],
        end: [name, value, t, hi, MAX_KEY],
        reverse: false,
      };

  let scanned = 0;
  let lastKey: (string | number)[] | undefined;
  let full = false;
  for (const { key, value: rank } of store.db.runIndex.getRange(range)) {
    if (cursor && key[3] === cursor.sortKey && key[4] === cursor.id) continue;
    if (full) {
      // One more index entry exists past the page, so a next page may exist.
      const last = page[page.length - 1]!;
      return { runs: page, nextCursor: encodeCursor(sortOf(last), last.id) };
    }
    lastKey = key;
    scanned++;
    const sampledOut = q.sampleRate !== undefined && typeof rank === 'number' && !(rank < q.sampleRate);
    const stored = sampledOut ? undefined : store.get(String(key[4]));
    if (stored) {
      const run = overlay(stored);
      if (matches(run, q)) {
        if (toSkip > 0) toSkip--;
        else {
          page.push(run);
          if (page.length >= q.limit) full = true;
        }
      }
    }
    if (!full && scanned >= scanLimit) {
      return { runs: page, nextCursor: encodeCursor(Number(lastKey[3]), String(lastKey[4])) };
    }
  }
  return { runs: page, nextCursor: null };
}
