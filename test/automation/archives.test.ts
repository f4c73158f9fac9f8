// Archive security and robustness: hostile ZIPs built byte by byte are refused with a JSON error
// and leave nothing behind; archive work runs in the archive pool, so the service keeps
// answering while it is in progress; exports past the limits are a 413 naming the limit.

import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { strToU8, unzipSync } from 'fflate';
import { startAutomation, type RunningAutomation } from '../../src/automation/index.js';
import { makeTestContext, type TestContext } from '../helpers/context.js';
import { localRecord, rawZip, type RawEntry } from '../helpers/zip.js';

const A = 'workflows.text-report';
const LIMITS = { bytes: 256 * 1024, uncompressed: 1024 * 1024, entries: 20 };
// A name no other test or process uses: the targets the hostile archives aim at.
const unique = `sluice-zipslip-${randomBytes(8).toString('hex')}`;
const up = '../'.repeat(24);

let root: string;
let ctx: TestContext;
let service: RunningAutomation;

async function api(
  method: string,
  path: string,
  opts: { json?: unknown; raw?: Uint8Array | FormData; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const headers: Record<string, string> = { authorization: `Bearer ${ctx.token}`, ...opts.headers };
  let body: string | Uint8Array | FormData | undefined = opts.raw;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  const res = await fetch(`${service.url}/api/v1${path}`, { method, headers, ...(body ? { body } : {}) });
  const type = res.headers.get('content-type') ?? '';
  const parsed = type.includes('json') ? await res.json() : Buffer.from(await res.arrayBuffer());
  return { status: res.status, body: parsed, headers: res.headers };
}

function importZip(zip: Uint8Array, mode = 'append') {
  const form = new FormData();
  form.append('file', new Blob([zip], { type: 'application/zip' }), 'd.zip');
  return api('POST', `/automations/${A}/dataset/import?mode=${mode}`, { raw: form });
}

/** Every path under the test's root with its size; LMDB files change size on their own. */
function snapshot(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      const rel = relative(root, path);
      if (e.isDirectory()) {
        out.push(`${rel}/`);
        walk(path);
      } else out.push(e.name.endsWith('.mdb') ? rel : `${rel} ${statSync(path).size}`);
    }
  };
  walk(root);
  return out.sort();
}

/** Files named like the hostile targets anywhere under `dir` (and its subfolders). */
function findTargets(dir: string): string[] {
  const hits: string[] = [];
  const walk = (d: string) => {
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name.includes(unique)) hits.push(join(d, e.name));
      else if (e.isDirectory() && d.startsWith(root)) walk(join(d, e.name));
    }
  };
  walk(dir);
  return hits;
}

const file = (name: string, text: string, extra: Partial<RawEntry> = {}): RawEntry => ({
  name,
  data: strToU8(text),
  ...extra,
});
const json = (name: string) => file(`examples/${name}/input.json`, JSON.stringify({ text: 'x' }));

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'sluice-archives-'));
  ctx = await makeTestContext({
    dataDir: join(root, 'data'),
    env: {
      AUTOMATION_POOL_THREADS: '1',
      AUTOMATION_ARCHIVE_MAX_BYTES: String(LIMITS.bytes),
      AUTOMATION_ARCHIVE_MAX_UNCOMPRESSED_BYTES: String(LIMITS.uncompressed),
      AUTOMATION_ARCHIVE_MAX_ENTRIES: String(LIMITS.entries),
    },
  });
  service = await startAutomation(ctx.ctx);
});

after(async () => {
  await service?.close();
  await ctx?.cleanup();
  rmSync(root, { recursive: true, force: true });
  // Only there if a check failed (the code before the fix wrote it).
  rmSync(join('/tmp', unique), { force: true });
});

