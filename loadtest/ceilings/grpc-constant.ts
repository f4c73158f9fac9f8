// Ceiling server for gRPC scenarios: grpc-js (through the gRPC core) answering every
// ShouldRateLimit with the same OK response, without looking at the request beyond decoding it.
// Prints {"port":N} once listening; closes on SIGTERM.

import { loadProto, PROTO_FILES, serviceDefinition, startGrpcServer } from '../../src/core/grpc/index.js';

const definition = serviceDefinition(
  loadProto([PROTO_FILES.rls]),
  'envoy.service.ratelimit.v3.RateLimitService',
);
const response = Object.freeze({
  overallCode: 1,
  statuses: [{ code: 1, currentLimit: { requestsPerUnit: 1000, unit: 1 }, limitRemaining: 999 }],
});

const server = await startGrpcServer({
  host: '127.0.0.1',
  port: Number(process.env['PORT'] ?? '0'),
  services: [{ definition, implementation: { ShouldRateLimit: () => response } }],
});
process.stdout.write(JSON.stringify({ port: server.port }) + '\n');
process.once('SIGTERM', () => {
  void server.close(500).then(() => process.exit(0));
});
