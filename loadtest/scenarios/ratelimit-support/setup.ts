// Shared set-up for the rate limit scenarios: a runtime directory with one domain whose limits
// are high enough that every request is counted and answered OK (the load measures decisions,
// not rejections). This folder is not itself a scenario.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerSpec } from '../../types.js';

export const CONFIG = `domain: load
descriptors:
  - key: user
    descriptors:
      - key: route
        value: /api/*
        rate_limit: { unit: minute, requests_per_unit: 1000000000 }
`;

/** One two-level descriptor, the shape Envoy sends for a per-user, per-route limit. */
export const REQUEST = {
  domain: 'load',
  descriptors: [
    {
      entries: [
        { key: 'user', value: 'alice' },
        { key: 'route', value: '/api/items' },
      ],
    },
  ],
};

export function ratelimitServer(target: 'PORT' | 'GRPC_PORT', threads: number): ServerSpec {
  return {
    args: ['ratelimit'],
    env: {
      SLUICE_THREADS: String(threads),
      HOST: '127.0.0.1',
      GRPC_HOST: '127.0.0.1',
      DEBUG_HOST: '127.0.0.1',
      RUNTIME_WATCH_ROOT: 'false',
    },
    portEnv: ['PORT', 'GRPC_PORT', 'DEBUG_PORT'],
    target,
    readyPath: '/healthcheck',
    readyPortEnv: 'PORT',
    prepare: (tmp) => {
      const root = join(tmp, 'runtime');
      mkdirSync(join(root, 'config'), { recursive: true });
      writeFileSync(join(root, 'config', 'load.yaml'), CONFIG);
      return { RUNTIME_ROOT: root };
    },
  };
}
