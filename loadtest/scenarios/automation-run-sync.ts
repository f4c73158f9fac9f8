// Synchronous runs of the built-in workflow: POST /runs?wait_for_completion=10 answers after
// the run completed in the piscina pool (start → steps → output file → commit). req/s = runs/s.
import type { Scenario } from '../types.js';

const TOKEN = 'loadtest-automation-admin-token';

const scenario: Scenario = {
  description:
    'automation: POST /runs?wait_for_completion=10 of workflows.text-report (sync run start → completion, 2 pool threads); req/s = runs/s',
  ceiling: 'uws-echo',
  load: {
    kind: 'http',
    method: 'POST',
    path: '/api/v1/runs?wait_for_completion=10',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: { target: 'workflows.text-report', input: { text: 'the quick brown fox jumps over the lazy dog' } },
    okStatus: [200],
  },
  server: {
    args: ['automation'],
    env: {
      SLUICE_ADMIN_TOKEN: TOKEN,
      SLUICE_THREADS: '1',
      AUTOMATION_HOST: '127.0.0.1',
      AUTOMATION_POOL_THREADS: '2',
      LOG_LEVEL: 'warn',
    },
    portEnv: ['AUTOMATION_PORT'],
    target: 'AUTOMATION_PORT',
    readyPath: '/api/v1/openapi.json',
  },
};

export default scenario;
