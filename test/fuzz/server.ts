// `sluice serve` as a user runs it, in a child process on free loopback ports with a temp data
// directory and a small rate limit configuration, for the in-test fuzz run. Its output is kept:
// a failing run shows the server's log next to the failing requests.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ServiceName } from './routes.js';

export interface ServeChild {
  readonly urls: Record<ServiceName, string>;
  readonly token: string;
  /** What the server printed so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, then waits for the exit; returns the exit code. */
  stop(): Promise<number | null>;
}

export const FUZZ_RULES = `domain: fuzz
descriptors:
  - key: fuzz
    rate_limit: { unit: second, requests_per_unit: 1000 }
  - key: fuzz
    value: b
    descriptors:
      - key: path
        rate_limit: { unit: minute, requests_per_unit: 2 }
`;

export async function startServe(env: Record<string, string> = {}): Promise<ServeChild> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-fuzz-'));
  mkdirSync(join(dataDir, 'runtime', 'config'), { recursive: true });
  writeFileSync(join(dataDir, 'runtime', 'config', 'fuzz.yaml'), FUZZ_RULES);
  const token = 'fuzz-admin-' + Math.random().toString(36).slice(2);
  // Port 0: the server binds free ports itself and prints them. Ports picked here and bound
  // later could be taken in between by a test running alongside, and uWS binds with
  // SO_REUSEPORT, so the two servers would silently share the port.
  const ports = { PORT: 0, GRPC_PORT: 0, DEBUG_PORT: 0, STREAMS_PORT: 0, AUTOMATION_PORT: 0 };
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli.ts', 'serve', '--threads', '1'],
    {
      env: {
        ...process.env,
        SLUICE_DATA_DIR: dataDir,
        SLUICE_ADMIN_TOKEN: token,
        HOST: '127.0.0.1',
        GRPC_HOST: '127.0.0.1',
        DEBUG_HOST: '127.0.0.1',
        STREAMS_HOST: '127.0.0.1',
        AUTOMATION_HOST: '127.0.0.1',
        ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
        RUNTIME_ROOT: join(dataDir, 'runtime'),
        RUNTIME_WATCH_ROOT: 'false',
        LOG_LEVEL: 'error',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 90_000;
  // The address table ends with the automation auth line: every listener is up by then.
  while (!/automation +auth/.test(out)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      throw new Error(`sluice serve did not start:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const listed = (service: string, suffix = ''): string => {
    const match = new RegExp(`^\\s*${service} +http +(http://\\S+?)${suffix}\\s*$`, 'm').exec(out);
    if (!match) throw new Error(`no ${service} http address in the start banner:\n${out}`);
    return match[1]!;
  };
  return {
    urls: {
      ratelimit: listed('ratelimit'),
      streams: listed('streams'),
      automation: listed('automation', '/api/v1'),
    },
    token,
    output: () => out,
    async stop() {
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      return code;
    },
  };
}
