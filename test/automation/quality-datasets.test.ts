// Dataset examples, their files and ZIP archives against the real service, with requests encoded
// as the product's SDK sends them and every answer checked against the SDK's type (wire schemas).
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import {
  DatasetExample,
  DatasetExampleExpectedFileUploadResponse,
  DatasetExampleInputFileList,
  DatasetExampleInputFileRenameResponse,
  DatasetExampleInputFileUploadResponse,
  DatasetExampleList,
  DatasetImportResponse,
  ExampleRunResponse,
} from '../../src/automation/wire/datasets.js';
import { startHarness, type Harness } from './harness.js';
import { HANG_MS } from '../helpers/wait.js';

const A = 'workflows.text-report';
const EX = `/automations/${A}/examples`;
let h: Harness;

before(async () => {
  h = await startHarness({
    AUTOMATION_ARCHIVE_MAX_BYTES: String(512 * 1024),
    AUTOMATION_ARCHIVE_MAX_UNCOMPRESSED_BYTES: String(2 * 1024 * 1024),
    AUTOMATION_ARCHIVE_MAX_ENTRIES: '200',
  });
});
after(async () => {
  await h?.close();
});

const bytes = (n: number, seed: number) => {
  const b = new Uint8Array(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed * 7) & 0xff;
  return b;
};

/** Asserts the status and that the body is exactly the SDK type (no missing, no extra fields). */
function expectShape<T = any>(r: { status: number; body: unknown }, status: number, schema: TSchema): T {
  assert.equal(r.status, status, JSON.stringify(r.body));
  const errors = [...Value.Errors(schema, r.body)].map((e) => `${e.path} ${e.message}`);
  assert.deepEqual(errors, [], `${String(schema.$id)}: ${JSON.stringify(r.body)}`);
  return r.body as T;
}

/** Files as the SDK's formDataBodySerializer sends `{ file: [File, …] }`: one part `file` each. */
function filesForm(files: Record<string, Uint8Array>) {
  const form = new FormData();
  for (const [name, data] of Object.entries(files)) form.append('file', new Blob([data]), name);
  return form;
}

/** The SDK's dataset.import: part `file` and field `mode`, nothing in the query. */
function importForm(zip: Uint8Array, mode?: string) {
  const form = new FormData();
  form.set('file', new Blob([zip], { type: 'application/zip' }), 'dataset.zip');
  if (mode !== undefined) form.set('mode', mode);
  return form;
}
const importZip = (zip: Uint8Array, mode = 'append') =>
  h.api('POST', `/automations/${A}/dataset/import`, { raw: importForm(zip, mode) });

