// GET /runs?limit=50&status=completed over 100k stored runs (written before the server starts
// through the service's own RunStore), i.e. an LMDB index range scan per page.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import type { Scenario } from '../types.js';
import { fillRuns } from './automation-support/fill.js';

const TOKEN = 'loadtest-automation-admin-token';

const scenario: Scenario = {
  description: 'automation: GET /api/v1/runs?limit=50&status=completed with 100k stored runs (list page)',
  ceiling: 'uws-hello',
  load: {
    kind: 'http',
    method: 'GET',
    path: '/api/v1/runs?limit=50&status=completed',
    headers: { authorization: `Bearer ${TOKEN}` },
    okStatus: [200],
  },
  server: {
    args: ['automation'],
    env: { SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_THREADS: '1', AUTOMATION_HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    portEnv: ['AUTOMATION_PORT'],
    target: 'AUTOMATION_PORT',
    readyPath: '/api/v1/openapi.json',
    prepare: async (tmp) => {
      const dataDir = join(tmp, 'data');
      mkdirSync(join(dataDir, 'automation'), { recursive: true });
      await fillRuns(join(dataDir, 'automation', 'meta.lmdb'), 100_000);
      return { SLUICE_DATA_DIR: dataDir };
    },
  },
};

export default scenario;
