// gRPC ShouldRateLimit decisions against the constant-response grpc-js ceiling in the same run.
import { PROTO_FILES } from '../../src/core/grpc/index.js';
import type { Scenario } from '../types.js';
import { ratelimitServer, REQUEST } from './ratelimit-support/setup.js';

const scenario: Scenario = {
  description: 'rate limit decisions over gRPC ShouldRateLimit (two-level descriptor, memory store)',
  ceiling: 'grpc-constant',
  load: {
    kind: 'grpc',
    protoFiles: [PROTO_FILES.rls],
    service: 'envoy.service.ratelimit.v3.RateLimitService',
    method: 'ShouldRateLimit',
    request: REQUEST,
  },
  server: ratelimitServer('GRPC_PORT', 1),
};

export default scenario;
