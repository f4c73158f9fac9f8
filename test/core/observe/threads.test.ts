// /metrics of a service on several front-end threads shows the process's totals: `sluice
// ratelimit --threads 2` on uWS (the threads share the port, the kernel spreads connections),
// requests each on a new connection, and every scrape — whichever thread answers it — counts all
// of them (core/observe/metrics.ts asks the other thread over a BroadcastChannel).

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { freePort } from '../../helpers/context.js';
import { transportSkipReason } from '../../helpers/transports.js';
import { waitUntil } from '../../helpers/wait.js';
import { parseProm, sampleValue } from './prom-text.js';

/** GET on a connection of its own (agent: false), so the kernel picks a thread for each. */
function fresh(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

const REQUESTS = 40;

describe('metrics across front-end threads', { skip: transportSkipReason('uws') ?? false }, () => {
  it('every scrape counts the requests of both threads', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-threads-'));
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'ratelimit', '--threads', '2'], {
      env: {
        ...process.env,
        SLUICE_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        PORT: String(port),
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: String(await freePort()),
        DEBUG_HOST: '127.0.0.1',
        DEBUG_PORT: String(await freePort()),
        USE_PROMETHEUS: 'false',
        LOG_LEVEL: 'warn',
        SLUICE_HTTP_TRANSPORT: 'uws',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitUntil('the service to serve /livez', async () => {
        if (child.exitCode !== null) throw new Error(`exited: ${err}`);
        return (await fresh(base + '/readyz').catch(() => ({ status: 0 }))).status === 200;
      });
      const before = (await scrape(base)) ?? 0;
      for (let i = 0; i < REQUESTS; i++) assert.equal((await fresh(base + '/livez')).status, 200);
      for (let i = 0; i < 10; i++) assert.equal(await scrape(base), before + REQUESTS);
    } finally {
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      assert.equal(code, 0, `exit code; stderr:\n${err}`);
    }
  });
});

async function scrape(base: string): Promise<number | undefined> {
  const res = await fresh(base + '/metrics');
  assert.equal(res.status, 200);
  return sampleValue(parseProm(res.body), 'sluice_http_requests_total', {
    service: 'ratelimit',
    route: '/livez',
    status_class: '2xx',
  });
}
