// gRPC ShouldRateLimit decisions with counters in Redis; Redis ceilings as in ratelimit-redis-json.
import { PROTO_FILES } from '../../src/core/grpc/index.js';
import type { Scenario } from '../types.js';
import { REQUEST } from './ratelimit-support/setup.js';
import { ratelimitRedisServer } from './ratelimit-redis-support/redis.js';

const scenario: Scenario = {
  description:
    'rate limit decisions over gRPC ShouldRateLimit, counters in Redis (two-level descriptor, fixed window)',
  ceiling: 'grpc-constant',
  load: {
    kind: 'grpc',
    protoFiles: [PROTO_FILES.rls],
    service: 'envoy.service.ratelimit.v3.RateLimitService',
    method: 'ShouldRateLimit',
    request: REQUEST,
  },
  server: ratelimitRedisServer('GRPC_PORT', 1),
};

export default scenario;
