// POST /json decisions with counters in Redis (fixed windows, upstream keys). Besides the uWS
// echo ceiling the runner measures, the Redis ceilings (redis-benchmark pipelined INCR and
// ioredis auto-pipelining the same command mix without HTTP) are measured in the same run and
// printed before the load; compare the decisions/s with the ioredis figure.
import type { Scenario } from '../types.js';
import { REQUEST } from './ratelimit-support/setup.js';
import { ratelimitRedisServer } from './ratelimit-redis-support/redis.js';

const scenario: Scenario = {
  description: 'rate limit decisions over POST /json, counters in Redis (two-level descriptor, fixed window)',
  ceiling: 'uws-echo',
  load: {
    kind: 'http',
    method: 'POST',
    path: '/json',
    headers: { 'content-type': 'application/json' },
    body: REQUEST,
    okStatus: [200, 429],
  },
  server: ratelimitRedisServer('PORT', 1),
};

export default scenario;
