// A full disk is an answer, not a crash: `sluice serve` with its data directory on a small tmpfs
// (mounted here; root only), filled in turn by streams produce, file uploads, dataset imports and
// automation runs with output files. Each time the write that does not fit gets 507 naming its
// store, the process stays up (same pid; the rate limit service and reads keep answering), and
// once the mount is enlarged everything acknowledged reads back and new writes succeed.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { zipSync, strToU8 } from 'fflate';
import { freeSluicePorts, SluiceProcess } from '../helpers/sluice-process.js';
import { HANG_MS, waitUntil } from '../helpers/wait.js';

const TOKEN = 'full-disk-test-token';
const MiB = 1024 * 1024;
const CRASH_WORDS = /Assertion|corrupted|Aborted|Segmentation|unhandled/i;

function tryMount(dir: string, sizeMiB: number): string | undefined {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m`, 'tmpfs', dir], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error).trim();
  }
}

const remount = (dir: string, sizeMiB: number) =>
  execFileSync('mount', ['-o', `remount,size=${sizeMiB}m`, dir], { stdio: 'pipe' });

test('sluice serve on a filling disk answers 507, keeps serving, and writes again once space is freed', async (t) => {
  const mnt = mkdtempSync(join(tmpdir(), 'sluice-full-disk-'));
  let size = 40;
  const failed = tryMount(mnt, size);
  if (failed !== undefined) {
    rmSync(mnt, { recursive: true, force: true });
    t.skip(`cannot mount a tmpfs here (needs root): ${failed}`);
    return;
  }
  const dataDir = join(mnt, 'data');
  mkdirSync(dataDir);
  const ports = await freeSluicePorts();
  const proc = new SluiceProcess({
    dataDir,
    ports,
    args: ['serve', '--threads', '1'],
    fromSource: true,
    detached: false,
    env: { SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_DISK_RESERVE: '8MiB' },
  });
  const { child } = proc;
  const pid = child.pid;
  const logs = () => `stdout:\n${proc.stdout.slice(-4000)}\nstderr:\n${proc.stderr.slice(-4000)}`;

  const auth = { authorization: `Bearer ${TOKEN}` };
  const streams = `http://127.0.0.1:${ports.STREAMS_PORT}`;
  const api = `http://127.0.0.1:${ports.AUTOMATION_PORT}/api/v1`;
  const V2 = 'application/vnd.streams.json.v2+json';

  /** The process is the one started, still running, and every service answers a read. */
  const assertServing = async (when: string) => {
    assert.equal(child.exitCode, null, `${when}: the process exited; ${logs()}`);
    assert.equal(child.pid, pid);
    const health = await fetch(`http://127.0.0.1:${ports.PORT}/healthcheck`);
    assert.equal(health.status, 200, `${when}: rate limit /healthcheck`);
    await health.arrayBuffer();
    const check = await fetch(`${api}/auth/check`, { headers: auth });
    assert.equal(check.status, 200, `${when}: automation GET /auth/check`);
    await check.arrayBuffer();
    const topics = await fetch(`${streams}/streams/topics`, { headers: auth });
    assert.equal(topics.status, 200, `${when}: streams GET /streams/topics`);
    await topics.arrayBuffer();
  };
  /** A 507 whose body names the store. */
  const assertFull = async (res: Response, store: RegExp, what: string) => {
    const text = await res.text();
    assert.equal(res.status, 507, `${what}: ${text}`);
    assert.match(text, store, `${what}: the body names the store`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const enlarge = (by: number) => {
    size += by;
    remount(mnt, size);
  };

  try {
    await waitUntil(
      'all three services to answer',
      async () => {
        if (child.exitCode !== null) throw new Error(`sluice exited at start; ${logs()}`);
        try {
          await assertServing('start');
          return true;
        } catch {
          return false;
        }
      },
      { intervalMs: 100 },
    );

    // ---- 1. streams produce: 100 records of 1 KB per request until the disk is full.
    const created = await fetch(`${streams}/streams/topics/topic`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ topic_name: 'fill', partitions: 3 }),
    });
    assert.equal(created.status, 200, await created.text());
    const acked = new Map<string, string>(); // "p/offset" → id
    const padding = 'x'.repeat(1000);
    const produce = (batch: number) =>
      fetch(`${streams}/streams/topic/fill`, {
        method: 'POST',
        headers: { ...auth, 'content-type': V2 },
        body: JSON.stringify({
          records: Array.from({ length: 100 }, (_, i) => ({ value: { id: `${batch}-${i}`, padding } })),
        }),
      });
    const record = async (res: Response, batch: number) => {
      const { offsets } = (await res.json()) as { offsets: Array<{ partition: number; offset: number }> };
      offsets.forEach((o, i) => acked.set(`${o.partition}/${o.offset}`, `${batch}-${i}`));
    };
    let batch = 0;
    let refused: Response | undefined;
    for (; batch < 10_000 && !refused; batch++) {
      const res = await produce(batch);
      if (res.status === 200) await record(res, batch);
      else refused = res;
    }
    assert.ok(refused, 'the disk filled');
    assert.ok(acked.size > 0, 'records were acknowledged before the disk filled');
    const body = await assertFull(refused, /streams log/, 'produce on a full disk');
    assert.equal(body['error_code'], 50701);
    await assertServing('streams disk full');
    // Reads keep working while full.
    const partial = await fetch(`${streams}/streams/topics/fill/partitions/0/records?offset=0&count=5`, {
      headers: { ...auth, accept: V2 },
    });
    assert.equal(partial.status, 200);
    assert.equal(((await partial.json()) as unknown[]).length, 5);
    enlarge(24);
    const afterStreams = await waitUntil('a produce to succeed after the mount grew', async () => {
      const res = await produce(batch);
      if (res.status === 200) return res;
      await res.arrayBuffer();
      return false;
    });
    await record(afterStreams, batch++);
    for (let p = 0; p < 3; p++) {
      const stored = await readPartition(streams, auth, p);
      for (const [key, id] of acked) {
        if (!key.startsWith(`${p}/`)) continue;
        assert.equal(stored.get(Number(key.slice(2))), id, `acknowledged record ${key}`);
      }
    }

    // ---- 2. file uploads of 1 MiB until the disk is full.
    const uploaded = new Map<string, Buffer>();
    refused = undefined;
    for (let i = 0; i < 1000 && !refused; i++) {
      const bytes = randomBytes(MiB);
      const res = await fetch(`${api}/files`, { method: 'POST', headers: auth, body: fileForm(bytes) });
      if (res.status === 200 || res.status === 201)
        uploaded.set(((await res.json()) as { id: string }).id, bytes);
      else refused = res;
    }
    assert.ok(refused && uploaded.size > 0, 'uploads filled the disk');
    await assertFull(refused, /automation store/, 'upload on a full disk');
    await assertServing('uploads disk full');
    enlarge(24);
    await waitUntil('an upload to succeed after the mount grew', async () => {
      const bytes = randomBytes(MiB);
      const res = await fetch(`${api}/files`, { method: 'POST', headers: auth, body: fileForm(bytes) });
      if (res.status !== 200 && res.status !== 201) return (await res.arrayBuffer(), false);
      uploaded.set(((await res.json()) as { id: string }).id, bytes);
      return true;
    });
    for (const [id, bytes] of uploaded) {
      const res = await fetch(`${api}/files/${id}/content`, { headers: auth });
      assert.equal(res.status, 200);
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(bytes), `file ${id} reads back`);
    }

    // ---- 3. dataset imports of one example with a 1 MiB input file until the disk is full.
    const A = 'workflows.text-report';
    const imported: string[] = [];
    const importOne = (name: string) =>
      fetch(`${api}/automations/${A}/dataset/import`, {
        method: 'POST',
        headers: auth,
        body: importForm(
          zipSync({
            [`examples/${name}/input.json`]: strToU8(
              JSON.stringify({ text: name, doc: { $file: 'input/a.bin' } }),
            ),
            [`examples/${name}/input/a.bin`]: randomBytes(MiB),
          }),
        ),
      });
    refused = undefined;
    for (let i = 0; i < 1000 && !refused; i++) {
      const res = await importOne(`ex-${i}`);
      if (res.status === 200) {
        await res.arrayBuffer();
        imported.push(`ex-${i}`);
      } else refused = res;
    }
    assert.ok(refused && imported.length > 0, 'dataset imports filled the disk');
    await assertFull(refused, /automation store/, 'dataset import on a full disk');
    await assertServing('imports disk full');
    enlarge(24);
    await waitUntil('an import to succeed after the mount grew', async () => {
      const res = await importOne('after-full');
      await res.arrayBuffer();
      return res.status === 200;
    });
    const examples = (await (
      await fetch(`${api}/automations/${A}/examples?limit=1000`, { headers: auth })
    ).json()) as {
      data: Array<{ name: string }>;
    };
    const names = new Set(examples.data.map((e) => e.name));
    for (const name of [...imported, 'after-full']) assert.ok(names.has(name), `example ${name} was kept`);

    // ---- 4. runs whose output file holds their 1 MiB input text, until the disk is full.
    const runOne = (i: number) =>
      fetch(`${api}/runs?wait_for_completion=120`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ target: A, input: { text: `run${i} ` + 'word '.repeat(MiB / 5) } }),
      });
    const completed: string[] = [];
    let stopped: string | undefined;
    for (let i = 0; i < 1000 && stopped === undefined; i++) {
      const res = await runOne(i);
      const text = await res.text();
      if (res.status === 507) {
        assert.match(text, /automation store/);
        stopped = 'refused';
        break;
      }
      assert.equal(res.status, 200, text);
      const run = JSON.parse(text) as { id: string; execution: { status: string }; error?: unknown };
      if (run.execution.status === 'completed') completed.push(run.id);
      else {
        // The run's output write was refused by the reserve: the run failed, saying why.
        assert.match(JSON.stringify(run), /insufficient storage/, text);
        stopped = 'run failed';
      }
    }
    assert.ok(stopped && completed.length > 0, 'runs filled the disk');
    t.diagnostic(
      `acknowledged before each fill stopped: ${acked.size} records, ${uploaded.size} files, ` +
        `${imported.length} imports, ${completed.length} runs (then: ${stopped})`,
    );
    await assertServing('runs disk full');
    enlarge(32);
    await waitUntil('a run to complete after the mount grew', async () => {
      const res = await runOne(9999);
      const text = await res.text();
      if (res.status !== 200) return false;
      const run = JSON.parse(text) as { id: string; execution: { status: string } };
      if (run.execution.status !== 'completed') return false;
      completed.push(run.id);
      return true;
    });
    for (const id of completed) {
      const res = await fetch(`${api}/runs/${id}/artifacts/output/report.md`, { headers: auth });
      assert.equal(res.status, 200, `run ${id}'s report`);
      assert.match(await res.text(), /# Text report/);
    }
    await assertServing('end');
    assert.doesNotMatch(proc.stderr, CRASH_WORDS, logs());
    assert.match(proc.stdout + proc.stderr, /disk nearly full: writes to the streams log are refused/);
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    const code = await Promise.race([
      proc.exited.then((e) => e.code),
      new Promise<'hang'>((r) => setTimeout(() => r('hang'), HANG_MS).unref()),
    ]);
    if (code === 'hang') child.kill('SIGKILL');
    try {
      execFileSync('umount', [mnt], { stdio: 'pipe' });
    } finally {
      rmSync(mnt, { recursive: true, force: true });
    }
    assert.equal(code, 0, `exit code after SIGTERM; ${logs()}`);
    assert.doesNotMatch(proc.stderr, CRASH_WORDS, logs());
  }
});

function fileForm(bytes: Buffer): FormData {
  const form = new FormData();
  form.set('file', new Blob([bytes]), 'blob.bin');
  return form;
}

function importForm(zip: Uint8Array): FormData {
  const form = new FormData();
  form.set('file', new Blob([zip], { type: 'application/zip' }), 'dataset.zip');
  form.set('mode', 'append');
  return form;
}

/** Every record of a partition: offset → the `id` of its value. */
async function readPartition(
  base: string,
  auth: Record<string, string>,
  p: number,
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (let offset = 0; ;) {
    const res = await fetch(
      `${base}/streams/topics/fill/partitions/${p}/records?offset=${offset}&count=1000`,
      {
        headers: { ...auth, accept: 'application/vnd.streams.json.v2+json' },
      },
    );
    assert.equal(res.status, 200);
    const records = (await res.json()) as Array<{ offset: number; value: { id: string } }>;
    if (records.length === 0) return out;
    for (const r of records) out.set(r.offset, r.value.id);
    offset = records[records.length - 1]!.offset + 1;
  }
}
