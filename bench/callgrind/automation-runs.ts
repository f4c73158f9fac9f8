// Driver for the CPU of one synchronous automation run on the embedded LMDB backend, past HTTP,
// in every thread of the server (main thread and pool threads): the built server (`dist/`, as
// the load test scenario automation-run-sync starts it: one front-end thread, 2 pool threads, a
// fresh data directory) is sent `warm` runs and then `n` more (`POST
// /api/v1/runs?wait_for_completion=30` of `workflows.text-report`, `concurrency` at a time), and
// stopped. This process (the client) is not measured. Tools:
//   callgrind  the server runs under callgrind and its instruction total is printed; two runs
//              that differ only in `n` give instructions per run whatever the machine's load
//              (docs/benchmarks.md, "Instruction counts")
//   cpu        the server's user + system CPU time over the `n` runs (from /proc/<pid>/stat,
//              all its threads), divided by `n`: wanders with the load, less than wall-clock
//   npm run build
//   npx tsx bench/callgrind/automation-runs.ts <root> <tool> <n> <warm> <concurrency>
// <root> is the checkout whose dist/ is measured (another checkout gives the "before").

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuMs } from '../../test/helpers/proc.js';

const [root = '.', tool = 'cpu', n = '100', warm = '50', concurrency = '8'] = process.argv.slice(2);
if (tool !== 'cpu' && tool !== 'callgrind') throw new Error(`tool must be cpu or callgrind, got ${tool}`);
const TOKEN = 'callgrind-automation-admin-token';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const port = await freePort();
const data = mkdtempSync(join(tmpdir(), 'sluice-callgrind-runs-'));
const server = spawn(
  tool === 'callgrind' ? 'valgrind' : process.execPath,
  [
    ...(tool === 'callgrind'
      ? [
          '--tool=callgrind',
          '--callgrind-out-file=/dev/null',
          '--smc-check=all-non-file',
          'node',
          '--single-threaded',
        ]
      : []),
    join(root, 'dist/src/cli.js'),
    'automation',
  ],
  {
    cwd: root,
    env: {
      ...process.env,
      SLUICE_DATA_DIR: data,
      SLUICE_ADMIN_TOKEN: TOKEN,
      SLUICE_THREADS: '1',
      AUTOMATION_HOST: '127.0.0.1',
      AUTOMATION_PORT: String(port),
      AUTOMATION_POOL_THREADS: '2',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  },
);
let stderr = '';
server.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));

const base = `http://127.0.0.1:${port}/api/v1`;
async function ready(): Promise<void> {
  for (;;) {
    if (server.exitCode !== null) throw new Error(`the server ended:\n${stderr}`);
    try {
      if ((await fetch(`${base}/openapi.json`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

const body = JSON.stringify({
  target: 'workflows.text-report',
  input: { text: 'the quick brown fox jumps over the lazy dog' },
});
async function runs(count: number): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next++;
      const res = await fetch(`${base}/runs?wait_for_completion=30`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body,
      });
      const run = (await res.json()) as { status?: string; execution?: { status?: string } };
      if (res.status !== 200 || run.execution?.status !== 'completed')
        throw new Error(`a run did not complete: ${res.status} ${JSON.stringify(run)}`);
    }
  };
  await Promise.all(Array.from({ length: Number(concurrency) }, lane));
}

let cpu = 0;
try {
  await ready();
  await runs(Number(warm));
  const before = cpuMs(server.pid!);
  await runs(Number(n));
  cpu = cpuMs(server.pid!) - before;
} finally {
  server.kill('SIGINT');
  await exited;
  rmSync(data, { recursive: true, force: true });
}
if (tool === 'cpu') {
  console.log(
    `n=${n} warm=${warm} concurrency=${concurrency} cpu_ms_per_run=${(cpu / Number(n)).toFixed(3)}`,
  );
  process.exit(0);
}
const collected = /Collected\s*:\s*(\d+)/.exec(stderr);
if (!collected) throw new Error(`no callgrind total:\n${stderr}`);
console.log(`n=${n} warm=${warm} concurrency=${concurrency} instructions=${collected[1]}`);
