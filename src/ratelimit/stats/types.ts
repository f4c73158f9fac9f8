// The stats output seam: the push (statsd), tagged and pull (Prometheus) outputs
// implement StatsSink and receive the shared table's snapshot every STATS_FLUSH_INTERVAL.

export interface StatsSink {
  flush(counters: ReadonlyMap<string, number>): void | Promise<void>;
  close(): Promise<void>;
}
