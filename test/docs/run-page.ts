// Runs the runnable shell blocks of one page, in order, in one bash process, against a
// `sluice serve` of its own (free ports, a fresh data directory), and checks each block's
// exit status and, where the page shows one, its standard output.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/context.js';
import { waitUntil } from '../helpers/wait.js';
import type { ShellBlock } from './blocks.js';
import { outputDifference } from './expect.js';

/** The ports the docs are written for, by the setting that moves each. */
const DOCUMENTED = {
  PORT: 8080,
  GRPC_PORT: 8081,
  STREAMS_PORT: 8082,
  AUTOMATION_PORT: 8083,
  DEBUG_PORT: 6070,
};
type PortName = keyof typeof DOCUMENTED;

/** How long one page may run before it counts as hung (a guard, not a pass condition). */
const PAGE_HANG_MS = 180_000;

export interface Server {
  dataDir: string;
  ports: Record<PortName, number>;
  stop(): Promise<void>;
}

/** `node bin/sluice.js serve` on free loopback ports with a fresh data directory. */
export async function startServer(repo: string, extraEnv: Record<string, string> = {}): Promise<Server> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-doc-'));
  const ports = {} as Record<PortName, number>;
  for (const name of Object.keys(DOCUMENTED) as PortName[]) ports[name] = await freePort();
  const child = spawn(process.execPath, ['bin/sluice.js', 'serve', '--threads', '1'], {
    cwd: repo,
    env: {
      ...process.env,
      ...extraEnv,
      SLUICE_DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      GRPC_HOST: '127.0.0.1',
      DEBUG_HOST: '127.0.0.1',
      STREAMS_HOST: '127.0.0.1',
      AUTOMATION_HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    // The banner's last line follows the listeners (and, on a first start, the new key).
    await waitUntil(
      'sluice serve to start',
      () => /Use it as|failed to start/.test(out) || child.exitCode !== null,
      {
        timeoutMs: 120_000,
      },
    );
    if (!/Use it as/.test(out)) throw new Error(`sluice serve did not start:\n${out}`);
  } catch (error) {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  return {
    dataDir,
    ports,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const portPattern = (ports: number[]) =>
  new RegExp(`\\b(localhost|127\\.0\\.0\\.1):(${ports.join('|')})\\b`, 'g');

/** The block as a human runs it, with the documented ports moved to the test server's. */
export function toTestPorts(code: string, ports: Record<PortName, number>): string {
  const byDoc = new Map(Object.entries(DOCUMENTED).map(([name, doc]) => [doc, ports[name as PortName]]));
  return code.replace(
    portPattern([...byDoc.keys()]),
    (_, host: string, port: string) => `${host}:${byDoc.get(Number(port))}`,
  );
}

/** Output with the test server's ports shown as the documented ones again. */
export function toDocumentedPorts(text: string, ports: Record<PortName, number>): string {
  const byTest = new Map(Object.entries(ports).map(([name, test]) => [test, DOCUMENTED[name as PortName]]));
  return text.replace(
    portPattern([...byTest.keys()]),
    (_, host: string, port: string) => `${host}:${byTest.get(Number(port))}`,
  );
}

export interface PageResult {
  failures: string[];
  ran: number;
}

/** Runs the runnable blocks of `page` in one bash; stops at the first block that fails. */
/** What a page's `instead NAME=<service>` blocks are given in place of a reader's own. */
export interface Substitutes {
  postgres?: string;
}

/** Single-quoted for bash. */
const quoted = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

export async function runPage(
  repo: string,
  page: string,
  blocks: ShellBlock[],
  server: Server,
  substitutes: Substitutes = {},
): Promise<PageResult> {
  const work = mkdtempSync(join(tmpdir(), 'sluice-doc-run-'));
  const runnable = blocks.filter((b) => b.skip === undefined);
  const script = ['set -euo pipefail', 'cd "$DOC_TEST_REPO"'];
  runnable.forEach((block, k) => {
    let code = toTestPorts(block.code, server.ports);
    if (block.instead) {
      const url = substitutes[block.instead.service];
      if (url === undefined)
        throw new Error(`${page}:${block.line}: no ${block.instead.service} for this page`);
      code = `${block.instead.name}=${quoted(url)}`;
    }
    writeFileSync(join(work, `${k}.sh`), code + '\n');
    script.push(
      `printf '%s' ${k} > "$DOC_TEST_WORK/current"`,
      `source "$DOC_TEST_WORK/${k}.sh" > "$DOC_TEST_WORK/${k}.out" 2> "$DOC_TEST_WORK/${k}.err" < /dev/null`,
    );
  });
  script.push(`printf '%s' done > "$DOC_TEST_WORK/current"`);
  writeFileSync(join(work, 'page.sh'), script.join('\n') + '\n');
  let child: ChildProcess | undefined;
  try {
    child = spawn('bash', [join(work, 'page.sh')], {
      cwd: repo,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        SLUICE_DATA_DIR: server.dataDir,
        // A reader's git has an identity; a CI machine may have none (docs commit to the registry).
        GIT_AUTHOR_NAME: process.env.GIT_AUTHOR_NAME ?? 'Doc Test',
        GIT_AUTHOR_EMAIL: process.env.GIT_AUTHOR_EMAIL ?? 'doc-test@localhost',
        GIT_COMMITTER_NAME: process.env.GIT_COMMITTER_NAME ?? 'Doc Test',
        GIT_COMMITTER_EMAIL: process.env.GIT_COMMITTER_EMAIL ?? 'doc-test@localhost',
        DOC_TEST_REPO: repo,
        DOC_TEST_WORK: work,
        LOG_LEVEL: 'warn',
      },
    });
    let stray = '';
    child.stdout?.on('data', (d: Buffer) => (stray += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stray += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => {
        if (child?.pid) process.kill(-child.pid, 'SIGKILL');
      }, PAGE_HANG_MS);
      child?.on('exit', (c) => {
        clearTimeout(timer);
        resolve(c);
      });
    });
    const read = (name: string) => {
      try {
        return readFileSync(join(work, name), 'utf8');
      } catch {
        return '';
      }
    };
    const current = read('current');
    const failures: string[] = [];
    const reached = current === 'done' ? runnable.length : Number(current);
    for (let k = 0; k < reached; k++) {
      const block = runnable[k] as ShellBlock;
      if (!block.expect) continue;
      const output = toDocumentedPorts(read(`${k}.out`), server.ports);
      const difference = outputDifference(block.expect.lang, block.expect.text, output);
      if (difference) {
        failures.push(
          `${page}:${block.line}: the output differs from the one shown at ${page}:${block.expect.line}: ${difference}\n` +
            `--- output ---\n${output}\n--- stderr ---\n${read(`${k}.err`)}`,
        );
      }
    }
    if (code !== 0 || current !== 'done') {
      const block = runnable[reached];
      failures.push(
        block
          ? `${page}:${block.line}: the block exited with status ${code}\n--- block ---\n${block.code}\n` +
              `--- output ---\n${read(`${reached}.out`)}\n--- stderr ---\n${read(`${reached}.err`)}${stray}`
          : `${page}: bash exited with status ${code}\n${stray}`,
      );
    }
    return { failures, ran: reached };
  } finally {
    // A page may start servers of its own in the background (the JetStream guide does) and stop
    // them in its last block; a page that failed before that leaves them in bash's process group.
    if (child?.pid) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        // The group is already empty.
      }
    }
    rmSync(work, { recursive: true, force: true });
  }
}
