// RunService itself, without any HTTP server: real LMDB stores in a temp dir, a real registry
// seeded with the built-ins, a real executor pool (one thread), and the in-process run queue.
// Waits are on state (waitFor, waitUntil), never on the clock.

import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { createLogger } from '../../src/core/log.js';
import { ApiError } from '../../src/automation/errors.js';
import { RunPool } from '../../src/automation/executor/pool.js';
import { KEPT_FILE_BYTES } from '../../src/automation/executor/protocol.js';
import { RegistryRepository } from '../../src/automation/registry/repository.js';
import { AutomationRegistry } from '../../src/automation/registry/service.js';
import { LocalRunQueue } from '../../src/automation/runs/local-queue.js';
import { RunService } from '../../src/automation/runs/service.js';
import type { RunRecord } from '../../src/automation/runs/types.js';
import { localOnly } from '../../src/automation/runs/sharing.js';
import { NO_TRACING } from '../../src/core/tracing/index.js';
import { openLmdbStores, type AutomationStores } from '../../src/automation/stores.js';
import { DiskReserve } from '../../src/core/disk/reserve.js';
import { HANG_MS, waitUntil } from '../helpers/wait.js';

/** No free-space check: these tests are about the engine, not the disk. */
function noReserve(dir: string): DiskReserve {
  return new DiskReserve({ store: 'automation store', path: dir, reserveBytes: 0, onChange: () => {} });
}

const root = join(import.meta.dirname, '..', '..');
const principal = { tenant: 't1', user: 'u1' };
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Engine {
  dir: string;
  stores: AutomationStores;
  queue: LocalRunQueue;
  runs: RunService;
  close(): Promise<void>;
}

/** A run service over `dir` (a fresh temp dir when not given), recovered as at start. */
async function open(
  options: { dir?: string; maxQueuedRuns?: number; tenantConcurrency?: number } = {},
): Promise<Engine> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'sluice-run-service-'));
  if (!options.dir) dirs.push(dir);
  const stores = openLmdbStores(dir, { listScanLimit: 1000, reserve: noReserve(dir) });
  const repo = new RegistryRepository({
    path: join(dir, 'registry'),
    cacheDir: join(dir, 'versions'),
    seedDir: join(root, 'automations'),
  });
  const registry = new AutomationRegistry(stores.automations, repo, 60_000);
  await registry.init();
  const pool = new RunPool({ threads: 1, cancelGraceMs: 300, diskReserveBytes: 0 });
  const queue = new LocalRunQueue(stores.runs, {
    tenantConcurrency: options.tenantConcurrency ?? 0,
    automationConcurrency: 0,
  });
  const runs = new RunService(stores.runs, registry, pool, {
    runsDir: join(dir, 'runs'),
    maxQueuedRuns: options.maxQueuedRuns ?? 100,
    providers: {},
    log: createLogger('run-service-test'),
    blobs: stores.blobs,
    queue,
    sharing: localOnly,
    capacity: 1,
    tracing: NO_TRACING,
  });
  await runs.recover();
  return {
    dir,
    stores,
    queue,
    runs,
    async close() {
      await runs.close();
      queue.close();
      await pool.close();
      await stores.close();
    },
  };
}

const report = (input: Record<string, unknown>) => ({ target: 'workflows.text-report', input, principal });

/** The pool's one thread busy with a slow run and one run queued behind it (the bound of 1 reached). */
async function fillQueue(e: Engine): Promise<{ slow: RunRecord; queued: RunRecord }> {
  const slow = await e.runs.start(report({ text: 'slow', delay_ms: 60_000 }));
  await waitUntil('the slow run to start', async () => (await e.runs.get(slow.id))?.status === 'running');
  const queued = await e.runs.start(report({ text: 'queued' }));
  return { slow, queued };
}

