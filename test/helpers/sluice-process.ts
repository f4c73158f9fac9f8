// `sluice serve` as an operator runs it: `node bin/sluice.js serve` (the built code, dist/) in a
// process group of its own, on free loopback ports and a data directory of the test's choosing.
// Output is kept line by line so a test can act on a state the process reports (a log line, the
// banner) instead of on the clock, and stop the whole group with a signal as systemd does.

import { spawn, type ChildProcess } from 'node:child_process';
import { freePort } from './context.js';
import { HANG_MS } from './wait.js';
import type { Transport } from './transports.js';

export interface SluicePorts {
  PORT: number;
  GRPC_PORT: number;
  DEBUG_PORT: number;
  STREAMS_PORT: number;
  AUTOMATION_PORT: number;
}

export async function freeSluicePorts(): Promise<SluicePorts> {
  return {
    PORT: await freePort(),
    GRPC_PORT: await freePort(),
    DEBUG_PORT: await freePort(),
    STREAMS_PORT: await freePort(),
    AUTOMATION_PORT: await freePort(),
  };
}

/** Builds dist/ when the sources are newer, as bin/sluice.js would (once, before the processes). */
export async function ensureSluiceBuilt(): Promise<void> {
  const url = new URL('../../scripts/build-if-needed.js', import.meta.url).href;
  const { ensureBuilt } = (await import(url)) as { ensureBuilt: () => Promise<void> };
  await ensureBuilt();
}

/** What the output of a crashed or aborted Node process contains (never a clean stop's). */
export const NATIVE_FAILURE = /Assertion failed|Segmentation|Aborted|corrupted|FATAL ERROR|core dumped/i;

export class SluiceProcess {
  readonly child: ChildProcess;
  /** stdout and stderr lines, in the order they arrived. */
  readonly lines: string[] = [];
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly waiters = new Set<() => void>();
  private readonly detached: boolean;

  constructor(options: {
    /** The data directory (SLUICE_DATA_DIR). */
    dataDir: string;
    /** Ports set in the environment (PORT, STREAMS_PORT …); a service without one keeps its default. */
    ports?: Partial<SluicePorts>;
    /** SLUICE_HTTP_TRANSPORT; unset keeps the default. */
    transport?: Transport;
    /** The command line after `sluice` (default: `serve --threads <threads>`). */
    args?: string[];
    threads?: number;
    /**
     * Run src/cli.ts through tsx instead of the built bin/sluice.js: no build needed, but slower
     * to start and not how an operator runs it.
     */
    fromSource?: boolean;
    /** A process group of its own (default), so `signalGroup` reaches everything it started. */
    detached?: boolean;
    env?: Record<string, string>;
  }) {
    this.detached = options.detached ?? true;
    const args = options.args ?? ['serve', '--threads', String(options.threads ?? 2)];
    const entry = options.fromSource ? ['--import', 'tsx', 'src/cli.ts'] : ['bin/sluice.js'];
    this.child = spawn(process.execPath, [...entry, ...args], {
      // A process group of its own, so the stop signal reaches it as `kill -TERM -<pgid>` would.
      detached: this.detached,
      env: {
        ...process.env,
        SLUICE_DATA_DIR: options.dataDir,
        HOST: '127.0.0.1',
        GRPC_HOST: '127.0.0.1',
        DEBUG_HOST: '127.0.0.1',
        STREAMS_HOST: '127.0.0.1',
        AUTOMATION_HOST: '127.0.0.1',
        ...Object.fromEntries(Object.entries(options.ports ?? {}).map(([k, v]) => [k, String(v)])),
        LOG_LEVEL: 'info',
        ...(options.transport ? { SLUICE_HTTP_TRANSPORT: options.transport } : {}),
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (stream: 'stdout' | 'stderr') => {
      let partial = '';
      this.child[stream]!.on('data', (chunk: Buffer) => {
        const text = chunk.toString();
        this[stream] += text;
        partial += text;
        const parts = partial.split('\n');
        partial = parts.pop()!;
        if (parts.length === 0) return;
        this.lines.push(...parts);
        for (const wake of this.waiters) wake();
      });
    };
    collect('stdout');
    collect('stderr');
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => {
        for (const wake of this.waiters) wake();
        resolve({ code, signal });
      }),
    );
  }

  /** Resolves with the first output line matching `pattern`; rejects if the process ends first. */
  waitForLine(pattern: RegExp, timeoutMs = HANG_MS * 3): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        reject(new Error(`no line matching ${pattern} within the hang guard\n${this.output()}`));
      }, timeoutMs);
      const check = () => {
        const line = this.lines.find((l) => pattern.test(l));
        if (line !== undefined || this.child.exitCode !== null || this.child.signalCode !== null) {
          clearTimeout(timer);
          this.waiters.delete(check);
          if (line !== undefined) resolve(line);
          else reject(new Error(`process ended before a line matching ${pattern}\n${this.output()}`));
        }
      };
      this.waiters.add(check);
      check();
    });
  }

  /** The admin key the first start prints (after the banner's last line). */
  async firstKey(): Promise<string> {
    await this.waitForLine(/Use it as "Authorization: Bearer/);
    const token = /\s(sk_\S+)/.exec(this.stdout)?.[1];
    if (!token) throw new Error(`no admin key in the banner\n${this.output()}`);
    return token;
  }

  /** Sends `signal` to the whole process group (the supervisor and anything it started). */
  signalGroup(signal: NodeJS.Signals = 'SIGTERM'): void {
    try {
      process.kill(-this.child.pid!, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }

  /** Sends `signal` to the process itself and resolves with its exit status. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return (await this.exited).code;
  }

  /** Stops the group if it still runs (cleanup after a failed test). */
  async kill(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    if (this.detached) this.signalGroup('SIGKILL');
    else this.child.kill('SIGKILL');
    await this.exited;
  }

  output(): string {
    return `--- stdout\n${this.stdout}\n--- stderr\n${this.stderr}`;
  }
}
