// What a run's answer acknowledges survives kill -9 of the automation service (LMDB, one node):
// the record of a run whose asynchronous start was answered (201), and the end of a run whose
// synchronous start was answered with it (200). `node bin/sluice.js automation` runs in its own
// process group; starters run until it is killed at a moment when some of each kind have been
// answered (a state, not a sleep), and a restart over the same data directory is checked for
// every acknowledged run.

import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../helpers/context.js';
import { ensureSluiceBuilt } from '../helpers/sluice-process.js';
import { waitUntil, withinHang } from '../helpers/wait.js';
import { UNFINISHED_STATUSES } from '../../src/automation/runs/statuses.js';

const TOKEN = 'run-durability-admin-token';
const root = join(import.meta.dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'sluice-run-durability-'));
const children: ChildProcess[] = [];

function killGroup(child: ChildProcess): void {
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

/** The automation service on a free port over `dataDir`, once it answers. */
async function startService(): Promise<{ child: ChildProcess; url: string; exited: Promise<unknown> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['bin/sluice.js', 'automation'], {
    cwd: root,
    detached: true,
    env: {
      ...process.env,
      SLUICE_DATA_DIR: dataDir,
      SLUICE_ADMIN_TOKEN: TOKEN,
      SLUICE_THREADS: '1',
      AUTOMATION_HOST: '127.0.0.1',
      AUTOMATION_PORT: String(port),
      AUTOMATION_POOL_THREADS: '2',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  children.push(child);
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const url = `http://127.0.0.1:${port}/api/v1`;
  await waitUntil(`the automation service to answer\n${stderr}`, async () => {
    if (child.exitCode !== null) throw new Error(`the service exited\n${stderr}`);
    return fetch(`${url}/openapi.json`).then(
      (r) => r.ok,
      () => false,
    );
  });
  return { child, url, exited };
}

async function call(url: string, method: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(url, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

before(async () => {
  await ensureSluiceBuilt();
});
after(() => {
  for (const child of children) killGroup(child);
  rmSync(dataDir, { recursive: true, force: true });
});

describe('runs after kill -9 of the automation service', () => {
  it('keeps every answered async start and every answered sync end', async () => {
    const first = await startService();
    const started: string[] = [];
    const ended = new Map<string, { output: unknown; completedAt: string }>();
    let killed = false;
    const asyncStarter = async () => {
      while (!killed) {
        const res = await call(`${first.url}/runs`, 'POST', {
          target: 'workflows.text-report',
          input: { text: 'async start' },
        }).catch(() => undefined);
        if (!res || res.status !== 201) return;
        started.push(res.body.id as string);
      }
    };
    const syncStarter = async () => {
      while (!killed) {
        const res = await call(`${first.url}/runs?wait_for_completion=30`, 'POST', {
          target: 'workflows.text-report',
          input: { text: 'sync start' },
        }).catch(() => undefined);
        if (!res) return;
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.execution.status, 'completed');
        ended.set(res.body.id as string, {
          output: res.body.output,
          completedAt: res.body.timing.completedAt,
        });
      }
    };
    const load = Promise.all([asyncStarter(), asyncStarter(), syncStarter(), syncStarter(), syncStarter()]);
    await waitUntil('async and sync starts answered', () => started.length >= 20 && ended.size >= 10);
    killGroup(first.child);
    killed = true;
    await withinHang('the killed service to exit', first.exited);
    await load;

    const second = await startService();
    for (const id of started) {
      const run = await call(`${second.url}/runs/${id}`, 'GET');
      assert.equal(run.status, 200, `acknowledged run ${id}: ${JSON.stringify(run.body)}`);
    }
    for (const [id, end] of ended) {
      const run = await call(`${second.url}/runs/${id}`, 'GET');
      assert.equal(run.status, 200, `acknowledged end of ${id}: ${JSON.stringify(run.body)}`);
      assert.equal(run.body.execution.status, 'completed', `acknowledged end of ${id}`);
      assert.deepEqual(run.body.output, end.output);
      assert.equal(run.body.timing.completedAt, end.completedAt);
      const events = await call(`${second.url}/runs/${id}/events`, 'GET');
      assert.equal(events.status, 200);
      const types = events.body.events as { type: string }[];
      assert.equal(types.at(-1)?.type, 'run.completed', `the last event of ${id}`);
      // Its output file, stored with its end (small files are kept off the disk), downloads.
      const report = await fetch(`${second.url}/runs/${id}/artifacts/output/report.md`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(report.status, 200, `the report of ${id}`);
      assert.match(await report.text(), /^# Text report[\s\S]*> sync start\n$/);
    }
    // Runs cut off before their answer (a sync start's creation may commit without its end) are
    // never left unfinished: the restart's recovery runs the queued ones again and ends the ones
    // that were executing.
    const unfinished = UNFINISHED_STATUSES.join(',');
    await waitUntil('every stored run of the first process to be ended', async () => {
      const page = await call(`${second.url}/runs?limit=200&status=${unfinished}`, 'GET');
      assert.equal(page.status, 200, JSON.stringify(page.body));
      return (page.body.runs as unknown[]).length === 0;
    });
    killGroup(second.child);
    await withinHang('the second service to exit', second.exited);
  });
});
