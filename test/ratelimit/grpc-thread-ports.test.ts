// gRPC on every front-end thread: `sluice ratelimit --threads 2` serves gRPC from two event loops
// over the same shared counters — with GRPC_THREAD_PORTS one port per thread (any Node), and on a
// Node with `reusePort` all threads on GRPC_PORT itself. A hit through one loop is seen on the other.

import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createUnaryClient, loadProto, PROTO_FILES, serviceDefinition } from '../../src/core/grpc/index.js';
import { reusePortSupported } from '../../src/core/runtime.js';
import { grpcListenerFor, RLS_SERVICE, type WireRequest } from '../../src/ratelimit/server/grpc.js';
import type { ServerSettings } from '../../src/ratelimit/settings/index.js';
import { freePort, freePortPair } from '../helpers/context.js';
import { waitUntil } from '../helpers/wait.js';

const CONFIG = `
domain: threads
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 10 }
`;

interface Child {
  child: ChildProcess;
  out(): string;
  err(): string;
  /** SIGTERM, then the exit code; removes the data folder. */
  stop(): Promise<number | null>;
}

/** `sluice ratelimit --threads 2` from source with its own data folder and the given settings. */
async function startRatelimit(env: Record<string, string>): Promise<Child> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-grpc-threads-'));
  const runtime = join(dataDir, 'runtime');
  mkdirSync(join(runtime, 'config'), { recursive: true });
  writeFileSync(join(runtime, 'config', 'threads.yaml'), CONFIG);
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'ratelimit', '--threads', '2'], {
    env: {
      ...process.env,
      SLUICE_DATA_DIR: dataDir,
      RUNTIME_ROOT: runtime,
      RUNTIME_WATCH_ROOT: 'false',
      HOST: '127.0.0.1',
      PORT: String(await freePort()),
      GRPC_HOST: '127.0.0.1',
      DEBUG_HOST: '127.0.0.1',
      DEBUG_PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    out: () => out,
    err: () => err,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}

/** Waits for the start banner's gRPC line (or the end of the process) and returns it. */
async function grpcBannerLine(c: Child): Promise<string> {
  const line = () => /^\s*ratelimit\s+grpc\s+(.*)\n/m.exec(c.out())?.[1];
  await waitUntil('the start banner', () => line() !== undefined || c.child.exitCode !== null);
  assert.ok(line() !== undefined, `stdout:\n${c.out()}\nstderr:\n${c.err()}`);
  return line()!;
}

type RlsClient = ReturnType<typeof rlsClient>;
function rlsClient(address: string, fresh = false) {
  return createUnaryClient<WireRequest, Record<string, any>>(
    address,
    serviceDefinition(loadProto([PROTO_FILES.rls]), RLS_SERVICE),
    'ShouldRateLimit',
    fresh ? { channelOptions: { 'grpc.use_local_subchannel_pool': 1 } } : {},
  );
}

/**
 * Hits user `ana<round>` once per call of `next()` and returns the remaining counts. The child
 * counts in hour windows of its own real clock. Its decisions fall between the readings taken
 * here, so when both are in one hour no window edge fell between the hits; otherwise the round
 * is repeated with a fresh user (an edge falls at most once an hour).
 */
async function hitsAcross(calls: number, client: (i: number) => Promise<RlsClient>): Promise<number[]> {
  const hour = () => Math.floor(Date.now() / 3_600_000);
  let remaining: number[] = [];
  for (let round = 0; ; round++) {
    const request: WireRequest = {
      domain: 'threads',
      descriptors: [{ entries: [{ key: 'user', value: `ana${round}` }] }],
    };
    const from = hour();
    remaining = [];
    for (let i = 0; i < calls; i++) {
      const response = await (await client(i)).call(request);
      // proto3 leaves a zero out of the message: absent means 0
      remaining.push(response.statuses[0].limitRemaining ?? 0);
    }
    if (hour() === from || round === 2) return remaining;
  }
}

describe('which threads serve gRPC (grpcListenerFor)', () => {
  const grpc = (over: Partial<ServerSettings['grpc']> = {}): ServerSettings['grpc'] => ({
    host: '0.0.0.0',
    port: 8081,
    uds: undefined,
    maxConnectionAgeMs: 0,
    maxConnectionAgeGraceMs: 0,
    threadPorts: false,
    ...over,
  });
  const two = (index: number) => ({ index, count: 2 });

  it('without reusePort: thread 0 only', () => {
    assert.deepEqual(grpcListenerFor(grpc(), two(0), false), { port: 8081, reusePort: false });
    assert.equal(grpcListenerFor(grpc(), two(1), false), undefined);
  });
  it('with reusePort and several threads: every thread on GRPC_PORT', () => {
    assert.deepEqual(grpcListenerFor(grpc(), two(1), true), { port: 8081, reusePort: true });
    // one thread keeps a plain bind, so a second process on the port still fails with EADDRINUSE
    assert.deepEqual(grpcListenerFor(grpc(), { index: 0, count: 1 }, true), { port: 8081, reusePort: false });
    // a free port (0) is picked per listener and cannot be shared; a unix socket has one listener
    assert.equal(grpcListenerFor(grpc({ port: 0 }), two(1), true), undefined);
    assert.equal(grpcListenerFor(grpc({ uds: '/tmp/rls.sock' }), two(1), true), undefined);
  });
  it('GRPC_THREAD_PORTS: GRPC_PORT + index on any Node', () => {
    for (const can of [false, true]) {
      assert.deepEqual(grpcListenerFor(grpc({ threadPorts: true }), two(1), can), {
        port: 8082,
        reusePort: false,
      });
      assert.deepEqual(grpcListenerFor(grpc({ threadPorts: true, port: 0 }), two(1), can), {
        port: 0,
        reusePort: false,
      });
    }
  });
});

describe('gRPC on every front-end thread (GRPC_THREAD_PORTS)', () => {
  it('answers on GRPC_PORT and GRPC_PORT+1 against one counter table', async () => {
    const grpcPort = await freePortPair();
    const c = await startRatelimit({ GRPC_PORT: String(grpcPort), GRPC_THREAD_PORTS: 'true' });
    const clients = [grpcPort, grpcPort + 1].map((port) => rlsClient(`127.0.0.1:${port}`));
    try {
      const listed = await grpcBannerLine(c);
      assert.deepEqual(
        listed.split(', ').sort(),
        [`127.0.0.1:${grpcPort}`, `127.0.0.1:${grpcPort + 1}`].sort(),
      );
      assert.deepEqual(await hitsAcross(4, async (i) => clients[i % 2]!), [9, 8, 7, 6]);
    } finally {
      for (const client of clients) client.close();
      const code = await c.stop();
      assert.equal(code, 0, c.err());
    }
  });
});

describe('gRPC on every front-end thread, one port (reusePort)', () => {
  const unsupported =
    !reusePortSupported() && `Node ${process.version} has no reusePort (22.12+ / 23.1+ on Linux)`;

  it(
    'both threads accept connections on GRPC_PORT and count against one table',
    { skip: unsupported },
    async () => {
      const grpcPort = await freePort();
      // Each thread logs the connections it accepts (debug level, with its thread index).
      const c = await startRatelimit({ GRPC_PORT: String(grpcPort), LOG_LEVEL: 'debug', LOG_FORMAT: 'json' });
      const address = `127.0.0.1:${grpcPort}`;
      const opened: RlsClient[] = [];
      const acceptedBy = (): number[] =>
        c
          .err()
          .split('\n')
          .slice(0, -1) // the last piece may be a line still being written
          .filter((line) => line.includes('"gRPC connection accepted"'))
          .map((line) => (JSON.parse(line) as { thread: number }).thread);
      try {
        assert.equal(await grpcBannerLine(c), address);
        const fresh = async (): Promise<RlsClient> => {
          const client = rlsClient(address, true);
          opened.push(client);
          return client;
        };
        // One fresh connection per call until both threads have accepted one. The kernel picks a
        // listener by a hash of the connection's ports: 64 connections all on one thread would
        // have a probability of 2^-63. Each thread logs the accept before the call is answered.
        while (new Set(acceptedBy()).size < 2 && opened.length < 64) {
          const client = await fresh();
          await client.call({
            domain: 'threads',
            descriptors: [{ entries: [{ key: 'user', value: 'spread' }] }],
          });
          await waitUntil('the accepted connection in the log', () => acceptedBy().length >= opened.length);
        }
        assert.deepEqual(new Set(acceptedBy()), new Set([0, 1]), `after ${opened.length} connections`);
        // Whichever thread takes each connection, the hits are counted in one shared table.
        assert.deepEqual(await hitsAcross(10, fresh), [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
      } finally {
        for (const client of opened) client.close();
        const code = await c.stop();
        assert.equal(code, 0, c.err().slice(-4000));
      }
    },
  );
});
