// The run pool on its own: real worker threads running small workflow modules written to a temp
// folder. Runs share each thread's one channel, so these check that reports reach the right run,
// that a thread which dies fails exactly the run it was running, and that cancel and timeouts
// still end runs.

import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { RunPool } from '../../src/automation/executor/pool.js';
import {
  KEPT_FILE_BYTES,
  KEPT_RUN_BYTES,
  type RunTask,
  type WorkerMessage,
} from '../../src/automation/executor/protocol.js';
import { waitUntil } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-run-pool-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const modules: Record<string, string> = {
  // Echoes its input after a step, so a run's output names the run it belongs to.
  'echo.mjs': `export default { steps: [{ name: 'echo', run: (ctx) => ctx.input }] };`,
  // Ends its thread in the middle of a step.
  'exit.mjs': `import { setTimeout as wait } from 'node:timers/promises';
export default { steps: [{ name: 'exit', run: async () => { await wait(1); process.exit(3); } }] };`,
  // Throws outside the run (an uncaught exception), which ends the thread.
  'throw.mjs': `export default { steps: [{ name: 'throw', run: () => new Promise(() => { setImmediate(() => { throw new Error('escaped'); }); }) }] };`,
  // Waits until it is cancelled (cooperative).
  'wait.mjs': `export default { steps: [{ name: 'wait', run: (ctx) => new Promise((_, reject) => {
    ctx.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
  }) }] };`,
  // Never yields to the thread's event loop: only terminating the thread stops it.
  'spin.mjs': `export default { steps: [{ name: 'spin', run: () => { for (;;) {} } }] };`,
  // Writes small and large versions of output files: kept off the disk up to KEPT_FILE_BYTES.
  'files.mjs': `export default { steps: [{ name: 'write', run: async (ctx) => {
    const { small, large } = ctx.input;
    const bytes = new Uint8Array(small).fill(98);
    await ctx.files.write('a.txt', 'x'.repeat(large));
    await ctx.files.write('a.txt', 'y'.repeat(small));
    await ctx.files.write('b.bin', bytes);
    bytes.fill(99);
    await ctx.files.write('c.txt', 'z'.repeat(small));
    await ctx.files.write('c.txt', 'w'.repeat(large));
  } }] };`,
  // Writes \`count\` files of \`size\` bytes each.
  'many.mjs': `export default { steps: [{ name: 'write', run: async (ctx) => {
    for (let i = 0; i < ctx.input.count; i++) await ctx.files.write('f' + i + '.bin', new Uint8Array(ctx.input.size));
  } }] };`,
  // Two steps, the first logging.
  'steps.mjs': `export default { steps: [
    { name: 'one', run: (ctx) => { ctx.log('first'); return 1; } },
    { name: 'two', run: () => 2 },
  ] };`,
};
for (const [name, text] of Object.entries(modules)) writeFileSync(join(dir, name), text);

function task(runId: string, entry: string, input: unknown = null): Omit<RunTask, 'diskReserveBytes'> {
  return {
    runId,
    kind: 'workflow',
    packageDir: dir,
    entry,
    manifest: {},
    input,
    metadata: {},
    files: [],
    overrides: {},
    outputDir: join(dir, 'out', runId),
    providers: {},
  };
}

