import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { Value } from '@sinclair/typebox/value';
import * as W from '../../src/automation/wire/index.js';
import type { KeyStore } from '../../src/core/auth/index.js';
import { startHarness, type Harness } from './harness.js';
import { FILE_ECHO, release, gitIn } from './registry-git.js';

describe('automation files, multipart runs, auth and error envelopes', () => {
  let h: Harness;
  let readToken: string;
  let otherTenant: string;
  before(async () => {
    h = await startHarness({ AUTOMATION_MAX_UPLOAD_BYTES: '65536' });
    const keys = h.ctx.ctx.auth as KeyStore;
    readToken = (await keys.create({ user: 'reader', scopes: ['automation:read'] })).token;
    otherTenant = (await keys.create({ tenant: 'other', user: 'o', scopes: ['automation'] })).token;
    release(h.registryPath, FILE_ECHO);
    gitIn(h.registryPath, ['tag', '-a', 'workflows.file-echo@1.0.0', '-m', 'x']);
    assert.equal((await h.api('POST', '/automations/workflows.file-echo/sync')).status, 200);
  });
  after(async () => {
    await h?.close();
  });

  async function upload(content: string, filename: string, token = h.token) {
    const form = new FormData();
    form.append('purpose', 'run-input');
    form.append('file', new Blob([content], { type: 'text/plain' }), filename);
    const res = await fetch(`${h.url}/api/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    return { status: res.status, body: (await res.json()) as any };
  }

  it('uploads, reads, and deletes a file; a run keeps its snapshot after the delete', async () => {
    const up = await upload('hello file', 'greeting.txt');
    assert.equal(up.status, 200);
    assert.match(up.body.id, /^file_/);
    assert.deepEqual(
      { ...up.body, id: 'x', createdAt: 'y' },
      {
        id: 'x',
        filename: 'greeting.txt',
        contentType: 'text/plain',
        size: 10,
        purpose: 'run-input',
        createdAt: 'y',
      },
    );
    assert.ok(Value.Check(W.File, up.body));
    const meta = await h.api('GET', `/files/${up.body.id}`);
    assert.deepEqual(meta.body, up.body);
    const content = await h.api('GET', `/files/${up.body.id}/content`);
    assert.equal(content.body.toString(), 'hello file');
    // Bytes go as octet-stream (the SDK refuses a JSON or HTML type on a download); the stored
    // type rides in its own header.
    assert.equal(content.headers.get('content-type'), 'application/octet-stream');
    assert.equal(content.headers.get('x-file-content-type'), 'text/plain');
    assert.equal(content.headers.get('content-disposition'), 'attachment; filename="greeting.txt"');
    // The blob is content-addressed: the same bytes under another name share it.
    const blobs = h.service.core.files.blobs;
    assert.ok(await blobs.stat(createHash('sha256').update('hello file').digest('hex')));

    const run = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.file-echo', input: {}, files: { doc: { $fileId: up.body.id } } },
    });
    assert.equal(run.body.execution.status, 'completed');
    assert.deepEqual(run.body.output, { 'doc/greeting.txt': 'hello file' });
    assert.ok(run.body.files.some((f: any) => f.role === 'input' && f.path === 'input/doc/greeting.txt'));

    const del = await h.api('DELETE', `/files/${up.body.id}`);
    assert.deepEqual(del.body, { deleted: true });
    assert.equal((await h.api('GET', `/files/${up.body.id}`)).status, 404);
    assert.equal((await h.api('GET', `/files/${up.body.id}/content`)).status, 404);
    assert.equal((await h.api('DELETE', `/files/${up.body.id}`)).status, 404);

    const snap = await h.api('GET', `/runs/${run.body.id}/artifacts/input/doc/greeting.txt`);
    assert.equal(snap.status, 200);
    assert.equal(snap.body.toString(), 'hello file');
    const rerun = await h.api('POST', `/runs/${run.body.id}/rerun?wait_for_completion=30`);
    assert.deepEqual(rerun.body.output, { 'doc/greeting.txt': 'hello file' });
    const gone = await h.api('POST', '/runs', {
      body: { target: 'workflows.file-echo', files: { doc: { $fileId: up.body.id } } },
    });
    assert.equal(gone.status, 404);
    assert.equal(gone.body.issues[0].field, 'files.doc');
  });

  it('starts a run from multipart/form-data with file parts, and from inline base64', async () => {
    const form = new FormData();
    form.append('target', 'workflows.file-echo');
    form.append('input', JSON.stringify({ a: 1 }));
    form.append('files.invoice', new Blob(['multipart bytes']), 'inv.txt');
    const res = await fetch(`${h.url}/api/v1/runs?wait_for_completion=30`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.token}` },
      body: form,
    });
    const run = (await res.json()) as any;
    assert.equal(res.status, 200);
    assert.deepEqual(run.output, { 'invoice/inv.txt': 'multipart bytes' });
    const full = await h.api('GET', `/runs/${run.id}?expand=input`);
    assert.deepEqual(full.body.input.args, { a: 1 });
    // RunInput.files are `{name}` (the SDK's RunFile); the bytes are the run's input artifact.
    assert.deepEqual(full.body.input.files, [{ name: 'invoice/inv.txt' }]);

    const inline = await h.api('POST', '/runs?wait_for_completion=30', {
      body: {
        target: 'workflows.file-echo',
        files: {
          notes: {
            $inline: {
              filename: 'n.txt',
              mimeType: 'text/plain',
              base64: Buffer.from('inline!').toString('base64'),
            },
          },
        },
      },
    });
    assert.deepEqual(inline.body.output, { 'notes/n.txt': 'inline!' });

    const badJson = new FormData();
    badJson.append('target', 'workflows.file-echo');
    badJson.append('input', '{not json');
    const bad = await fetch(`${h.url}/api/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.token}` },
      body: badJson,
    });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as any).issues[0].field, 'input');
  });

  it('refuses input file field names that are unsafe as a path segment', async () => {
    // A field becomes the folder input/<field>/ of the run: `..` would put the file beside the
    // run's own folders instead.
    const inline = { $inline: { filename: 'n.txt', base64: Buffer.from('x').toString('base64') } };
    for (const field of ['..', '.', 'a/b', 'a\\b', 'a\u0000b', 'f'.repeat(129), 'é']) {
      const r = await h.api('POST', '/runs', {
        body: { target: 'workflows.file-echo', files: { [field]: inline } },
      });
      assert.equal(r.status, 400, `${JSON.stringify(field)}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.issues[0].field, 'files', JSON.stringify(field));
    }
    for (const part of ['files...', '..', 'files..']) {
      const form = new FormData();
      form.append('target', 'workflows.file-echo');
      form.append(part, new Blob(['bytes']), 'a.txt');
      const res = await fetch(`${h.url}/api/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.token}` },
        body: form,
      });
      assert.equal(res.status, 400, part);
    }
    const ok = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.file-echo', files: { 'my.field-1': inline } },
    });
    assert.deepEqual(ok.body.output, { 'my.field-1/n.txt': 'x' });
    // The run service refuses them too, whoever calls it (dataset example runs do).
    const unsafe: [string, string][] = [
      ['..', 'x.txt'],
      ['docs', '..'],
      ['a/../..', 'x.txt'],
    ];
    for (const [field, filename] of unsafe)
      await assert.rejects(
        h.service.core.runs.start({
          target: 'workflows.file-echo',
          files: [
            {
              field,
              filename,
              contentType: 'text/plain',
              size: 1,
              sha256: 'x',
              source: { path: '/nope' },
              fileId: null,
            },
          ],
          principal: { tenant: 'default', user: 'admin' },
        }),
        (e: any) => e.status === 400 && e.issues[0].field === `files.${field}`,
      );
  });

  it('answers 413 with the envelope for an upload over the limit', async () => {
    const big = await upload('x'.repeat(70_000), 'big.txt');
    assert.equal(big.status, 413);
    assert.ok(big.body.requestId);
    assert.ok(Array.isArray(big.body.issues));
    const form = new FormData();
    form.append('target', 'workflows.file-echo');
    form.append('files.doc', new Blob(['y'.repeat(70_000)]), 'big.bin');
    const res = await fetch(`${h.url}/api/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.token}` },
      body: form,
    });
    assert.equal(res.status, 413);
    const noFile = new FormData();
    noFile.append('purpose', 'run-input');
    const empty = await fetch(`${h.url}/api/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.token}` },
      body: noFile,
    });
    assert.equal(empty.status, 400);
  });

  it('refuses an unknown purpose and an unsafe filename, keeping nothing', async () => {
    const form = new FormData();
    form.append('purpose', 'forever');
    form.append('file', new Blob(['kept?']), 'a.txt');
    const bad = await h.api('POST', '/files', { raw: form });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.issues[0].field, 'purpose');
    const named = new FormData();
    named.append('filename', '../up.txt');
    named.append('file', new Blob(['kept?']), 'a.txt');
    const unsafe = await h.api('POST', '/files', { raw: named });
    assert.equal(unsafe.status, 400);
    assert.equal(unsafe.body.issues[0].code, 'invalid_filename');
    assert.equal(
      await h.service.core.files.blobs.stat(createHash('sha256').update('kept?').digest('hex')),
      undefined,
    );
  });

  it('checks keys: 401 without or with a bad key, 403 for a read-only key writing, /auth/check', async () => {
    const none = await h.api('GET', '/automations', { token: null });
    assert.equal(none.status, 401);
    assert.equal(none.body.issues[0].code, 'unauthorized');
    assert.equal(none.headers.get('x-request-id'), none.body.requestId);
    const wrong = await h.api('GET', '/automations', { token: 'sk_nope_nope' });
    assert.equal(wrong.status, 401);
    const forbidden = await h.api('POST', '/runs', {
      token: readToken,
      body: { target: 'workflows.text-report', input: { text: 'x' } },
    });
    assert.equal(forbidden.status, 403);
    assert.equal(forbidden.body.issues[0].code, 'forbidden');
    const reading = await h.api('GET', '/automations', { token: readToken });
    assert.equal(reading.status, 200);
    const sync = await h.api('POST', '/automations/workflows.text-report/sync', { token: readToken });
    assert.equal(sync.status, 403);
    const check = await h.api('GET', '/auth/check', { token: readToken });
    assert.ok(Value.Check(W.AuthCheckResponse, check.body), JSON.stringify(check.body));
    assert.equal(check.body.ok, true);
    assert.equal(check.body.tenantId, 'default');
    assert.equal(check.body.userId, 'reader');
    assert.deepEqual(check.body.scope, ['automation:read']);
    assert.equal(check.body.wildcardGranted, false);
    const admin = await h.api('GET', '/auth/check');
    assert.equal(admin.body.wildcardGranted, true);
  });

  it('keeps tenants apart: runs and files of another tenant are 404', async () => {
    const up = await upload('mine', 'mine.txt');
    assert.equal((await h.api('GET', `/files/${up.body.id}`, { token: otherTenant })).status, 404);
    const run = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.text-report', input: { text: 'mine' } },
    });
    assert.equal((await h.api('GET', `/runs/${run.body.id}`, { token: otherTenant })).status, 404);
    const list = await h.api('GET', '/runs', { token: otherTenant });
    assert.deepEqual(list.body.runs, []);
  });

  it('serves an OpenAPI 3.1 document without a key', async () => {
    const res = await h.api('GET', '/openapi.json', { token: null });
    assert.equal(res.status, 200);
    assert.equal(res.body.openapi, '3.1.0');
    for (const path of [
      '/api/v1/runs',
      '/api/v1/runs/{id}/artifacts',
      '/api/v1/files/{id}/content',
      '/api/v1/automations/{id}/sync',
      '/api/v1/auth/check',
    ]) {
      assert.ok(res.body.paths[path], path);
    }
    const listParams = res.body.paths['/api/v1/runs'].get.parameters.map((p: any) => p.name);
    assert.ok(
      listParams.includes('sampleRate') &&
        listParams.includes('cursor') &&
        listParams.includes('reviewStatus'),
    );
    assert.ok(res.body.components.schemas.RunStartBody);
    assert.ok(res.body.components.schemas.ApiErrorEnvelope);
  });
});
