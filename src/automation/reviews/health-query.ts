// Which runs a review health report counts: the caller's tenant's runs of one automation created
// in [from, to] that pass the run-list filters of the query, read page by page through the run list.

import type { Static } from '@sinclair/typebox';
import { invalid } from '../errors.js';
import { parseEndTime, parseTime } from '../http/time.js';
import type { AutomationRegistry } from '../registry/service.js';
import type { RunListQuery } from '../runs/list.js';
import type { RunService } from '../runs/service.js';
import type { RunRecord } from '../runs/types.js';
import type { RunReviewHealthResponse } from '../wire/reviews.js';
import { MAX_BUCKETS, bucketStart, nextBucket, reviewHealth } from './health.js';
import type { HealthQuery } from './schemas.js';

export interface HealthDeps {
  registry: Pick<AutomationRegistry, 'find'>;
  runs: Pick<RunService, 'list'>;
}

/** Runs read per list page while a report collects its runs. */
const PAGE = 1000;

const DAY_MS = 86_400_000;

const csv = (s: string | undefined) =>
  s === undefined
    ? undefined
    : s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);

export async function reviewHealthOf(
  d: HealthDeps,
  tenant: string,
  automationRef: string,
  p: Static<typeof HealthQuery>,
): Promise<RunReviewHealthResponse> {
  const automation = await d.registry.find(automationRef.split('@')[0]!);
  const now = Date.now();
  const time = (name: keyof typeof p, end: boolean) => {
    const text = p[name] as string | undefined;
    if (text === undefined) return undefined;
    const ms = end ? parseEndTime(text, now) : parseTime(text, now);
    if (ms === undefined) throw invalid(name, `cannot read ${JSON.stringify(text)} as a time`);
    return ms;
  };
  const from = time('from', false) ?? now - 30 * DAY_MS;
  const to = time('to', true) ?? now;
  if (from > to) throw invalid('from', 'from is after to');
  const bucket = p.bucket ?? 'day';
  let n = 0;
  for (let s = bucketStart(from, bucket); s <= to && n <= MAX_BUCKETS; s = nextBucket(s, bucket)) n++;
  if (n > MAX_BUCKETS)
    throw invalid(
      'bucket',
      `the range holds more than ${MAX_BUCKETS} ${bucket} buckets; use a coarser bucket`,
    );

  const lq: RunListQuery = {
    tenant,
    sources: [automation.id],
    limit: PAGE,
    sort: 'createdAt',
    order: 'asc',
    createdFrom: from,
    createdTo: to,
  };
  const types = csv(p.type);
  if (types) lq.types = types;
  const statuses = csv(p.status);
  if (statuses) lq.statuses = statuses;
  const triggers = csv(p.trigger);
  if (triggers) lq.triggers = triggers;
  // `__system__` is the SDK's name for system-triggered runs; `system` is accepted too.
  const triggeredBy = csv(p.triggeredBy)?.map((u) => (u === 'system' ? '__system__' : u));
  if (triggeredBy) lq.triggeredBy = triggeredBy;
  if (p.sourceRef !== undefined) lq.sourceRef = p.sourceRef;
  const batches = csv(p.batchId);
  if (batches) lq.batchIds = batches;
  const exampleIds = csv(p.exampleId);
  if (exampleIds) lq.exampleIds = exampleIds;
  if (p.exampleIdContains !== undefined) lq.exampleIdContains = p.exampleIdContains;
  const ca = time('completedAfter', false);
  if (ca !== undefined) lq.completedFrom = ca;
  const cb = time('completedBefore', true);
  if (cb !== undefined) lq.completedTo = cb;
  if (p.experiments === false) lq.experiments = false;

  const runs: RunRecord[] = [];
  for (;;) {
    const page = await d.runs.list(lq);
    runs.push(...page.runs);
    if (page.nextCursor === null) break;
    lq.cursor = page.nextCursor;
  }
  return reviewHealth(runs, {
    from,
    to,
    bucket,
    rollingWindow: p.rollingWindow ?? 100,
    minRollingReviews: p.minRollingReviews ?? 1,
  });
}