describe('run pool: one channel per thread', () => {
  const pool = new RunPool({ threads: 2, cancelGraceMs: 200, diskReserveBytes: 0 });
  after(() => pool.close());

  it('gives every run its own reports and output when many runs share two threads', async () => {
    const seen = new Map<string, WorkerMessage[]>();
    const handles = Array.from({ length: 20 }, (_, i) => {
      const id = `run-${i}`;
      seen.set(id, []);
      return pool.submit(task(id, i % 2 ? 'echo.mjs' : 'steps.mjs', { id }), (m) => seen.get(id)!.push(m), 0);
    });
    const outcomes = await Promise.all(handles.map((h) => h.outcome));
    outcomes.forEach((o, i) => {
      assert.equal(o.kind, 'completed');
      if (i % 2 && o.kind === 'completed') assert.deepEqual(o.output, { id: `run-${i}` });
      const types = seen.get(`run-${i}`)!.map((m) => m.t);
      assert.equal(types[0], 'started');
      assert.equal(types.at(-1), 'done');
      assert.equal(types.filter((t) => t === 'step').length, i % 2 ? 1 : 2);
    });
    assert.equal(pool.busy, 0);
  });

  it('fails exactly the run whose thread exits, and the next runs get a new thread', async () => {
    const slow = pool.submit(task('waits', 'wait.mjs'), () => {}, 0);
    const dies = pool.submit(task('dies', 'exit.mjs'), () => {}, 0);
    await waitStarted(slow);
    const crashed = await dies.outcome;
    assert.equal(crashed.kind, 'failed');
    if (crashed.kind === 'failed') assert.equal(crashed.error.code, 'worker_crashed');
    // The other thread's run is untouched by the crash: it still runs until cancelled.
    assert.equal(pool.busy, 1);
    const after = await pool.submit(task('after', 'echo.mjs', 'ok'), () => {}, 0).outcome;
    assert.deepEqual(after, { kind: 'completed', output: 'ok' });
    slow.cancel('test over');
    assert.equal((await slow.outcome).kind, 'cancelled');
  });

  it('fails the run whose thread has an uncaught exception, naming it', async () => {
    const outcome = await pool.submit(task('throws', 'throw.mjs'), () => {}, 0).outcome;
    assert.equal(outcome.kind, 'failed');
    if (outcome.kind === 'failed') {
      assert.equal(outcome.error.code, 'worker_crashed');
      assert.match(outcome.error.message, /escaped/);
    }
  });

  it('cancels cooperatively, and terminates a run that does not stop after the grace', async () => {
    const waits = pool.submit(task('coop', 'wait.mjs'), () => {}, 0);
    const spins = pool.submit(task('spin', 'spin.mjs'), () => {}, 0);
    await waitStarted(waits);
    await waitStarted(spins);
    waits.cancel('asked');
    spins.cancel('asked');
    const [a, b] = await Promise.all([waits.outcome, spins.outcome]);
    assert.equal(a.kind, 'cancelled');
    assert.equal(b.kind, 'cancelled');
    if (b.kind === 'cancelled') assert.match(b.error.message, /worker terminated after the grace period/);
    assert.deepEqual(await pool.submit(task('later', 'echo.mjs', 1), () => {}, 0).outcome, {
      kind: 'completed',
      output: 1,
    });
  });

  it('times out a run, and cancels a run still waiting for a thread without running it', async () => {
    const first = pool.submit(task('t1', 'wait.mjs'), () => {}, 100);
    const second = pool.submit(task('t2', 'wait.mjs'), () => {}, 0);
    const queued: WorkerMessage[] = [];
    const third = pool.submit(task('t3', 'echo.mjs'), (m) => queued.push(m), 0);
    third.cancel('not wanted');
    assert.equal((await third.outcome).kind, 'cancelled');
    assert.deepEqual(queued, []);
    const timedOut = await first.outcome;
    assert.equal(timedOut.kind, 'failed');
    if (timedOut.kind === 'failed') assert.equal(timedOut.error.code, 'run_timeout');
    second.cancel('done');
    assert.equal((await second.outcome).kind, 'cancelled');
  });
});

describe('run pool: output files', () => {
  const pool = new RunPool({ threads: 1, cancelGraceMs: 200, diskReserveBytes: 0 });
  after(() => pool.close());

  it('keeps small files off the disk, their bytes in the report; the latest version wins', async () => {
    const seen: WorkerMessage[] = [];
    const small = 10;
    const large = KEPT_FILE_BYTES + 1;
    const t = task('files', 'files.mjs', { small, large });
    const outcome = await pool.submit(t, (m) => seen.push(m), 0).outcome;
    assert.equal(outcome.kind, 'completed');
    const files = seen.flatMap((m) => (m.t === 'file' ? [m.file] : []));
    assert.deepEqual(
      files.map((f) => [
        f.name,
        f.size,
        f.content === undefined ? 'disk' : Buffer.from(f.content).toString(),
      ]),
      [
        ['a.txt', large, 'disk'],
        ['a.txt', small, 'y'.repeat(small)],
        ['b.bin', small, 'b'.repeat(small)],
        ['c.txt', small, 'z'.repeat(small)],
        ['c.txt', large, 'disk'],
      ],
    );
    // The large a.txt was removed when its small version was kept; the large c.txt is there.
    assert.equal(existsSync(join(t.outputDir, 'a.txt')), false);
    assert.equal(existsSync(join(t.outputDir, 'b.bin')), false);
    assert.equal(readFileSync(join(t.outputDir, 'c.txt'), 'utf8'), 'w'.repeat(large));
  });

  it("writes a run's files to the disk once KEPT_RUN_BYTES of them were kept", async () => {
    const seen: WorkerMessage[] = [];
    const count = KEPT_RUN_BYTES / KEPT_FILE_BYTES + 2;
    const t = task('many', 'many.mjs', { count, size: KEPT_FILE_BYTES });
    assert.equal((await pool.submit(t, (m) => seen.push(m), 0).outcome).kind, 'completed');
    const where = seen.flatMap((m) => (m.t === 'file' ? [m.file.content ? 'kept' : 'disk'] : []));
    assert.deepEqual(where, [...Array(count - 2).fill('kept'), 'disk', 'disk']);
    assert.equal(readFileSync(join(t.outputDir, `f${count - 1}.bin`)).length, KEPT_FILE_BYTES);
  });
});

function waitStarted(h: { started: boolean }): Promise<true> {
  return waitUntil('the run to start', () => h.started);
}
