// envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit and grpc.health.v1.Health over
// the core gRPC server. Service errors are gRPC UNKNOWN with the upstream message text.

import type { Logger } from '../../core/log.js';
import {
  GrpcError,
  GrpcStatus,
  healthService,
  loadProto,
  PROTO_FILES,
  serviceDefinition,
  startGrpcServer,
  type CallContext,
  type GrpcServerTlsOptions,
  type RunningGrpcServer,
} from '../../core/grpc/index.js';
import type { HealthRegistry } from '../../core/health.js';
import { reusePortSupported } from '../../core/runtime.js';
import { STAT } from '../stats/names.js';
import { responseTimeRecorder } from '../stats/outputs/response-time.js';
import type { SharedStatsTable } from '../stats/shared-table.js';
import {
  RateLimitRequestError,
  type RateLimitRequest,
  type RateLimitResponse,
  type RequestDescriptor,
} from '../types.js';
import type { ServerSettings } from '../settings/index.js';
import type { Decider } from './decider.js';

export const RLS_SERVICE = 'envoy.service.ratelimit.v3.RateLimitService';

/** The request as the core codec decodes it (numbers for enums and 64-bit values, unset = undefined). */
export interface WireRequest {
  domain?: string;
  descriptors?: {
    entries?: { key?: string; value?: string }[];
    limit?: { requestsPerUnit?: number; unit?: number };
    hitsAddend?: { value?: number };
  }[];
  hitsAddend?: number;
}

export function fromWire(w: WireRequest): RateLimitRequest {
  const descriptors: RequestDescriptor[] = (w.descriptors ?? []).map((d) => {
    const out: RequestDescriptor = {
      entries: (d.entries ?? []).map((e) => ({ key: e.key ?? '', value: e.value ?? '' })),
    };
    if (d.limit) out.limit = { requestsPerUnit: d.limit.requestsPerUnit ?? 0, unit: d.limit.unit ?? 0 };
    if (d.hitsAddend) out.hitsAddend = d.hitsAddend.value ?? 0;
    return out;
  });
  const request: RateLimitRequest = { domain: w.domain ?? '', descriptors };
  if (w.hitsAddend !== undefined) request.hitsAddend = w.hitsAddend;
  return request;
}

export function toWire(r: RateLimitResponse): Record<string, unknown> {
  return {
    overallCode: r.overallCode,
    statuses: r.statuses.map((s) => ({
      code: s.code,
      currentLimit: s.currentLimit,
      limitRemaining: s.limitRemaining,
      durationUntilReset: s.durationUntilReset === undefined ? undefined : { seconds: s.durationUntilReset },
    })),
    responseHeadersToAdd: r.responseHeadersToAdd,
  };
}

/**
 * Whether this front-end thread serves gRPC, and how. Thread 0 alone by default. With
 * GRPC_THREAD_PORTS every thread on GRPC_PORT + its index. Otherwise, where the runtime can share
 * a port (SO_REUSEPORT, see reusePortSupported) and several threads run, every thread on GRPC_PORT
 * itself. A unix socket (GRPC_UDS) has one listener; port 0 (a free port) cannot be shared by
 * threads that pick it independently, so both keep gRPC on thread 0.
 */
export function grpcListenerFor(
  grpc: ServerSettings['grpc'],
  thread: { readonly index: number; readonly count: number },
  canReusePort: boolean = reusePortSupported(),
): { port: number; reusePort: boolean } | undefined {
  const tcp = grpc.uds === undefined;
  if (tcp && grpc.threadPorts)
    return { port: grpc.port === 0 ? 0 : grpc.port + thread.index, reusePort: false };
  if (tcp && canReusePort && thread.count > 1 && grpc.port !== 0) return { port: grpc.port, reusePort: true };
  return thread.index === 0 ? { port: grpc.port, reusePort: false } : undefined;
}

export interface RatelimitGrpcOptions {
  host: string;
  port: number;
  uds: string | undefined;
  /** Share host:port with the other threads' servers (grpcListenerFor). */
  reusePort?: boolean;
  maxConnectionAgeMs: number;
  maxConnectionAgeGraceMs: number;
  /** GRPC_SERVER_USE_TLS and friends (src/ratelimit/settings/grpc-tls.ts); plaintext when absent. */
  tls?: GrpcServerTlsOptions | undefined;
  decider: Decider;
  stats: SharedStatsTable;
  health: HealthRegistry;
  log: Logger;
}

export async function startRatelimitGrpc(options: RatelimitGrpcOptions): Promise<RunningGrpcServer> {
  const root = loadProto([PROTO_FILES.rls]);
  const definition = serviceDefinition(root, RLS_SERVICE);
  const { decider, stats } = options;
  const totalRequests = stats.handle(STAT.serverTotalRequests('ShouldRateLimit'));
  // Count, sum and latency bucket, for the pull endpoint's histogram.
  const recordTime = responseTimeRecorder(stats, 'ShouldRateLimit');
  const observe = (started: bigint): void => {
    stats.add(totalRequests, 1);
    recordTime(Number((process.hrtime.bigint() - started) / 1000n));
  };
  const asGrpc = (error: unknown): never => {
    // A store that failed under KVSTORE_FAILURE_MODE=closed: UNAVAILABLE, so Envoy applies its
    // failure_mode_deny policy; other refusals keep the upstream's UNKNOWN.
    if (error instanceof RateLimitRequestError && error.kind === 'store_error')
      throw new GrpcError(GrpcStatus.UNAVAILABLE, error.message);
    if (error instanceof RateLimitRequestError) throw new GrpcError(GrpcStatus.UNKNOWN, error.message);
    throw error;
  };
  const health = healthService(() => (options.health.isHealthy() ? 'SERVING' : 'NOT_SERVING'), {
    services: ['ratelimit', RLS_SERVICE],
    onChange: (listener) => options.health.onChange(listener),
  });
  return startGrpcServer({
    host: options.host,
    port: options.port,
    ...(options.uds ? { uds: options.uds } : {}),
    ...(options.reusePort ? { reusePort: true } : {}),
    maxConnectionAgeMs: options.maxConnectionAgeMs,
    maxConnectionAgeGraceMs: options.maxConnectionAgeGraceMs,
    ...(options.tls ? { tls: options.tls } : {}),
    log: options.log,
    services: [
      {
        definition,
        implementation: {
          ShouldRateLimit(request: WireRequest, call: CallContext) {
            const started = process.hrtime.bigint();
            try {
              const result = decider.decide(fromWire(request), 'ShouldRateLimit', call.header('traceparent'));
              if (result instanceof Promise) {
                return result.then(
                  (r) => {
                    observe(started);
                    return toWire(r);
                  },
                  (e: unknown) => {
                    observe(started);
                    return asGrpc(e);
                  },
                );
              }
              observe(started);
              return toWire(result);
            } catch (error) {
              observe(started);
              return asGrpc(error);
            }
          },
        },
      },
      health.binding,
    ],
  });
}
