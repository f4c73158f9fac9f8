// Default loads: the requests the ceilings answer when a run measures ceilings only, and the
// shared rate limit request used by gRPC scenarios.

import type { GrpcLoad, HttpLoad } from './types.js';

/** About 220 bytes, the size of a typical JSON decision request. */
export const SAMPLE_JSON_BODY = {
  domain: 'edge_proxy_per_ip',
  descriptors: [
    { entries: [{ key: 'remote_address', value: '203.0.113.17' }] },
    {
      entries: [
        { key: 'path', value: '/api/v1/orders' },
        { key: 'method', value: 'POST' },
      ],
    },
  ],
  hitsAddend: 1,
};

export const HELLO_LOAD: HttpLoad = { kind: 'http', method: 'GET', path: '/hello' };

export const ECHO_LOAD: HttpLoad = { kind: 'http', method: 'POST', path: '/echo', body: SAMPLE_JSON_BODY };

export const RLS_LOAD: GrpcLoad = {
  kind: 'grpc',
  protoFiles: ['envoy/service/ratelimit/v3/rls.proto'],
  service: 'envoy.service.ratelimit.v3.RateLimitService',
  method: 'ShouldRateLimit',
  request: SAMPLE_JSON_BODY,
};
