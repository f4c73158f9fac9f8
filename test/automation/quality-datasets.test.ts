// Dataset examples, their files and ZIP archives against the real service, through the client.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { strToU8, unzipSync, zipSync } from 'fflate';
import {
  ServiceClient,
  ClientNotFoundError,
  ClientValidationError,
  isClientError,
} from '../../src/automation/client/index.js';
import { startHarness, type Harness } from './harness.js';
import { HANG_MS } from '../helpers/wait.js';

const A = 'workflows.text-report';
let h: Harness;
let client: ServiceClient;

before(async () => {
  h = await startHarness({
    AUTOMATION_ARCHIVE_MAX_BYTES: String(512 * 1024),
    AUTOMATION_ARCHIVE_MAX_UNCOMPRESSED_BYTES: String(2 * 1024 * 1024),
    AUTOMATION_ARCHIVE_MAX_ENTRIES: '200',
  });
  client = new ServiceClient({ api_key: h.token, base_url: h.url, env: {} });
});
after(async () => {
  await h?.close();
});

const bytes = (n: number, seed: number) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7) & 0xff;
  return b;
};

async function importRaw(zip: Uint8Array, mode = 'append') {
  const form = new FormData();
  form.append('file', new Blob([zip], { type: 'application/zip' }), 'd.zip');
  return h.api('POST', `/automations/${A}/dataset/import?mode=${mode}`, { raw: form });
}

