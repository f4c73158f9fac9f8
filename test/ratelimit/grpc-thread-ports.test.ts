// GRPC_THREAD_PORTS: `sluice ratelimit --threads 2` serves gRPC from two event loops (one port
// per front-end thread) over the same shared counters — a hit on one port is seen on the other.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createUnaryClient, loadProto, PROTO_FILES, serviceDefinition } from '../../src/core/grpc/index.js';
import { RLS_SERVICE, type WireRequest } from '../../src/ratelimit/server/grpc.js';
import { freePort, freePortPair } from '../helpers/context.js';

const CONFIG = `
domain: threads
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 10 }
`;

describe('gRPC on every front-end thread (GRPC_THREAD_PORTS)', () => {
  it('answers on GRPC_PORT and GRPC_PORT+1 against one counter table', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-grpc-threads-'));
    const runtime = join(dataDir, 'runtime');
    mkdirSync(join(runtime, 'config'), { recursive: true });
    writeFileSync(join(runtime, 'config', 'threads.yaml'), CONFIG);
    const grpcPort = await freePortPair();
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'ratelimit', '--threads', '2'], {
      env: {
        ...process.env,
        SLUICE_DATA_DIR: dataDir,
        RUNTIME_ROOT: runtime,
        RUNTIME_WATCH_ROOT: 'false',
        HOST: '127.0.0.1',
        PORT: String(await freePort()),
        GRPC_HOST: '127.0.0.1',
        GRPC_PORT: String(grpcPort),
        GRPC_THREAD_PORTS: 'true',
        DEBUG_HOST: '127.0.0.1',
        DEBUG_PORT: String(await freePort()),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const root = loadProto([PROTO_FILES.rls]);
    const clients = [grpcPort, grpcPort + 1].map((port) =>
      createUnaryClient<WireRequest, Record<string, any>>(
        `127.0.0.1:${port}`,
        serviceDefinition(root, RLS_SERVICE),
        'ShouldRateLimit',
      ),
    );
    try {
      const listed = new RegExp(
        `127\\.0\\.0\\.1:${grpcPort}, 127\\.0\\.0\\.1:${grpcPort + 1}|127\\.0\\.0\\.1:${grpcPort + 1}, 127\\.0\\.0\\.1:${grpcPort}`,
      );
      // Waits for the listing itself (not for its first bytes) or for the process to end.
      const deadline = Date.now() + 60_000;
      while (!listed.test(out) && child.exitCode === null && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 100));
      assert.match(out, listed, `stdout:\n${out}\nstderr:\n${err}`);
      // The child counts in hour windows of its own real clock. Its decisions fall between the
      // readings taken here, so when both are in one hour no window edge fell between the hits;
      // otherwise the round is repeated with a fresh user (an edge falls at most once an hour).
      const hour = () => Math.floor(Date.now() / 3_600_000);
      let remaining: number[] = [];
      for (let round = 0; ; round++) {
        const request: WireRequest = {
          domain: 'threads',
          descriptors: [{ entries: [{ key: 'user', value: `ana${round}` }] }],
        };
        const from = hour();
        remaining = [];
        for (let i = 0; i < 4; i++) {
          const response = await clients[i % 2]!.call(request);
          remaining.push(response.statuses[0].limitRemaining);
        }
        if (hour() === from || round === 2) break;
      }
      assert.deepEqual(remaining, [9, 8, 7, 6]);
    } finally {
      for (const c of clients) c.close();
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      assert.equal(code, 0, err);
    }
  });
});
