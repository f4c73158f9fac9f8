// Redis for the rate limit Redis scenarios: a redis-server of the run's own on a free loopback
// port (killed by pid when the run's process exits), and the two Redis ceilings measured in the
// same run before the load starts:
//  1. redis-benchmark, pipelined INCR (-P 16): what Redis itself can take;
//  2. ioredis auto-pipelining the command mix of one two-descriptor decision (2 × INCRBY +
//     EXPIRE), 100 decisions in flight, no HTTP: what the client library can push — the ceiling
//     the /json and gRPC figures are compared with (goal: ≥ 70 % of it over /json).
// This folder is not itself a scenario.

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import type { ServerSpec } from '../../types.js';
import { ratelimitServer } from '../ratelimit-support/setup.js';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      s.close(() => resolve(typeof a === 'object' && a ? a.port : 0));
    });
  });
}

export async function startRunRedis(): Promise<number> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'sluice-loadtest-redis-'));
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  process.once('exit', () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`redis-server not ready: ${seen}`)), 10_000);
    child.stdout.on('data', (c: Buffer) => {
      seen += c.toString();
      if (seen.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited ${code}: ${seen}`)));
  });
  return port;
}

/** redis-benchmark's pipelined INCR rate (requests/s), or undefined when the tool is missing. */
export function redisBenchmarkIncr(port: number): number | undefined {
  const r = spawnSync(
    'redis-benchmark',
    ['-h', '127.0.0.1', '-p', String(port), '-t', 'incr', '-P', '16', '-n', '400000', '-q'],
    { encoding: 'utf8', timeout: 20_000 },
  );
  const m = /INCR: ([\d.]+) requests per second/.exec(r.stdout ?? '');
  return m ? Number(m[1]) : undefined;
}

/** Decisions/s ioredis reaches auto-pipelining one decision's commands, 100 in flight. */
export async function ioredisDecisionCeiling(port: number, seconds = 3): Promise<number> {
  const r = new Redis({ host: '127.0.0.1', port, enableAutoPipelining: true });
  await r.ping();
  let n = 0;
  const start = performance.now();
  while (performance.now() - start < seconds * 1000) {
    await Promise.all(
      Array.from({ length: 100 }, async (_, i) => {
        const a = `ceiling_user_${(n + i) % 1000}_`;
        const b = `ceiling_route_${(n + i) % 997}_`;
        await Promise.all([r.incrby(a, 1), r.expire(a, 60), r.incrby(b, 1), r.expire(b, 3600)]);
      }),
    );
    n += 100;
  }
  const rate = n / ((performance.now() - start) / 1000);
  r.disconnect();
  return rate;
}

/** The rate limit server on Redis, with both Redis ceilings measured and written down first. */
export function ratelimitRedisServer(target: 'PORT' | 'GRPC_PORT', threads: number): ServerSpec {
  const base = ratelimitServer(target, threads);
  return {
    ...base,
    env: { ...base.env, WINDOW_ALGORITHM: 'fixed', KVSTORE_POOL_SIZE: '4' },
    prepare: async (tmp) => {
      const env = await base.prepare!(tmp);
      const port = await startRunRedis();
      const incr = redisBenchmarkIncr(port);
      const decisions = await ioredisDecisionCeiling(port);
      const ceilings = {
        'redis-benchmark INCR -P 16 (requests/s)': incr ?? 'redis-benchmark not installed',
        'ioredis auto-pipelining, 2-descriptor decision mix (decisions/s)': Math.round(decisions),
        '70% target for /json (decisions/s)': Math.round(decisions * 0.7),
      };
      process.stdout.write(`redis ceilings (same run): ${JSON.stringify(ceilings)}\n`);
      writeFileSync(join(tmp, 'redis-ceilings.json'), JSON.stringify(ceilings, null, 2));
      return { ...env, KVSTORE_URL: `127.0.0.1:${port}` };
    },
  };
}
