// The TCP listeners the rate limit service opens, as the main thread checks them before any
// thread starts (src/core/port-probe.ts): HTTP, gRPC (one port, or one per thread with
// GRPC_THREAD_PORTS; none with GRPC_UDS), the debug port and, when on, the pull-metrics port.

import type { PlannedListener } from '../../core/port-probe.js';
import type { EnvReader } from '../../core/settings/index.js';
import { loadRateLimitSettings } from '../settings/index.js';

export function ratelimitListeners(env: EnvReader, threads: number): PlannedListener[] {
  const { server, stats } = loadRateLimitSettings(env);
  const service = 'ratelimit';
  const out: PlannedListener[] = [{ service, setting: 'PORT', ...server.http }];
  const grpc = server.grpc;
  if (grpc.uds === undefined) {
    const count = grpc.threadPorts && grpc.port !== 0 ? threads : 1;
    for (let i = 0; i < count; i++)
      out.push({ service, setting: 'GRPC_PORT', host: grpc.host, port: grpc.port + i });
  }
  out.push({ service, setting: 'DEBUG_PORT', host: server.debug.host, port: server.debug.port });
  if (!stats.disabled && stats.pull.enabled) {
    // PROMETHEUS_ADDR is its older alias (settings/observability.ts).
    out.push({ service, setting: 'PULLMETRICS_ADDR', host: stats.pull.host, port: stats.pull.port });
  }
  return out;
}
