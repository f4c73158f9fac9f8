// The call both transports make: run the engine, count call errors. Only gRPC calls count in
// ratelimit_server.* (as upstream, where /json bypasses the gRPC interceptor).

import type { RateLimitEngine } from '../engine/engine.js';
import { STAT } from '../stats/names.js';
import type { SharedStatsTable } from '../stats/shared-table.js';
import type { DecisionTracer } from '../tracing.js';
import { RateLimitRequestError, type RateLimitRequest, type RateLimitResponse } from '../types.js';

export class Decider {
  constructor(
    readonly engine: RateLimitEngine,
    private readonly stats: SharedStatsTable,
    private readonly storeKind: string,
    private readonly tracer?: DecisionTracer,
  ) {}

  /** `method` names the span (`ShouldRateLimit` or `json`); `traceparent` is the caller's header. */
  decide(
    request: RateLimitRequest,
    method = 'ShouldRateLimit',
    traceparent?: string,
  ): RateLimitResponse | Promise<RateLimitResponse> {
    if (this.tracer?.enabled) {
      return this.tracer.decide(
        { method, domain: request.domain, descriptors: request.descriptors.length, traceparent },
        () => this.run(request),
      );
    }
    return this.run(request);
  }

  private run(request: RateLimitRequest): RateLimitResponse | Promise<RateLimitResponse> {
    try {
      const result = this.engine.shouldRateLimit(request);
      if (result instanceof Promise) return result.catch((error: unknown) => this.failed(error));
      return result;
    } catch (error) {
      return this.failed(error);
    }
  }

  private failed(error: unknown): never {
    const kind =
      error instanceof RateLimitRequestError && error.kind === 'store_error'
        ? `${this.storeKind}_error`
        : 'service_error';
    this.stats.inc(STAT.callError(kind));
    if (error instanceof RateLimitRequestError) throw error;
    throw new RateLimitRequestError(error instanceof Error ? error.message : String(error));
  }
}