describe('dataset archive import', () => {
  it('accepts a well-formed hand-built archive (stored, deflated, with data descriptors)', async () => {
    const res = await importZip(
      rawZip([
        json('ex_ok'),
        file('examples/ex_ok/input/a.txt', 'stored', { method: 0 }),
        file('examples/ex_ok/input/dir/b.txt', 'deflated '.repeat(50)),
        file('examples/ex_ok/expected/c.txt', 'described', { descriptor: true }),
      ]),
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.created, 1);
    for (const dir of ['tmp', 'blobs/tmp'].map((d) => join(root, 'data/automation', d)))
      assert.deepEqual(existsSync(dir) ? readdirSync(dir) : [], [], `no temp file left in ${dir}`);
    const zip = await api('GET', `/automations/${A}/dataset/export`);
    assert.equal(zip.status, 200);
    const entries = unzipSync(new Uint8Array(zip.body));
    assert.equal(Buffer.from(entries['examples/ex_ok/input/dir/b.txt']!).toString(), 'deflated '.repeat(50));
    assert.equal(Buffer.from(entries['examples/ex_ok/expected/c.txt']!).toString(), 'described');
  });

  const hostile: [string, () => Uint8Array, number, string][] = [
    [
      'a local name that escapes behind a safe central name',
      () =>
        rawZip([
          json('ex1'),
          file('examples/ex1/input/a.txt', 'x', { localName: `examples/ex1/input/${up}tmp/${unique}` }),
        ]),
      400,
      'name_mismatch',
    ],
    [
      'the same trick on a stored entry with a same-length local name',
      () => {
        const safe = `examples/ex1/input/${'a'.repeat(up.length + 4 + unique.length)}`;
        const evil = `examples/ex1/input/${up}tmp/${unique}`;
        assert.equal(safe.length, evil.length);
        return rawZip([json('ex1'), file(safe, 'x', { localName: evil, method: 0 })]);
      },
      400,
      'name_mismatch',
    ],
    [
      'local and central sizes that disagree',
      () => rawZip([json('ex1'), file('examples/ex1/input/a.txt', 'hello', { local: { size: 3 } })]),
      400,
      'header_mismatch',
    ],
    [
      'a CRC that disagrees between the headers',
      () => rawZip([json('ex1'), file('examples/ex1/input/a.txt', 'hello', { local: { crc: 1 } })]),
      400,
      'header_mismatch',
    ],
    [
      'data that inflates past the size both headers declare',
      () =>
        rawZip([
          json('ex1'),
          file('examples/ex1/input/a.txt', 'y'.repeat(5000), { local: { size: 10 }, central: { size: 10 } }),
        ]),
      400,
      'size_mismatch',
    ],
    [
      'data that fails the CRC-32 both headers declare',
      () =>
        rawZip([
          json('ex1'),
          file('examples/ex1/input/a.txt', 'hello', { local: { crc: 1 }, central: { crc: 1 } }),
        ]),
      400,
      'crc_mismatch',
    ],
    [
      'deflate data that is not deflate',
      () =>
        rawZip([
          json('ex1'),
          file('examples/ex1/input/a.txt', 'hello', { body: new Uint8Array([0xff, 0xff, 0xff, 0xff]) }),
        ]),
      400,
      'invalid_archive',
    ],
    [
      'a .. name',
      () => rawZip([json('ex1'), file(`examples/ex1/input/${up}tmp/${unique}`, 'x')]),
      400,
      'unsafe_path',
    ],
    ['an absolute name', () => rawZip([json('ex1'), file(`/tmp/${unique}`, 'x')]), 400, 'unsafe_path'],
    [
      'backslashes',
      () => rawZip([json('ex1'), file(`examples\\ex1\\input\\..\\..\\..\\..\\${unique}`, 'x')]),
      400,
      'unsafe_path',
    ],
    [
      'backslashes inside a folder',
      () => rawZip([json('ex1'), file(`examples/ex1/input/..\\..\\..\\${unique}`, 'x')]),
      400,
      'unsafe_path',
    ],
    [
      'a NUL in a name',
      () => rawZip([json('ex1'), file(`examples/ex1/input/${unique}\0.txt`, 'x')]),
      400,
      'unsafe_path',
    ],
    [
      'a symlink entry',
      () =>
        rawZip([
          json('ex1'),
          file('examples/ex1/input/link', `/tmp/${unique}`, { unixMode: 0o120777, method: 0 }),
        ]),
      400,
      'symlink_entry',
    ],
    [
      'two entries with the same name',
      () =>
        rawZip([
          json('ex1'),
          file('examples/ex1/input/a.txt', 'one'),
          file('examples/ex1/input/a.txt', 'two'),
        ]),
      400,
      'duplicate_entry',
    ],
    [
      'two names that resolve to the same file',
      () =>
        rawZip([
          json('ex1'),
          file('examples/ex1/input/a.txt', 'one'),
          file('examples/ex1/input/./a.txt', 'two'),
        ]),
      400,
      'unsafe_path',
    ],
    [
      'two entries sharing bytes (one hidden in the data of the other)',
      () => {
        const hidden: RawEntry = file('examples/ex1/input/b.txt', 'inner', { method: 0 });
        const outerName = 'examples/ex1/input/a.txt';
        return rawZip([
          json('ex1'),
          { name: outerName, data: localRecord(hidden), method: 0 },
          { ...hidden, centralOnlyAt: localRecord(json('ex1')).length + 30 + outerName.length },
        ]);
      },
      400,
      'overlapping_entries',
    ],
    [
      'more entries than AUTOMATION_ARCHIVE_MAX_ENTRIES',
      () =>
        rawZip([
          json('ex1'),
          ...Array.from({ length: LIMITS.entries }, (_, i) => file(`examples/ex1/input/f${i}`, 'x')),
        ]),
      413,
      'archive_too_large',
    ],
    [
      'declared sizes past AUTOMATION_ARCHIVE_MAX_UNCOMPRESSED_BYTES',
      () => rawZip([json('ex1'), file('examples/ex1/input/zeros', '\0'.repeat(LIMITS.uncompressed + 1))]),
      413,
      'archive_too_large',
    ],
    [
      'a size lie in the local header only, past the limit',
      () =>
        rawZip([
          json('ex1'),
          file('examples/ex1/input/a.txt', 'small', { local: { size: LIMITS.uncompressed + 1 } }),
        ]),
      413,
      'archive_too_large',
    ],
    [
      'more bytes than AUTOMATION_ARCHIVE_MAX_BYTES',
      () =>
        rawZip([
          json('ex1'),
          file('examples/ex1/input/r', randomBytes(LIMITS.bytes).toString('latin1'), { method: 0 }),
        ]),
      413,
      'archive_too_large',
    ],
  ];

  for (const [what, build, status, code] of hostile) {
    it(`refuses ${what} with ${status} ${code} and writes nothing`, async () => {
      const examplesBefore = (await api('GET', `/automations/${A}/examples?limit=1000`)).body.total;
      const before = snapshot();
      const res = await importZip(build(), 'replace');
      assert.equal(res.status, status, JSON.stringify(res.body));
      assert.match(res.headers.get('content-type') ?? '', /application\/json/);
      assert.ok(res.body.requestId);
      assert.ok(
        res.body.issues.some((i: { code: string }) => i.code === code),
        `expected an issue ${code}: ${JSON.stringify(res.body.issues)}`,
      );
      if (status === 413) assert.match(res.body.issues[0].message, /limit AUTOMATION_ARCHIVE_MAX_\w+=\d+/);
      assert.deepEqual(snapshot(), before, 'nothing written under the data directory');
      assert.deepEqual(findTargets(root), []);
      assert.deepEqual(findTargets(tmpdir()), [], 'nothing written to the temp directory');
      assert.equal(existsSync(join('/tmp', unique)), false);
      assert.equal((await api('GET', `/automations/${A}/examples?limit=1000`)).body.total, examplesBefore);
    });
  }

  it('refuses the same archives sent as a raw application/zip body', async () => {
    const before = snapshot();
    const res = await api('POST', `/automations/${A}/dataset/import?mode=replace`, {
      raw: rawZip([
        json('ex1'),
        file('examples/ex1/input/a.txt', 'x', { localName: `examples/ex1/input/${up}tmp/${unique}` }),
      ]),
      headers: { 'content-type': 'application/zip' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.issues[0].code, 'name_mismatch');
    const big = await api('POST', `/automations/${A}/dataset/import`, {
      raw: new Uint8Array(LIMITS.bytes + 1),
      headers: { 'content-type': 'application/zip' },
    });
    assert.equal(big.status, 413);
    assert.match(big.body.issues[0].message, new RegExp(`AUTOMATION_ARCHIVE_MAX_BYTES=${LIMITS.bytes}`));
    assert.deepEqual(snapshot(), before);
  });
});

describe('running an example', () => {
  it('refuses an example whose stored input path escapes (stored before names were checked)', async () => {
    const ex = (
      await api('POST', `/automations/${A}/examples`, { json: { id: 'ex_old', input: { text: 'x' } } })
    ).body;
    const form = new FormData();
    form.append('files', new Blob(['payload']), 'a.txt');
    assert.equal((await api('POST', `/automations/${A}/examples/${ex.id}/input`, { raw: form })).status, 201);
    // What an import through the old reader could store: the record is rewritten in LMDB directly.
    const store = service.core.stores.examples;
    const automationId = (await api('GET', `/automations/${A}`)).body.id;
    const tenant = (await api('GET', '/auth/check')).body.tenantId;
    await store.update(tenant, automationId, ex.id, (cur) => ({
      ...cur,
      files: { ...cur.files, input: { [`${up}tmp/${unique}`]: cur.files.input['a.txt']! } },
    }));
    const before = snapshot();
    const res = await api('POST', `/automations/${A}/examples/${ex.id}/run`);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.issues[0].code, 'unsafe_path');
    assert.equal(existsSync(join('/tmp', unique)), false);
    assert.deepEqual(snapshot(), before);
    // Nor is such a path handed to a client in an export.
    const exported = await api('GET', `/automations/${A}/dataset/export?example_ids=${ex.id}`);
    assert.equal(exported.status, 400);
    assert.equal(exported.body.issues[0].code, 'unsafe_path');
    assert.equal((await api('DELETE', `/automations/${A}/examples/${ex.id}`)).status, 200);
  });
});

describe('archive work off the event loop', () => {
  it('answers other requests while an import and an export are held in the archive worker', async () => {
    const archives = service.core.archives;
    const big = rawZip([
      json('ex_big'),
      file('examples/ex_big/input/big.txt', 'lorem ipsum '.repeat(60_000)),
    ]);
    for (const start of [
      () => importZip(big, 'append'),
      () => api('GET', `/automations/${A}/dataset/export`),
    ]) {
      const release = archives.hold();
      let settled = false;
      const pending = start().finally(() => (settled = true));
      try {
        const deadline = Date.now() + 30_000;
        while (archives.held === 0) {
          assert.ok(Date.now() < deadline, 'the task reached the archive worker');
          await new Promise((r) => setTimeout(r, 10));
        }
        const list = await api('GET', '/automations');
        assert.equal(list.status, 200);
        const doc = await fetch(`${service.url}/api/v1/openapi.json`);
        assert.equal(doc.status, 200);
        assert.equal(settled, false, 'the archive request is still in progress');
      } finally {
        release();
      }
      const res = await pending;
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
  });
});

describe('archive limits on what the service writes', () => {
  it('refuses an export or an artifact ZIP past the limits with a 413 naming the limit', async () => {
    const ex = (
      await api('POST', `/automations/${A}/examples`, { json: { id: 'ex_large', input: { text: 'x' } } })
    ).body;
    const form = new FormData();
    form.append('files', new Blob([new Uint8Array(LIMITS.uncompressed / 2 + 1)]), 'one.bin');
    form.append('files', new Blob([new Uint8Array(LIMITS.uncompressed / 2 + 1)]), 'two.bin');
    assert.equal((await api('POST', `/automations/${A}/examples/${ex.id}/input`, { raw: form })).status, 201);
    const tooBig = await api('GET', `/automations/${A}/dataset/export?example_ids=ex_large`);
    assert.equal(tooBig.status, 413);
    assert.match(
      tooBig.body.issues[0].message,
      new RegExp(`AUTOMATION_ARCHIVE_MAX_UNCOMPRESSED_BYTES=${LIMITS.uncompressed}`),
    );

    const many = new FormData();
    for (let i = 0; i < LIMITS.entries; i++) many.append('files', new Blob(['x']), `f${i}.txt`);
    const small = (
      await api('POST', `/automations/${A}/examples`, { json: { id: 'ex_many', input: { text: 'x' } } })
    ).body;
    assert.equal(
      (await api('POST', `/automations/${A}/examples/${small.id}/input`, { raw: many })).status,
      201,
    );
    const tooMany = await api('GET', `/automations/${A}/dataset/export?example_ids=ex_many`);
    assert.equal(tooMany.status, 413);
    assert.match(
      tooMany.body.issues[0].message,
      new RegExp(`AUTOMATION_ARCHIVE_MAX_ENTRIES=${LIMITS.entries}`),
    );

    const runOf = async (text: string) => {
      const started = await api('POST', '/runs', { json: { target: A, input: { text } } });
      assert.equal(started.status, 201, JSON.stringify(started.body).slice(0, 300));
      const done = await service.core.runs.waitFor(started.body.id, 60_000);
      assert.equal(done.status, 'completed');
      return done;
    };
    const run = await runOf('w'.repeat(LIMITS.uncompressed + 1));
    const zip = await api('GET', `/runs/${run.id}/artifacts?zip=1`);
    assert.equal(zip.status, 413);
    assert.match(zip.body.issues[0].message, /AUTOMATION_ARCHIVE_MAX_UNCOMPRESSED_BYTES/);
    const ok = await runOf('fine');
    const fine = await api('GET', `/runs/${ok.id}/artifacts?zip=1`);
    assert.equal(fine.status, 200);
    assert.match(Buffer.from(unzipSync(new Uint8Array(fine.body))['report.md']!).toString(), /fine/);
  });
});
