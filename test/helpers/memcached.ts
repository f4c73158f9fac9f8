// A real memcached process for tests, on a free loopback port, stopped by pid.

import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort, haveBinary } from './redis.js';
import { HANG_MS } from './wait.js';

export const memcachedAvailable = haveBinary('memcached');

export interface MemcachedProcess {
  readonly host: string;
  readonly port: number;
  kill(): Promise<void>;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

export async function startMemcached(options: { args?: string[] } = {}): Promise<MemcachedProcess> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  let output = '';
  const launch = async (): Promise<void> => {
    // memcached refuses to run as root unless told which user to be (CI containers run as root).
    const user = process.getuid?.() === 0 ? ['-u', 'root'] : [];
    child = spawn(
      'memcached',
      ['-l', '127.0.0.1', '-p', String(port), '-U', '0', '-m', '16', ...user, ...(options.args ?? [])],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    child.stdout?.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (output += c.toString()));
    const deadline = Date.now() + HANG_MS;
    while (!(await canConnect(port))) {
      if (child.exitCode !== null) throw new Error(`memcached exited (${child.exitCode}): ${output}`);
      if (Date.now() > deadline) throw new Error(`memcached did not listen on ${port}: ${output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const kill = async (): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    c.kill('SIGKILL');
    await gone;
  };
  await launch();
  return {
    host: '127.0.0.1',
    port,
    kill,
    async restart() {
      await kill();
      await launch();
    },
    stop: kill,
  };
}
