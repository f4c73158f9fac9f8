// One load run's figures, whatever client produced them.

export type ClientName = 'autocannon' | 'wrk' | 'h2load' | 'grpc-js';

export interface LoadOptions {
  durationS: number;
  connections: number;
  /** Client threads / workers / processes. */
  threads: number;
  /** In-flight requests per connection (HTTP pipelining, HTTP/2 streams). */
  pipelining: number;
}

export interface LoadResult {
  client: ClientName;
  /** Client settings as run, for the report. */
  settings: string;
  requests: number;
  rps: number;
  /** Latency in ms; undefined where the client does not report it (h2load has no percentiles). */
  p50Ms?: number;
  p99Ms?: number;
  meanMs?: number;
  maxMs?: number;
  /** Responses that were not successes (non-2xx, or failed gRPC calls) plus transport errors. */
  failures: number;
  notes?: string;
}
