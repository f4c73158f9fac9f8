// Real processes for the backup tests: `sluice serve` on free ports over a data directory, and
// one-shot `sluice backup|restore` runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { freeSluicePorts, SluiceProcess } from '../helpers/sluice-process.js';
import { waitUntil } from '../helpers/wait.js';

const CLI = ['--import', 'tsx', 'src/cli.ts'];

export interface Server {
  readonly streams: string;
  readonly automation: string;
  readonly output: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export async function startServer(dataDir: string): Promise<Server> {
  const ports = await freeSluicePorts();
  const proc = new SluiceProcess({
    dataDir,
    ports,
    args: ['serve', '--threads', '1'],
    fromSource: true,
    detached: false,
    env: { LOG_LEVEL: 'warn' },
  });
  // The banner's last lines list the listeners; the automation one comes after streams. The
  // guard is a hang guard only: three services starting on a loaded 2-core machine take a while.
  await proc.waitForLine(/automation auth/, 180_000);
  return {
    streams: `http://127.0.0.1:${ports.STREAMS_PORT}`,
    automation: `http://127.0.0.1:${ports.AUTOMATION_PORT}/api/v1`,
    output: () => proc.stdout + proc.stderr,
    stop: () => proc.stop(),
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Starts `sluice <args>` with SLUICE_DATA_DIR; `done` settles when it exits. */
export function startCli(dataDir: string, args: string[]): { child: ChildProcess; done: Promise<CliResult> } {
  const child = spawn(process.execPath, [...CLI, ...args], {
    env: { ...process.env, SLUICE_DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<CliResult>((resolve) =>
    child.on('exit', (code, signal) =>
      resolve({ code, stdout, stderr: signal ? `${stderr}\n(killed by ${signal})` : stderr }),
    ),
  );
  return { child, done };
}

export function runCli(dataDir: string, args: string[]): Promise<CliResult> {
  return startCli(dataDir, args).done;
}

/** The admin key a first start prints (the line after it closes the notice). */
export function firstKey(server: Server): Promise<string> {
  return waitUntil('the first admin key', () =>
    /Use it as/.test(server.output())
      ? /First start: an admin API key[\s\S]*?\s(sk_\S+)/.exec(server.output())?.[1]
      : undefined,
  );
}
