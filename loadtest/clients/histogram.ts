// A log-bucketed latency histogram (2 % wide buckets) that load-generator processes send back
// to the runner as JSON and that merges by adding counts.

const BASE = Math.log(1.02);

export type Histogram = Record<string, number>;

export function record(hist: Histogram, micros: number): void {
  const bucket = micros < 1 ? 0 : Math.floor(Math.log(micros) / BASE);
  hist[bucket] = (hist[bucket] ?? 0) + 1;
}

export function merge(into: Histogram, from: Histogram): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

function bucketMicros(bucket: number): number {
  // Geometric middle of the bucket.
  return Math.exp((bucket + 0.5) * BASE);
}

export function summarise(hist: Histogram): {
  count: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
} {
  const buckets = Object.entries(hist)
    .map(([k, v]) => [Number(k), v] as const)
    .sort((a, b) => a[0] - b[0]);
  const count = buckets.reduce((s, [, v]) => s + v, 0);
  if (count === 0) return { count: 0, p50Ms: 0, p99Ms: 0, meanMs: 0, maxMs: 0 };
  const at = (q: number): number => {
    const rank = Math.ceil(q * count);
    let seen = 0;
    for (const [b, v] of buckets) {
      seen += v;
      if (seen >= rank) return bucketMicros(b) / 1000;
    }
    return bucketMicros(buckets[buckets.length - 1]![0]) / 1000;
  };
  const mean = buckets.reduce((s, [b, v]) => s + bucketMicros(b) * v, 0) / count / 1000;
  return {
    count,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    meanMs: mean,
    maxMs: bucketMicros(buckets[buckets.length - 1]![0]) / 1000,
  };
}
