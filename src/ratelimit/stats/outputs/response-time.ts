// Response-time recording for the gRPC server: the call count and the sum the table already
// keeps, plus one counter per latency bucket, so the pull endpoint can serve a real histogram.
// Buckets are non-cumulative in the table (one add per call) and made cumulative when rendered.
// The bounds suit a service answering in well under a millisecond, up to a slow store's second.

import { STAT } from '../names.js';
import type { SharedStatsTable } from '../shared-table.js';

/** Upper bounds of the buckets, in microseconds; above the last one a call counts in `le_inf`. */
export const RESPONSE_TIME_BOUNDS_US: readonly number[] = Object.freeze([
  100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000,
]);

/** Table name of a bucket of the timer `base` (e.g. `ratelimit_server.ShouldRateLimit.response_time`). */
export function bucketName(base: string, boundUs: number | 'inf'): string {
  return `${base}.le_${boundUs}`;
}

const BUCKET = /^(.*)\.le_(\d+|inf)$/;

/** Splits a bucket name into its timer base and bound (microseconds, Infinity for `inf`). */
export function parseBucketName(name: string): { base: string; boundUs: number } | undefined {
  const m = BUCKET.exec(name);
  if (!m) return undefined;
  return { base: m[1]!, boundUs: m[2] === 'inf' ? Infinity : Number(m[2]) };
}

/** Records one call's duration for `method`: count, sum and its bucket. */
export function responseTimeRecorder(table: SharedStatsTable, method: string): (micros: number) => void {
  const count = table.handle(STAT.serverResponseTimeCount(method));
  const total = table.handle(STAT.serverResponseTimeTotalUs(method));
  const base = STAT.serverResponseTimeCount(method).slice(0, -'.count'.length);
  const buckets = RESPONSE_TIME_BOUNDS_US.map((b) => table.handle(bucketName(base, b)));
  const overflow = table.handle(bucketName(base, 'inf'));
  const bounds = RESPONSE_TIME_BOUNDS_US;
  return (micros) => {
    table.add(count, 1);
    table.add(total, micros);
    let i = 0;
    while (i < bounds.length && micros > bounds[i]!) i++;
    table.add(i < buckets.length ? buckets[i]! : overflow, 1);
  };
}
