// The query of GET /runs (the SDK's names, see schemas.ts) as a RunListQuery for list.ts: comma
// lists split, times read (http/time.ts), aliases of `source` resolved to automation ids.

import { invalid } from '../errors.js';
import { parseEndTime, parseTime } from '../http/time.js';
import type { RunListQuery } from './list.js';
import type { RunListParams } from './schemas.js';
import { SYSTEM_USER } from './view.js';

export interface ListQueryContext {
  tenant: string;
  defaultLimit: number;
  maxLimit: number;
  /** An automation id for a `source` item (an id, `workflows.<slug or id>` …); the item when unknown. */
  sourceId(source: string): Promise<string>;
  /** Time of the tenant's latest closed review, for sinceLastClosed. */
  lastReviewClosedAt(tenant: string): Promise<number | undefined>;
}

const csv = (v: string | undefined) =>
  v === undefined
    ? undefined
    : v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '');

function time(field: string, value: string | undefined, end = false): number | undefined {
  if (value === undefined) return undefined;
  const ms = end ? parseEndTime(value) : parseTime(value);
  if (ms === undefined)
    throw invalid(
      field,
      `${field} must be an ISO date or time, epoch milliseconds or a relative time such as -7d`,
    );
  return ms;
}

const defined = (v: (number | undefined)[]) => v.filter((x): x is number => x !== undefined);
const maxOf = (...v: (number | undefined)[]) => (defined(v).length ? Math.max(...defined(v)) : undefined);
const minOf = (...v: (number | undefined)[]) => (defined(v).length ? Math.min(...defined(v)) : undefined);

export async function toListQuery(p: RunListParams, ctx: ListQueryContext): Promise<RunListQuery> {
  const q: RunListQuery = {
    tenant: ctx.tenant,
    limit: Math.min(p.limit ?? ctx.defaultLimit, ctx.maxLimit),
    sort: p.sort === 'completed_at' || p.sort === 'completedAt' ? 'completedAt' : 'createdAt',
    order: p.order === 'asc' ? 'asc' : 'desc',
  };
  const set = <K extends keyof RunListQuery>(key: K, value: RunListQuery[K] | undefined) => {
    if (value !== undefined) q[key] = value;
  };
  set('types', csv(p.type));
  const sources = csv(p.source);
  if (sources) set('sources', await Promise.all(sources.map((s) => ctx.sourceId(s))));
  set('statuses', csv(p.status));
  set('triggers', csv(p.trigger));
  set(
    'triggeredBy',
    csv(p.triggeredBy)?.map((b) => (b === 'system' ? SYSTEM_USER : b)),
  );
  set('sourceRef', p.sourceRef);
  set('batchIds', csv(p.batchId));
  set('exampleIds', csv(p.exampleId));
  set('exampleIdContains', p.exampleIdContains);
  set('createdFrom', maxOf(time('from', p.from), time('createdAfter', p.createdAfter)));
  set('createdTo', minOf(time('to', p.to, true), time('createdBefore', p.createdBefore, true)));
  set('completedFrom', time('completedAfter', p.completedAfter));
  set('completedTo', time('completedBefore', p.completedBefore, true));
  set('cursor', p.cursor);
  set('offset', p.offset);
  set('ids', csv(p.ids));
  set('experiments', p.experiments);
  set('reviewStatuses', csv(p.reviewStatus));
  set('reviewVerdicts', csv(p.reviewVerdict));
  if (p.hasReview === true && p.noReview === true)
    throw invalid('noReview', 'hasReview and noReview cannot both be true');
  if (p.hasReview !== undefined) q.hasReview = p.hasReview;
  else if (p.noReview === true) q.hasReview = false;
  set('hasCorrections', p.hasCorrections);
  set('reviewNoteContains', p.reviewNoteContains);
  if (p.search !== undefined && p.search.trim() !== '') q.search = p.search.trim();
  const pair = (a: keyof RunListParams, b: keyof RunListParams) => {
    const lo = time(a, p[a] as string | undefined);
    const hi = time(b, p[b] as string | undefined, true);
    return lo === undefined && hi === undefined
      ? undefined
      : ([lo, hi] as [number | undefined, number | undefined]);
  };
  set('reviewCreated', pair('reviewCreatedAfter', 'reviewCreatedBefore'));
  set('reviewUpdated', pair('reviewUpdatedAfter', 'reviewUpdatedBefore'));
  set('reviewClosed', pair('reviewClosedAfter', 'reviewClosedBefore'));
  if (p.sinceLastClosed === true) set('createdAfterExclusive', await ctx.lastReviewClosedAt(ctx.tenant));
  set('sampleRate', p.sampleRate);
  return q;
}