describe('RunService over the in-process queue', () => {
  it('runs a workflow end to end: events in order, its small output file stored with the run', async () => {
    const e = await open();
    try {
      const started = await e.runs.start(report({ text: 'hello hello world' }));
      assert.equal(started.status, 'pending');
      const done = await e.runs.waitFor(started.id, HANG_MS);
      assert.equal(done.status, 'completed');
      assert.equal((done.output as { text: string }).text, 'hello hello world');
      const types = (await e.runs.events(started.id)).map((ev) => ev.type);
      assert.deepEqual(types.slice(0, 3), ['run.created', 'run.queued', 'run.started']);
      assert.equal(types.at(-1), 'run.completed');
      const seqs = (await e.runs.events(started.id)).map((ev) => ev.seq);
      assert.deepEqual(
        seqs,
        seqs.map((_, i) => i + 1),
        'seqs count up without gaps',
      );
      const output = done.files.find((f) => f.role === 'output');
      assert.ok(output);
      // Kept off the disk by the worker: no folder until the file is read, then written from
      // the bytes stored with the run.
      assert.equal(existsSync(e.runs.runDir(done.id)), false, 'no run folder');
      const stored = await e.stores.runs.keptFile(done.id, output.path);
      assert.ok(stored && stored.length === output.size);
      assert.match(stored.toString(), /^# Text report/);
      const path = await e.runs.localFile(done, output);
      assert.equal(path, join(e.runs.runDir(done.id), output.path));
      assert.deepEqual(readFileSync(path), stored);
      assert.deepEqual(await e.stores.runs.get(done.id), done, 'the stored record is the final one');
    } finally {
      await e.close();
    }
  });

  it('writes an output file past KEPT_FILE_BYTES to the run folder, and stores none with the run', async () => {
    const e = await open();
    try {
      const text = 'word '.repeat(KEPT_FILE_BYTES / 4);
      const started = await e.runs.start(report({ text }));
      const done = await e.runs.waitFor(started.id, HANG_MS);
      assert.equal(done.status, 'completed');
      const output = done.files.find((f) => f.role === 'output');
      assert.ok(output && output.size > KEPT_FILE_BYTES);
      const onDisk = join(e.runs.runDir(done.id), output.path);
      assert.equal(statSync(onDisk).size, output.size);
      assert.equal(await e.stores.runs.keptFile(done.id, output.path), undefined);
      assert.equal(await e.runs.localFile(done, output), onDisk);
    } finally {
      await e.close();
    }
  });

  it('removes the files stored with a run when the ended run is removed', async () => {
    const e = await open();
    try {
      const started = await e.runs.start(report({ text: 'removed with its run' }));
      const done = await e.runs.waitFor(started.id, HANG_MS);
      const output = done.files.find((f) => f.role === 'output')!;
      assert.ok(await e.stores.runs.keptFile(done.id, output.path));
      const other = await e.runs.waitFor((await e.runs.start(report({ text: 'kept' }))).id, HANG_MS);
      assert.ok((await e.stores.runs.removeEnded(done.id))?.run);
      assert.equal(await e.stores.runs.keptFile(done.id, output.path), undefined);
      assert.ok(await e.stores.runs.keptFile(other.id, output.path), "another run's file stays");
    } finally {
      await e.close();
    }
  });

  it('makes no folder for a run that writes no files', async () => {
    const e = await open();
    try {
      const started = await e.runs.start({
        target: 'agents.echo-agent',
        input: { text: 'no files' },
        principal,
      });
      const done = await e.runs.waitFor(started.id, HANG_MS);
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.files, []);
      assert.equal(existsSync(e.runs.runDir(done.id)), false);
    } finally {
      await e.close();
    }
  });

  it('refuses a start over the queued-runs bound without leaving its staged input files behind', async () => {
    const e = await open({ maxQueuedRuns: 1 });
    try {
      const { slow, queued } = await fillQueue(e);
      const upload = join(e.dir, 'upload.txt');
      writeFileSync(upload, 'an input file');
      const folders = () => (existsSync(join(e.dir, 'runs')) ? readdirSync(join(e.dir, 'runs')) : []);
      const before = folders();
      await assert.rejects(
        e.runs.start({
          ...report({ text: 'over' }),
          files: [
            {
              field: 'doc',
              filename: 'upload.txt',
              contentType: 'text/plain',
              size: 13,
              sha256: createHash('sha256').update('an input file').digest('hex'),
              source: { path: upload },
              fileId: null,
            },
          ],
        }),
        (err: ApiError) => err.status === 429 && err.code === 'too_many_queued_runs',
      );
      assert.deepEqual(folders(), before, 'no folder left for the refused run');
      for (const id of [queued.id, slow.id]) await e.runs.cancel(id);
      assert.equal((await e.runs.waitFor(slow.id, HANG_MS)).status, 'cancelled');
    } finally {
      await e.close();
    }
  });

  it('keeps a run queued while the pool is full, cancels it out of the queue, and cancels the running one', async () => {
    const e = await open({ maxQueuedRuns: 1 });
    try {
      const { slow, queued } = await fillQueue(e);
      assert.equal((await e.runs.get(queued.id))?.status, 'pending');
      // The bound on queued runs: one is waiting, so the next start is refused.
      await assert.rejects(e.runs.start(report({ text: 'over' })), (err: ApiError) => {
        assert.equal(err.status, 429);
        assert.equal(err.code, 'too_many_queued_runs');
        return true;
      });
      const waiting = e.runs.waitFor(queued.id, 0);
      const c1 = await e.runs.cancel(queued.id);
      assert.equal(c1.state, 'cancelled');
      assert.equal(c1.run.status, 'cancelled');
      assert.equal((await waiting).status, 'cancelled');
      assert.deepEqual(
        (await e.runs.events(queued.id)).map((ev) => ev.type),
        ['run.created', 'run.queued', 'run.cancelled'],
      );
      const c2 = await e.runs.cancel(slow.id);
      assert.equal(c2.state, 'requested');
      assert.equal((await e.runs.waitFor(slow.id, HANG_MS)).status, 'cancelled');
      assert.equal((await e.runs.cancel(slow.id)).state, 'already_terminal');
    } finally {
      await e.close();
    }
  });

  it('holds a tenant to its concurrency limit: its second run waits while another tenant runs', async () => {
    const e = await open({ tenantConcurrency: 1 });
    try {
      const first = await e.runs.start(report({ text: 'a', delay_ms: 60_000 }));
      await waitUntil(
        'the first run to start',
        async () => (await e.runs.get(first.id))?.status === 'running',
      );
      const second = await e.runs.start(report({ text: 'b' }));
      await e.runs.cancel(first.id);
      const done = await e.runs.waitFor(second.id, HANG_MS);
      assert.equal(done.status, 'completed');
      const a = (await e.runs.get(first.id))!;
      assert.ok(a.completedAt! <= done.startedAt!, 'the second started only after the first ended');
    } finally {
      await e.close();
    }
  });

  it('puts its executing run back at shutdown; the next start ends it as interrupted and runs the queued one', async () => {
    const e = await open();
    const slow = await e.runs.start(report({ text: 'slow', delay_ms: 60_000 }));
    await waitUntil('the slow run to start', async () => (await e.runs.get(slow.id))?.status === 'running');
    const queued = await e.runs.start(report({ text: 'after restart' }));
    await e.close();
    // Nothing of either run was ended by the shutdown.
    const reopened = openLmdbStores(e.dir, { listScanLimit: 1000, reserve: noReserve(e.dir) });
    assert.equal((await reopened.runs.get(slow.id))?.status, 'running');
    assert.equal((await reopened.runs.get(queued.id))?.status, 'pending');
    await reopened.close();

    const again = await open({ dir: e.dir });
    try {
      const cut = (await again.runs.get(slow.id))!;
      assert.equal(cut.status, 'failed');
      assert.equal(cut.errorCode, 'service_interrupted');
      const done = await again.runs.waitFor(queued.id, HANG_MS);
      assert.equal(done.status, 'completed');
      assert.equal((done.output as { text: string }).text, 'after restart');
    } finally {
      await again.close();
    }
  });
});
