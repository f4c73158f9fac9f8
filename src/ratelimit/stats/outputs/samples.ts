// Turns successive snapshots of the shared statistics table (cumulative totals) into what the
// outputs speak: per-interval counter increments and response-time timers.
//
// The table keeps response times as two counters per method, `<base>.count` and
// `<base>.total_us`; they are folded back into one timer named `<base>` (the upstream name,
// e.g. `ratelimit_server.ShouldRateLimit.response_time`) carrying the call count and the sum,
// and the bucket counters `<base>.le_<µs>` (response-time.ts), when present, become its buckets.

import { parseBucketName } from './response-time.js';

export interface CounterSample {
  readonly kind: 'counter';
  readonly name: string;
  readonly value: number;
}

export interface TimerSample {
  readonly kind: 'timer';
  readonly name: string;
  /** Calls observed. */
  readonly count: number;
  /** Sum of the calls' durations in milliseconds. */
  readonly sumMs: number;
  /** Calls per bucket (upper bound in ms, Infinity last), non-cumulative; empty when not recorded. */
  readonly buckets: readonly (readonly [number, number])[];
}

export type Sample = CounterSample | TimerSample;

const TIMER_COUNT = '.count';
const TIMER_TOTAL_US = '.total_us';

/** Timer base names present in a snapshot (both halves must exist). */
function timerBases(names: Iterable<string>): Set<string> {
  const counts = new Set<string>();
  const totals = new Set<string>();
  for (const name of names) {
    if (name.endsWith(TIMER_COUNT)) counts.add(name.slice(0, -TIMER_COUNT.length));
    else if (name.endsWith(TIMER_TOTAL_US)) totals.add(name.slice(0, -TIMER_TOTAL_US.length));
  }
  const out = new Set<string>();
  for (const base of counts) if (totals.has(base)) out.add(base);
  return out;
}

/** Cumulative values as samples (what a pull endpoint shows). */
export function totalsOf(snapshot: ReadonlyMap<string, number>): Sample[] {
  const bases = timerBases(snapshot.keys());
  const buckets = new Map<string, [number, number][]>();
  for (const [name, value] of snapshot) {
    const bucket = parseBucketName(name);
    if (!bucket || !bases.has(bucket.base)) continue;
    let list = buckets.get(bucket.base);
    if (!list) buckets.set(bucket.base, (list = []));
    list.push([bucket.boundUs / 1000, value]);
  }
  const out: Sample[] = [];
  for (const [name, value] of snapshot) {
    const base = timerBaseOf(name, bases);
    if (base === undefined) {
      const bucket = parseBucketName(name);
      if (bucket && bases.has(bucket.base)) continue;
      out.push({ kind: 'counter', name, value });
    } else if (name.endsWith(TIMER_COUNT)) {
      const list = (buckets.get(base) ?? []).sort((a, b) => a[0] - b[0]);
      out.push({
        kind: 'timer',
        name: base,
        count: value,
        sumMs: (snapshot.get(base + TIMER_TOTAL_US) ?? 0) / 1000,
        buckets: list,
      });
    }
  }
  return out;
}

function timerBaseOf(name: string, bases: Set<string>): string | undefined {
  if (name.endsWith(TIMER_COUNT)) {
    const base = name.slice(0, -TIMER_COUNT.length);
    return bases.has(base) ? base : undefined;
  }
  if (name.endsWith(TIMER_TOTAL_US)) {
    const base = name.slice(0, -TIMER_TOTAL_US.length);
    return bases.has(base) ? base : undefined;
  }
  return undefined;
}

/**
 * Remembers the last totals and yields what changed since (what a push output sends). Counters
 * only grow, so a smaller value means the table was recreated: the new total is the increment.
 */
export class DeltaTracker {
  private last = new Map<string, number>();

  next(snapshot: ReadonlyMap<string, number>): Sample[] {
    const out: Sample[] = [];
    for (const sample of totalsOf(snapshot)) {
      if (sample.kind === 'counter') {
        const delta = this.delta(sample.name, sample.value);
        if (delta > 0) out.push({ kind: 'counter', name: sample.name, value: delta });
      } else {
        const count = this.delta(sample.name + TIMER_COUNT, sample.count);
        const sumMs = this.delta(sample.name + TIMER_TOTAL_US, sample.sumMs * 1000) / 1000;
        // Push outputs send the mean; buckets only serve the pull endpoint.
        if (count > 0) out.push({ kind: 'timer', name: sample.name, count, sumMs, buckets: [] });
      }
    }
    return out;
  }

  private delta(key: string, value: number): number {
    const before = this.last.get(key) ?? 0;
    this.last.set(key, value);
    return value >= before ? value - before : value;
  }
}
