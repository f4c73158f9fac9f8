// Child processes for load tests: start, wait until they answer, stop by pid. Every child is
// tracked so that an interrupted run (Ctrl-C, an exception) still kills what it started.

import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import { createServer, connect } from 'node:net';

const live = new Set<ChildProcess>();

function killAll(): void {
  for (const child of live)
    if (child.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGKILL');
}
process.once('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    killAll();
    process.exit(130);
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface Child {
  readonly pid: number;
  readonly name: string;
  /** Last lines of stderr, for error messages. */
  stderrTail(): string;
  /** SIGTERM, then SIGKILL after graceMs. */
  stop(graceMs?: number): Promise<void>;
  readonly exited: Promise<number | null>;
}

export interface StartOptions {
  name: string;
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd?: string;
}

export function startChild(options: StartOptions): Child & { stdoutLines: AsyncIterable<string> } {
  const child = spawn(options.command, options.args, {
    env: options.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`${options.name}: could not start ${options.command}`);
  live.add(child);
  const pid = child.pid;
  const tail: string[] = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk: string) => {
    tail.push(...chunk.split('\n').filter(Boolean));
    if (tail.length > 30) tail.splice(0, tail.length - 30);
  });
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => {
      live.delete(child);
      resolve(code);
    });
  });
  child.stdout.setEncoding('utf8');
  const stdoutLines: AsyncIterable<string> = {
    async *[Symbol.asyncIterator]() {
      let buffered = '';
      for await (const chunk of child.stdout as AsyncIterable<string>) {
        buffered += chunk;
        let nl: number;
        while ((nl = buffered.indexOf('\n')) >= 0) {
          yield buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
        }
      }
    },
  };
  return {
    pid,
    name: options.name,
    stdoutLines,
    exited,
    stderrTail: () => tail.join('\n'),
    async stop(graceMs = 3000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      process.kill(pid, 'SIGTERM');
      const timer = setTimeout(() => {
        if (child.exitCode === null) process.kill(pid, 'SIGKILL');
      }, graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Resolves with the first stdout line that parses as JSON with a numeric `port`. */
export async function waitForPortLine(
  child: Child & { stdoutLines: AsyncIterable<string> },
  timeoutMs: number,
): Promise<number> {
  const timeout = new Promise<never>((_, reject) => {
    const t = setTimeout(
      () =>
        reject(
          new Error(`${child.name} did not report its port within ${timeoutMs} ms\n${child.stderrTail()}`),
        ),
      timeoutMs,
    );
    t.unref();
  });
  const exited = child.exited.then((code) => {
    throw new Error(`${child.name} exited (${code}) before listening\n${child.stderrTail()}`);
  });
  const read = (async () => {
    for await (const line of child.stdoutLines) {
      try {
        const parsed = JSON.parse(line) as { port?: unknown };
        if (typeof parsed.port === 'number') return parsed.port;
      } catch {
        // not the port line
      }
    }
    throw new Error(`${child.name} closed stdout before reporting its port`);
  })();
  return Promise.race([read, timeout, exited]);
}

function tcpAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function httpAnswers(port: number, path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET', timeout: 1000 }, (res) => {
      res.resume();
      resolve((res.statusCode ?? 500) < 300);
    });
    req.once('error', () => resolve(false));
    req.once('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

/** Polls until the port accepts connections (and the path answers 2xx when given). */
export async function waitUntilReady(
  child: Child,
  port: number,
  path: string | undefined,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitedCode: number | null | undefined;
  void child.exited.then((code) => (exitedCode = code ?? -1));
  while (Date.now() < deadline) {
    if (exitedCode !== undefined)
      throw new Error(`${child.name} exited (${exitedCode}) before it was ready\n${child.stderrTail()}`);
    if (path ? await httpAnswers(port, path) : await tcpAnswers(port)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `${child.name} was not ready on port ${port} within ${timeoutMs} ms\n${child.stderrTail()}`,
  );
}
