// POST /json decisions (one two-level descriptor) on one front-end thread, against the uWS
// POST-echo ceiling measured in the same run. `--server-threads 2` compares two threads.
import type { Scenario } from '../types.js';
import { ratelimitServer, REQUEST } from './ratelimit-support/setup.js';

const scenario: Scenario = {
  description:
    'rate limit decisions over POST /json (two-level descriptor, memory store, 1 front-end thread)',
  ceiling: 'uws-echo',
  load: {
    kind: 'http',
    method: 'POST',
    path: '/json',
    headers: { 'content-type': 'application/json' },
    body: REQUEST,
    okStatus: [200, 429],
  },
  server: ratelimitServer('PORT', 1),
};

export default scenario;