async function exportZip(query = ''): Promise<Uint8Array> {
  const r = await h.api('GET', `/automations/${A}/dataset/export${query}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  assert.equal(r.headers.get('content-type'), 'application/zip');
  return new Uint8Array(r.body);
}

const create = async (body: Record<string, unknown>) =>
  expectShape(await h.api('POST', EX, { body }), 201, DatasetExample);

describe('dataset examples', () => {
  it('types every dataset answer in the OpenAPI document with the SDK schema', async () => {
    const doc = (await (await fetch(`${h.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, any> }>>;
    };
    const ref = (path: string, method: string, status: number) =>
      doc.paths[`/api/v1/automations/{id}${path}`]?.[method]?.responses[status]?.content?.['application/json']
        ?.schema?.$ref;
    assert.equal(ref('/examples', 'get', 200), '#/components/schemas/DatasetExampleList');
    assert.equal(ref('/examples/{exampleId}', 'patch', 200), '#/components/schemas/DatasetExample');
    assert.equal(ref('/examples/{exampleId}/run', 'post', 201), '#/components/schemas/ExampleRunResponse');
    assert.equal(
      ref('/examples/{exampleId}/input/{path}', 'patch', 200),
      '#/components/schemas/DatasetExampleInputFileRenameResponse',
    );
    assert.equal(ref('/dataset/import', 'post', 200), '#/components/schemas/DatasetImportResponse');
  });

  it('creates, reads, lists, patches (omitted kept, null clears) and deletes an example', async () => {
    const ex = await create({
      name: 'first',
      input: { text: 'Hello world' },
      expected: { words: 2 },
      metadata: { source: 'test' },
      annotation: 'note',
      rowOrder: 7,
    });
    assert.match(ex.id, /^ex_/);
    assert.equal(ex.automationId, (await h.api('GET', `/automations/${A}`)).body.id);
    assert.equal(ex.automationType, 'workflow');
    assert.equal(ex.rowOrder, 7);
    const got = expectShape(await h.api('GET', `${EX}/${ex.id}`), 200, DatasetExample);
    assert.deepEqual(got.input, { text: 'Hello world' });

    const patched = expectShape(
      await h.api('PATCH', `${EX}/${ex.id}`, { body: { annotation: null, name: 'renamed' } }),
      200,
      DatasetExample,
    );
    assert.equal(patched.name, 'renamed');
    assert.equal(patched.annotation, null);
    assert.deepEqual(patched.metadata, { source: 'test' }, 'omitted fields are kept');
    assert.deepEqual(patched.expected, { words: 2 });

    const cleared = expectShape(
      await h.api('PATCH', `${EX}/${ex.id}`, { body: { name: null, rowOrder: null, metadata: null } }),
      200,
      DatasetExample,
    );
    assert.equal(cleared.name, ex.id, 'a null name is the generated one');
    assert.equal(cleared.rowOrder, null);
    assert.equal(cleared.metadata, null);

    const bad = await h.api('PATCH', `${EX}/${ex.id}`, { body: { rowOrder: 'x' } });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.issues[0].field.includes('rowOrder'));
    const badRef = await h.api('POST', EX, { body: { input: { doc: { $file: '../etc/passwd' } } } });
    assert.equal(badRef.status, 400);
    assert.equal(badRef.body.issues[0].field, 'input.doc');
    const long = await h.api('POST', EX, { body: { name: 'x'.repeat(300) } });
    assert.equal(long.status, 400);
    assert.equal(long.body.issues[0].field, 'name');

    const unnamed = await create({ input: { text: 'a' }, somethingElse: 1 });
    assert.equal(unnamed.name, unnamed.id, 'an omitted name is generated; unknown fields are ignored');
    const taken = await h.api('POST', EX, { body: { id: unnamed.id } });
    assert.equal(taken.status, 409);

    const page = expectShape(await h.api('GET', `${EX}?limit=10&offset=0`), 200, DatasetExampleList);
    assert.equal(page.limit, 10);
    assert.equal(page.data.at(-1)?.id, ex.id, 'a cleared rowOrder sorts last');

    const removed = expectShape(await h.api('DELETE', `${EX}/${ex.id}`), 200, DatasetExample);
    assert.equal(removed.id, ex.id);
    assert.equal((await h.api('GET', `${EX}/${ex.id}`)).status, 404);
    assert.equal((await h.api('GET', `/automations/workflows.nope/examples/x`)).status, 404);
    assert.equal((await h.api('DELETE', `${EX}/${unnamed.id}`)).status, 200);
  });

  it('input and expected are JSON objects on create and patch (400 with the field path)', async () => {
    for (const [body, field] of [
      [{ input: 'text' }, 'input'],
      [{ input: 5 }, 'input'],
      [{ input: [1, 2] }, 'input'],
      [{ input: {}, expected: 'text' }, 'expected'],
      [{ input: {}, expected: 7 }, 'expected'],
      [{ input: {}, expected: [] }, 'expected'],
    ] as const) {
      const r = await h.api('POST', EX, { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.issues[0].field, field, JSON.stringify(r.body));
    }
    const ex = await create({ name: 'objects', input: { text: 'a' } });
    assert.equal(ex.expected, null);
    for (const [body, field] of [
      [{ input: 5 }, 'input'],
      [{ input: 'x' }, 'input'],
      [{ expected: true }, 'expected'],
    ] as const) {
      const r = await h.api('PATCH', `${EX}/${ex.id}`, { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.issues[0].field, field);
    }
    assert.deepEqual((await h.api('GET', `${EX}/${ex.id}`)).body.input, { text: 'a' }, 'unchanged');
    const cleared = await h.api('PATCH', `${EX}/${ex.id}`, { body: { input: null } });
    assert.deepEqual(cleared.body.input, {}, 'null clears input to {}');
    await h.api('DELETE', `${EX}/${ex.id}`);
  });

  it('uploads several files, lists them, downloads exact bytes, renames within the folder and deletes', async () => {
    const ex = await create({ name: 'files', input: { text: 'x', doc: { $file: 'input/docs/a.bin' } } });
    const a = bytes(70_000, 1);
    const b = bytes(3, 2);
    const up = expectShape<{ uploaded: string[] }>(
      await h.api('POST', `${EX}/${ex.id}/input`, { raw: filesForm({ 'docs/a.bin': a, 'b.txt': b }) }),
      201,
      DatasetExampleInputFileUploadResponse,
    );
    assert.deepEqual([...up.uploaded].sort(), ['b.txt', 'docs/a.bin']);
    expectShape(
      await h.api('POST', `${EX}/${ex.id}/expected`, {
        raw: filesForm({ 'report.md': strToU8('# expected\n') }),
      }),
      201,
      DatasetExampleExpectedFileUploadResponse,
    );
    const list = expectShape(await h.api('GET', `${EX}/${ex.id}/input`), 200, DatasetExampleInputFileList);
    assert.deepEqual(list.files, ['b.txt', 'docs/a.bin']);
    const download = await h.api('GET', `${EX}/${ex.id}/input/docs/a.bin`);
    assert.equal(download.status, 200);
    assert.equal(download.headers.get('content-type'), 'application/octet-stream');
    assert.match(download.headers.get('content-disposition') ?? '', /filename="a\.bin"/);
    assert.deepEqual(new Uint8Array(download.body), a);
    const md = await h.api('GET', `${EX}/${ex.id}/expected/report.md`);
    assert.equal(md.headers.get('content-type'), 'application/octet-stream', 'whatever the file is');

    const renamed = expectShape(
      await h.api('PATCH', `${EX}/${ex.id}/input/docs/a.bin`, { body: { newFilename: 'c.bin' } }),
      200,
      DatasetExampleInputFileRenameResponse,
    );
    assert.deepEqual(renamed, { ok: true, filename: 'c.bin', path: 'docs/c.bin' });
    assert.deepEqual(new Uint8Array((await h.api('GET', `${EX}/${ex.id}/input/docs/c.bin`)).body), a);
    const escape = await h.api('PATCH', `${EX}/${ex.id}/input/docs/c.bin`, { body: { newFilename: '../x' } });
    assert.equal(escape.status, 400, 'a rename cannot leave the parent folder');
    const clash = await h.api('PATCH', `${EX}/${ex.id}/input/docs/c.bin`, { body: { newFilename: 'c.bin' } });
    assert.equal(clash.status, 200, 'a rename onto itself is a no-op');
    const none = await h.api('PATCH', `${EX}/${ex.id}/input/docs/c.bin`, { body: {} });
    assert.equal(none.status, 400, 'newFilename is required');
    const deleted = await h.api('DELETE', `${EX}/${ex.id}/input/b.txt`);
    assert.equal(deleted.status, 200);
    assert.deepEqual((await h.api('GET', `${EX}/${ex.id}/input`)).body.files, ['docs/c.bin']);
    assert.equal((await h.api('GET', `${EX}/${ex.id}/input/b.txt`)).status, 404);
    const traversal = await h.api('GET', `${EX}/${ex.id}/input/..%2F..%2Fsecret`);
    assert.ok(traversal.status === 400 || traversal.status === 404);
    const view = expectShape(await h.api('GET', `${EX}/${ex.id}`), 200, DatasetExample);
    assert.deepEqual(
      view.expectedFiles.map((f: { name: string }) => f.name),
      ['report.md'],
    );
    const empty = await h.api('POST', `${EX}/${ex.id}/input`, { raw: new FormData() });
    assert.equal(empty.status, 400);
  });

  it('runs an example asynchronously (201 ExampleRunResponse) with its input files', async () => {
    const ex = await create({ name: 'runnable', input: { text: '  run   me ' } });
    const started = expectShape(await h.api('POST', `${EX}/${ex.id}/run`), 201, ExampleRunResponse);
    assert.deepEqual({ ...started, id: '' }, { id: '', type: 'workflow', batchId: null, finished: false });
    const run = await h.service.core.runs.waitFor(started.id, HANG_MS);
    assert.equal(run.status, 'completed');
    assert.equal(run.exampleId, ex.id);
    assert.deepEqual((run.output as { text: string }).text, 'run me');
    assert.equal((await h.api('GET', `${EX}/${ex.id}`)).body.latestRunId, run.id);
  });

  it("resolves $file references to the run's snapshot of the example's input files", async () => {
    const ex = await create({
      name: 'with-file',
      input: { text: 'has a file', doc: { $file: 'input/docs/a.bin' }, flat: { $file: 'input/top.txt' } },
    });
    const missing = await h.api('POST', `${EX}/${ex.id}/run`);
    assert.equal(missing.status, 400, 'a $file naming no uploaded file is refused');
    assert.equal(missing.body.issues[0].field, 'input.doc');
    const a = bytes(5000, 5);
    await h.api('POST', `${EX}/${ex.id}/input`, {
      raw: filesForm({ 'docs/a.bin': a, 'top.txt': strToU8('top') }),
    });
    const started = (await h.api('POST', `${EX}/${ex.id}/run`)).body;
    const run = await h.service.core.runs.waitFor(String(started.id), HANG_MS);
    assert.equal(run.status, 'completed');
    const detail = (await h.service.core.runs.getDetail(run.id))!;
    assert.deepEqual(detail.input.args, {
      text: 'has a file',
      doc: { $file: 'input/docs/a.bin' },
      flat: { $file: 'input/files/top.txt' },
    });
    const snap = await h.api('GET', `/runs/${run.id}/artifacts/input/docs/a.bin`);
    assert.equal(snap.status, 200);
    assert.deepEqual(new Uint8Array(snap.body), a);
  });
});