describe('dataset examples', () => {
  it('lists the quality routes in the OpenAPI document', async () => {
    const doc = (await (await fetch(`${h.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, unknown>;
    };
    for (const path of [
      '/automations/{id}/examples/{exampleId}/input/{path}',
      '/automations/{id}/dataset/import',
      '/automations/{id}/evaluators',
      '/automations/{id}/experiments/stream',
      '/automations/{id}/reviews/health',
      '/runs/{id}/promote',
    ])
      assert.ok(
        Object.keys(doc.paths).some((p) => p.endsWith(path)),
        path,
      );
  });

  it('creates, reads, lists, patches (omitted kept, null clears) and deletes an example', async () => {
    const ex = await client.automations.examples.create(A, {
      name: 'first',
      input: { text: 'Hello world' },
      expected: { words: 2 },
      metadata: { source: 'test' },
      annotation: 'note',
    });
    assert.match(ex.id, /^ex_/);
    assert.equal(ex.automationId, (await client.automations.get(A)).id);
    const got = await client.automations.examples.get(A, ex.id);
    assert.deepEqual(got.input, { text: 'Hello world' });

    const patched = await client.automations.examples.update(A, ex.id, {
      annotation: null,
      name: 'renamed',
    });
    assert.equal(patched.name, 'renamed');
    assert.equal(patched.annotation, null);
    assert.deepEqual(patched.metadata, { source: 'test' }, 'omitted fields are kept');
    assert.deepEqual(patched.expected, { words: 2 });

    await assert.rejects(
      client.automations.examples.update(A, ex.id, { name: null } as never),
      ClientValidationError,
    );
    const bad = await h.api('PATCH', `/automations/${A}/examples/${ex.id}`, { body: { rowOrder: 'x' } });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.issues[0].field.includes('rowOrder'));
    const unknown = await h.api('POST', `/automations/${A}/examples`, { body: { nope: 1 } });
    assert.equal(unknown.status, 400);
    const badRef = await h.api('POST', `/automations/${A}/examples`, {
      body: { input: { doc: { $file: '../etc/passwd' } } },
    });
    assert.equal(badRef.status, 400);
    assert.equal(badRef.body.issues[0].field, 'input.doc');

    const page = await client.automations.examples.list(A, { limit: 10 });
    assert.ok(page.data.some((e) => e.id === ex.id));
    const removed = await client.automations.examples.delete(A, ex.id);
    assert.equal(removed.id, ex.id);
    await assert.rejects(client.automations.examples.get(A, ex.id), ClientNotFoundError);
    await assert.rejects(client.automations.examples.get('workflows.nope', 'x'), ClientNotFoundError);
  });

  it('input and expected are JSON objects on create, patch and import (400 with the field path)', async () => {
    for (const [body, field] of [
      [{ input: 'text' }, 'input'],
      [{ input: 5 }, 'input'],
      [{ input: [1, 2] }, 'input'],
      [{ input: {}, expected: 'text' }, 'expected'],
      [{ input: {}, expected: 7 }, 'expected'],
      [{ input: {}, expected: [] }, 'expected'],
    ] as const) {
      const r = await h.api('POST', `/automations/${A}/examples`, { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.issues[0].field, field, JSON.stringify(r.body));
    }
    const ex = await client.automations.examples.create(A, { name: 'objects', input: { text: 'a' } });
    assert.equal(ex.expected, null);
    for (const [body, field] of [
      [{ input: 5 }, 'input'],
      [{ input: 'x' }, 'input'],
      [{ expected: true }, 'expected'],
    ] as const) {
      const r = await h.api('PATCH', `/automations/${A}/examples/${ex.id}`, { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.issues[0].field, field);
    }
    assert.deepEqual((await client.automations.examples.get(A, ex.id)).input, { text: 'a' }, 'unchanged');
    const cleared = await h.api('PATCH', `/automations/${A}/examples/${ex.id}`, { body: { input: null } });
    assert.deepEqual(cleared.body.input, {}, 'null clears input to {}');

    const zip = zipSync({
      'examples/ex_ok/example.json': strToU8(JSON.stringify({ input: { a: 1 } })),
      'examples/ex_str/example.json': strToU8(JSON.stringify({ input: 'just text' })),
      'examples/ex_num/example.json': strToU8(JSON.stringify({ input: {}, expected: 42 })),
    });
    const r = await importRaw(zip);
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.issues.map((i: { field: string }) => i.field).sort(), [
      'examples/ex_num/example.json.expected',
      'examples/ex_str/example.json.input',
    ]);
    await assert.rejects(
      client.automations.examples.get(A, 'ex_ok'),
      ClientNotFoundError,
      'nothing imported',
    );
    await client.automations.examples.delete(A, ex.id);
  });

  it('uploads several files, lists them, downloads exact bytes, renames within the folder and deletes', async () => {
    const ex = await client.automations.examples.create(A, {
      name: 'files',
      input: { text: 'x', doc: { $file: 'input/docs/a.bin' } },
    });
    const a = bytes(70_000, 1);
    const b = bytes(3, 2);
    const up = await client.automations.examples.input.upload(A, ex.id, { 'docs/a.bin': a, 'b.txt': b });
    assert.deepEqual([...(up['uploaded'] as string[])].sort(), ['b.txt', 'docs/a.bin']);
    await client.automations.examples.expected.upload(A, ex.id, { 'report.md': strToU8('# expected\n') });
    assert.deepEqual((await client.automations.examples.input.list(A, ex.id)).files, ['b.txt', 'docs/a.bin']);
    assert.deepEqual(await client.automations.examples.input.download(A, ex.id, 'docs/a.bin'), a);
    assert.deepEqual(await client.automations.examples.input.download(A, ex.id, 'b.txt'), b);

    const renamed = await client.automations.examples.input.rename(A, ex.id, 'docs/a.bin', 'c.bin');
    assert.equal(renamed['path'], 'docs/c.bin');
    assert.deepEqual(await client.automations.examples.input.download(A, ex.id, 'docs/c.bin'), a);
    const escape = await h.api('PATCH', `/automations/${A}/examples/${ex.id}/input/docs/c.bin`, {
      body: { name: '../x' },
    });
    assert.equal(escape.status, 400, 'a rename cannot leave the parent folder');
    await client.automations.examples.input.delete(A, ex.id, 'b.txt');
    assert.deepEqual((await client.automations.examples.input.list(A, ex.id)).files, ['docs/c.bin']);
    await assert.rejects(client.automations.examples.input.download(A, ex.id, 'b.txt'), ClientNotFoundError);
    const traversal = await h.api('GET', `/automations/${A}/examples/${ex.id}/input/..%2F..%2Fsecret`);
    assert.ok(traversal.status === 400 || traversal.status === 404);
    const exView = await client.automations.examples.get(A, ex.id);
    assert.deepEqual(
      exView.expectedFiles?.map((f) => f.name),
      ['report.md'],
    );
  });

  it('runs an example asynchronously with its input files', async () => {
    const ex = await client.automations.examples.create(A, {
      name: 'runnable',
      input: { text: '  run   me ' },
    });
    const started = await client.automations.examples.run(A, ex.id);
    const run = await h.service.core.runs.waitFor(String(started['runId']), HANG_MS);
    assert.equal(run.status, 'completed');
    assert.equal(run.exampleId, ex.id);
    assert.deepEqual((run.output as { text: string }).text, 'run me');
    assert.equal((await client.automations.examples.get(A, ex.id)).latestRunId, run.id);
  });

  it("resolves $file references to the run's snapshot of the example's input files", async () => {
    const ex = await client.automations.examples.create(A, {
      name: 'with-file',
      input: { text: 'has a file', doc: { $file: 'input/docs/a.bin' }, flat: { $file: 'input/top.txt' } },
    });
    const missing = await h.api('POST', `/automations/${A}/examples/${ex.id}/run`);
    assert.equal(missing.status, 400, 'a $file naming no uploaded file is refused');
    assert.equal(missing.body.issues[0].field, 'input.doc');
    const a = bytes(5000, 5);
    await client.automations.examples.input.upload(A, ex.id, { 'docs/a.bin': a, 'top.txt': strToU8('top') });
    const started = await client.automations.examples.run(A, ex.id);
    const run = await h.service.core.runs.waitFor(String(started['runId']), HANG_MS);
    assert.equal(run.status, 'completed');
    const detail = h.service.core.runs.getDetail(run.id)!;
    assert.deepEqual(detail.input.args, {
      text: 'has a file',
      doc: { $file: 'input/docs/a.bin' },
      flat: { $file: 'input/files/top.txt' },
    });
    const snap = await h.api('GET', `/runs/${run.id}/artifacts/input/docs/a.bin`);
    assert.equal(snap.status, 200);
    assert.deepEqual(new Uint8Array(snap.body), a);
  });

  it('export → replace import → export gives identical archives, files byte for byte', async () => {
    const first = await client.automations.dataset.export(A);
    const entries = unzipSync(first);
    const names = Object.keys(entries);
    assert.ok(names.some((n) => /^examples\/ex_[^/]+\/example\.json$/.test(n)));
    assert.ok(names.some((n) => /\/input\/docs\/c\.bin$/.test(n)));
    assert.ok(names.some((n) => /\/expected\/report\.md$/.test(n)));
    const result = await client.automations.dataset.import(A, first, { mode: 'replace' });
    assert.equal(result['mode'], 'replace');
    const second = await client.automations.dataset.export(A);
    assert.deepEqual(second, first);

    const one = (await client.automations.examples.list(A)).data[0]!;
    const subset = unzipSync(await client.automations.dataset.export(A, { exampleIds: [one.id] }));
    assert.ok(Object.keys(subset).every((n) => n.startsWith(`examples/${one.id}/`)));
  });

  it('append never overwrites and reports the collisions; new examples are added', async () => {
    const before = (await client.automations.examples.list(A, { limit: 100 })).total;
    const zip = await client.automations.dataset.export(A);
    const extra = zipSync({
      'examples/ex_new1/example.json': strToU8(JSON.stringify({ name: 'new', input: { text: 'n' } })),
      'examples/ex_new1/input/x.txt': strToU8('x'),
    });
    const res = await client.automations.dataset.import(A, zip, { mode: 'append' });
    assert.equal(res['created'], 0);
    assert.equal(res['skipped'], before);
    assert.equal((res['issues'] as unknown[]).length, before);
    const added = await client.automations.dataset.import(A, extra, { mode: 'append' });
    assert.equal(added['created'], 1);
    assert.deepEqual(await client.automations.examples.input.download(A, 'ex_new1', 'x.txt'), strToU8('x'));
  });

  it('refuses zip-slip names, bad layouts, bombs, oversize archives and non-ZIPs without changing anything', async () => {
    const before = await client.automations.dataset.export(A);
    const slip = zipSync({
      'examples/ex_a/example.json': strToU8('{}'),
      'examples/ex_a/input/../../../evil': strToU8('x'),
    });
    const r1 = await importRaw(slip, 'replace');
    assert.equal(r1.status, 400);
    assert.equal(r1.body.issues[0].code, 'unsafe_path');
    const abs = zipSync({ '/etc/passwd': strToU8('x') });
    assert.equal((await importRaw(abs)).status, 400);
    const layout = zipSync({ 'README.txt': strToU8('x') });
    assert.equal((await importRaw(layout)).status, 400);
    const badJson = zipSync({ 'examples/ex_b/example.json': strToU8('{not json') });
    const r2 = await importRaw(badJson);
    assert.equal(r2.status, 400);
    assert.equal(r2.body.issues[0].field, 'examples/ex_b/example.json');
    // 8 MiB of zeros deflates to a few KiB: small on the wire, over the 2 MiB expansion limit.
    const bomb = zipSync(
      {
        'examples/ex_c/example.json': strToU8('{}'),
        'examples/ex_c/input/zeros': new Uint8Array(8 * 1024 * 1024),
      },
      { level: 9 },
    );
    assert.ok(bomb.length < 64 * 1024);
    assert.equal((await importRaw(bomb, 'replace')).status, 413);
    // A bomb that lies about its size in the central directory is still stopped while inflating.
    const liar = Buffer.from(bomb);
    const cd = liar.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    const lastCd = liar.indexOf(Buffer.from('zeros'), cd) - 46 - 'examples/ex_c/input/'.length;
    liar.writeUInt32LE(10, lastCd + 24);
    const lied = await importRaw(new Uint8Array(liar), 'replace');
    assert.equal(lied.status, 413);
    const big = zipSync(
      { 'examples/ex_d/example.json': strToU8('{}'), 'examples/ex_d/input/r': bytes(600 * 1024, 9) },
      { level: 0 },
    );
    assert.equal((await importRaw(big)).status, 413);
    const many: Record<string, Uint8Array> = {};
    for (let i = 0; i < 250; i++) many[`examples/ex_m/input/f${i}`] = strToU8('x');
    assert.equal((await importRaw(zipSync(many))).status, 413);
    assert.equal((await importRaw(strToU8('not a zip at all'))).status, 400);
    await assert.rejects(
      client.automations.dataset.import(A, slip, { mode: 'replace' }),
      (e: unknown) => isClientError(e) && e.status === 400,
    );
    assert.deepEqual(await client.automations.dataset.export(A), before, 'refused imports change nothing');
    const badMode = await h.api('POST', `/automations/${A}/dataset/import?mode=merge`, {
      raw: new FormData(),
    });
    assert.equal(badMode.status, 400);
  });
});