describe('dataset archives', () => {
  it('exports the documented layout: examples/<name>/input.json, input/, expected.json, expected/, meta.json', async () => {
    const ex = await create({
      name: 'Acme Invoice!',
      input: { text: 'acme', doc: { $file: 'input/scan.pdf' } },
      expected: { vendor: 'Acme' },
      metadata: { source: 'export-test' },
      annotation: 'checked',
      rowOrder: 3,
    });
    await h.api('POST', `${EX}/${ex.id}/input`, { raw: filesForm({ 'scan.pdf': strToU8('%PDF-1') }) });
    await h.api('POST', `${EX}/${ex.id}/expected`, { raw: filesForm({ 'out.csv': strToU8('a,b\n') }) });
    const entries = unzipSync(await exportZip(`?exampleIds=${ex.id}`));
    const dir = 'examples/acme-invoice';
    assert.deepEqual(Object.keys(entries).sort(), [
      `${dir}/expected.json`,
      `${dir}/expected/out.csv`,
      `${dir}/input.json`,
      `${dir}/input/scan.pdf`,
      `${dir}/meta.json`,
    ]);
    assert.deepEqual(JSON.parse(strFromU8(entries[`${dir}/input.json`]!)), {
      text: 'acme',
      doc: { $file: 'input/scan.pdf' },
    });
    assert.deepEqual(JSON.parse(strFromU8(entries[`${dir}/expected.json`]!)), { vendor: 'Acme' });
    // The blobs came in without a content type (application/octet-stream), which a .pdf/.csv name
    // would not suggest: meta.json keeps them.
    assert.deepEqual(JSON.parse(strFromU8(entries[`${dir}/meta.json`]!)), {
      rowOrder: 3,
      annotation: 'checked',
      name: 'Acme Invoice!',
      metadata: { source: 'export-test' },
      contentTypes: {
        input: { 'scan.pdf': 'application/octet-stream' },
        expected: { 'out.csv': 'application/octet-stream' },
      },
    });
    assert.equal(strFromU8(entries[`${dir}/input/scan.pdf`]!), '%PDF-1');
    const unknown = await h.api('GET', `/automations/${A}/dataset/export?exampleIds=ex_nothing`);
    assert.equal(unknown.status, 400);
  });

  it('export → replace import → export gives identical archives, files byte for byte', async () => {
    const first = await exportZip();
    const names = Object.keys(unzipSync(first));
    assert.ok(
      names.some((n) => /^examples\/files\/input\/docs\/c\.bin$/.test(n)),
      names.join(' '),
    );
    assert.ok(names.some((n) => /^examples\/files\/expected\/report\.md$/.test(n)));
    const before = (await h.api('GET', `${EX}?limit=1000`)).body.data as { name: string; input: unknown }[];
    const result = expectShape(await importZip(first, 'replace'), 200, DatasetImportResponse);
    assert.equal(result.mode, 'replace');
    assert.equal(result.created, before.length);
    assert.equal(result.deleted, before.length);
    const after = (await h.api('GET', `${EX}?limit=1000`)).body.data as { name: string; input: unknown }[];
    assert.deepEqual(
      after.map((e) => [e.name, e.input]),
      before.map((e) => [e.name, e.input]),
      'same examples in the same order (with new ids)',
    );
    assert.deepEqual(await exportZip(), first);
    const one = after[0] as unknown as { id: string; name: string };
    const subset = unzipSync(await exportZip(`?example_ids=${one.id}`));
    assert.ok(Object.keys(subset).every((n) => n.startsWith('examples/')));
    assert.equal(new Set(Object.keys(subset).map((n) => n.split('/')[1])).size, 1);
  });

  it('append keeps the examples whose name the dataset has (warnings) and adds the others', async () => {
    const before = (await h.api('GET', `${EX}?limit=1000`)).body.total as number;
    const res = expectShape(await importZip(await exportZip(), 'append'), 200, DatasetImportResponse);
    assert.equal(res.created, 0);
    assert.equal(res.skipped, before);
    assert.equal(res.issues.length, before);
    assert.equal((res.issues[0] as { severity: string }).severity, 'warning');
    const extra = zipSync({
      'examples/new-one/input.json': strToU8(JSON.stringify({ text: 'n', doc: { $file: 'input/x.txt' } })),
      'examples/new-one/input/x.txt': strToU8('x'),
      'examples/new-one/expected.json': strToU8(JSON.stringify({ text: 'n' })),
    });
    const added = expectShape(await importZip(extra, 'append'), 200, DatasetImportResponse);
    assert.deepEqual(added, { mode: 'append', created: 1, expectedSet: 1, skipped: 0, issues: [] });
    const page = (await h.api('GET', `${EX}?limit=1000`)).body;
    const made = page.data.find((e: { name: string }) => e.name === 'new-one');
    assert.equal(page.data.at(-1).id, made.id, 'numbered after the existing examples');
    const file = await h.api('GET', `${EX}/${made.id}/input/x.txt`);
    assert.equal(strFromU8(new Uint8Array(file.body)), 'x');
  });

  it('reads the archives of earlier versions (examples/<id>/example.json)', async () => {
    const zip = zipSync({
      'examples/ex_legacy1/example.json': strToU8(
        JSON.stringify({
          id: 'ex_legacy1',
          name: 'Legacy One',
          input: { text: 'old' },
          expected: null,
          rowOrder: 50,
          contentTypes: { input: { 'a.dat': 'text/plain' } },
        }),
      ),
      'examples/ex_legacy1/input/a.dat': strToU8('old bytes'),
    });
    const res = expectShape(await importZip(zip), 200, DatasetImportResponse);
    assert.equal(res.created, 1);
    const made = (await h.api('GET', `${EX}?limit=1000`)).body.data.find(
      (e: { name: string }) => e.name === 'Legacy One',
    );
    assert.deepEqual(made.input, { text: 'old' });
    assert.equal(made.rowOrder, 50);
    const meta = unzipSync(await exportZip(`?exampleIds=${made.id}`))['examples/legacy-one/meta.json'];
    assert.deepEqual(JSON.parse(strFromU8(meta!)).contentTypes, { input: { 'a.dat': 'text/plain' } });
  });

  it('takes the mode from the form field as the SDK sends it, or the query; a conflict is a 400', async () => {
    const zip = zipSync({ 'examples/mode-probe/input.json': strToU8('{}') });
    const formOnly = await importZip(zip, 'append');
    assert.equal(formOnly.body.mode, 'append');
    const conflict = await h.api('POST', `/automations/${A}/dataset/import?mode=append`, {
      raw: importForm(zip, 'replace'),
    });
    assert.equal(conflict.status, 400);
    assert.equal(conflict.body.issues[0].field, 'mode');
    const badMode = await h.api('POST', `/automations/${A}/dataset/import`, {
      raw: importForm(zip, 'merge'),
    });
    assert.equal(badMode.status, 400);
    const queryOnly = await h.api('POST', `/automations/${A}/dataset/import?mode=append`, {
      raw: zip,
      headers: { 'content-type': 'application/zip' },
    });
    assert.equal(queryOnly.status, 200, 'a raw ZIP body with the mode in the query');
    assert.equal(queryOnly.body.skipped, 1);
  });

  it('refuses bad values and legacy layouts, listing every problem, and imports nothing', async () => {
    const before = await exportZip();
    const zip = zipSync({
      'examples/ok-one/input.json': strToU8(JSON.stringify({ a: 1 })),
      'examples/str/input.json': strToU8(JSON.stringify('just text')),
      'examples/num/input.json': strToU8('{}'),
      'examples/num/expected.json': strToU8('42'),
      'examples/ref/input.json': strToU8(JSON.stringify({ doc: { $file: '/etc/passwd' } })),
      'examples/meta/input.json': strToU8('{}'),
      'examples/meta/meta.json': strToU8(JSON.stringify({ rowOrder: 'first' })),
      'examples/no-input/expected.json': strToU8('{}'),
      'examples/Upper/input.json': strToU8('{}'),
    });
    const r = await importZip(zip, 'replace');
    assert.equal(r.status, 400);
    assert.deepEqual(r.body.issues.map((i: { field: string }) => i.field).sort(), [
      'examples/Upper',
      'examples/meta/meta.json',
      'examples/no-input/input.json',
      'examples/num/expected.json',
      'examples/ref/input.json.doc',
      'examples/str/input.json',
    ]);
    const manifest = await importZip(zipSync({ 'manifest.json': strToU8('{}') }));
    assert.equal(manifest.status, 400);
    assert.equal(manifest.body.issues[0].code, 'legacy_layout');
    const productLegacy = await importZip(
      zipSync({
        'examples/old/input/arguments.json': strToU8('{}'),
        'examples/old/expected/output.json': strToU8('{}'),
      }),
    );
    assert.equal(productLegacy.status, 400);
    assert.equal(productLegacy.body.issues[0].code, 'missing');
    assert.deepEqual(await exportZip(), before, 'refused imports change nothing');
  });

  it('refuses zip-slip names, bad layouts, bombs, oversize archives and non-ZIPs without changing anything', async () => {
    const before = await exportZip();
    const slip = zipSync({
      'examples/a/input.json': strToU8('{}'),
      'examples/a/input/../../../evil': strToU8('x'),
    });
    const r1 = await importZip(slip, 'replace');
    assert.equal(r1.status, 400);
    assert.equal(r1.body.issues[0].code, 'unsafe_path');
    assert.equal((await importZip(zipSync({ '/etc/passwd': strToU8('x') }))).status, 400);
    assert.equal((await importZip(zipSync({ 'README.txt': strToU8('x') }))).status, 400);
    const badJson = await importZip(zipSync({ 'examples/b/input.json': strToU8('{not json') }));
    assert.equal(badJson.status, 400);
    assert.equal(badJson.body.issues[0].field, 'examples/b/input.json');
    // 8 MiB of zeros deflates to a few KiB: small on the wire, over the 2 MiB expansion limit.
    const bomb = zipSync(
      { 'examples/c/input.json': strToU8('{}'), 'examples/c/input/zeros': new Uint8Array(8 * 1024 * 1024) },
      { level: 9 },
    );
    assert.ok(bomb.length < 64 * 1024);
    assert.equal((await importZip(bomb, 'replace')).status, 413);
    // A bomb that lies about its size in the central directory is still stopped while inflating.
    const liar = Buffer.from(bomb);
    const cd = liar.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    const lastCd = liar.indexOf(Buffer.from('zeros'), cd) - 46 - 'examples/c/input/'.length;
    liar.writeUInt32LE(10, lastCd + 24);
    assert.equal((await importZip(new Uint8Array(liar), 'replace')).status, 413);
    const big = zipSync(
      { 'examples/d/input.json': strToU8('{}'), 'examples/d/input/r': bytes(600 * 1024, 9) },
      { level: 0 },
    );
    assert.equal((await importZip(big)).status, 413);
    const many: Record<string, Uint8Array> = {};
    for (let i = 0; i < 250; i++) many[`examples/m/input/f${i}`] = strToU8('x');
    assert.equal((await importZip(zipSync(many))).status, 413);
    assert.equal((await importZip(strToU8('not a zip at all'))).status, 400);
    assert.deepEqual(await exportZip(), before, 'refused imports change nothing');
  });
});
