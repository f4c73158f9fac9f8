// Upload sessions (the SDK's files.upload / createUpload / completeUpload / abortUpload): create a
// session, PUT the bytes to the signed URL it names (no API key, as the SDK does), complete it
// into a File; the refusals; and expiry with a test clock on a real LMDB store.

import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import type { KeyStore } from '../../src/core/auth/index.js';
import { openAutomationDb } from '../../src/automation/db.js';
import { LocalBlobStore } from '../../src/automation/files/blobs.js';
import { FileService } from '../../src/automation/files/service.js';
import { LmdbFileStore } from '../../src/automation/files/store.js';
import { DownloadTokens } from '../../src/automation/http/tokens.js';
import * as W from '../../src/automation/wire/index.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startHarness, type Harness } from './harness.js';
import { FILE_ECHO, gitIn, release } from './registry-git.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('file upload sessions over HTTP', () => {
  let h: Harness;
  let other: string;
  before(async () => {
    h = await startHarness({ AUTOMATION_MAX_UPLOAD_BYTES: '65536' });
    other = (
      await (h.ctx.ctx.auth as KeyStore).create({ tenant: 'other', user: 'o', scopes: ['automation'] })
    ).token;
    release(h.registryPath, FILE_ECHO);
    gitIn(h.registryPath, ['tag', '-a', 'workflows.file-echo@1.0.0', '-m', 'x']);
    assert.equal((await h.api('POST', '/automations/workflows.file-echo/sync')).status, 200);
  });
  after(async () => {
    await h?.close();
  });

  const create = (body: Record<string, unknown>, token?: string) =>
    h.api('POST', '/files/uploads', { body, ...(token ? { token } : {}) });

  /** The SDK's PUT: the session's headers, no Authorization, the bytes as the body. */
  const put = (session: { url: string; headers: Record<string, string> }, bytes: string | Uint8Array) =>
    fetch(session.url, { method: 'PUT', headers: session.headers, body: bytes });

  it('creates a session, takes the bytes at its signed URL and completes it into a File', async () => {
    const text = 'uploaded by session';
    const created = await create({
      filename: 'notes.txt',
      contentType: 'text/plain',
      size: Buffer.byteLength(text),
      idempotencyKey: 'key-1',
      purpose: 'run-input',
    });
    assert.equal(created.status, 200);
    const session = created.body;
    assert.ok(Value.Check(W.PresignedFileUploadSession, session), JSON.stringify(session));
    assert.equal(session.transport, 'presigned-put');
    assert.match(session.uploadId, /^fup_/);
    assert.match(session.fileId, /^file_/);
    assert.equal(session.maxFileSizeBytes, 65536);
    assert.deepEqual(session.headers, { 'content-type': 'text/plain' });
    // An absolute URL on this service, under the prefix the request came in on.
    assert.ok(session.url.startsWith(`${h.url}/api/v1/files/uploads/${session.uploadId}/content?token=`));
    assert.ok(Date.parse(session.expiresAt) > Date.now());

    // A retry of the lost create answer (same key, same file) gets the same session.
    const again = await create({
      filename: 'notes.txt',
      contentType: 'text/plain',
      size: Buffer.byteLength(text),
      idempotencyKey: 'key-1',
      purpose: 'run-input',
    });
    assert.deepEqual(again.body, session);
    const reused = await create({
      filename: 'other.txt',
      contentType: 'text/plain',
      size: 3,
      idempotencyKey: 'key-1',
    });
    assert.equal(reused.status, 409);
    assert.equal(reused.body.issues[0].code, 'idempotency_key_reused');
    // Keys are per tenant: another tenant's same key is a session of its own.
    const theirs = await create(
      { filename: 'x.txt', contentType: 'text/plain', size: 1, idempotencyKey: 'key-1' },
      other,
    );
    assert.equal(theirs.status, 200);
    assert.notEqual(theirs.body.uploadId, session.uploadId);

    const early = await h.api('POST', `/files/uploads/${session.uploadId}/complete`);
    assert.equal(early.status, 409);
    assert.equal(early.body.issues[0].code, 'upload_incomplete');

    const stored = await put(session, text);
    assert.equal(stored.status, 200);
    assert.deepEqual(await stored.json(), {
      uploadId: session.uploadId,
      size: text.length,
      sha256: sha(text),
    });

    // Another tenant cannot complete or abort it.
    assert.equal(
      (await h.api('POST', `/files/uploads/${session.uploadId}/complete`, { token: other })).status,
      404,
    );
    assert.equal((await h.api('DELETE', `/files/uploads/${session.uploadId}`, { token: other })).status, 404);

    const done = await h.api('POST', `/files/uploads/${session.uploadId}/complete`);
    assert.equal(done.status, 200);
    assert.ok(Value.Check(W.File, done.body), JSON.stringify(done.body));
    assert.equal(done.body.id, session.fileId);
    assert.equal(done.body.filename, 'notes.txt');
    assert.equal(done.body.size, text.length);
    assert.equal(done.body.purpose, 'run-input');
    // A repeated complete (a lost answer) gives the same file.
    assert.deepEqual((await h.api('POST', `/files/uploads/${session.uploadId}/complete`)).body, done.body);
    // The session is closed to more bytes and to abort.
    assert.equal((await put(session, text)).status, 409);
    assert.equal((await h.api('DELETE', `/files/uploads/${session.uploadId}`)).status, 409);

    const content = await h.api('GET', `/files/${session.fileId}/content`);
    assert.equal(content.body.toString(), text);
    assert.equal(content.headers.get('x-file-content-type'), 'text/plain');
    // A run takes the completed file by reference, as the SDK's pre-uploaded inputs do.
    const run = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.file-echo', input: {}, files: { doc: { $fileId: session.fileId } } },
    });
    assert.deepEqual(run.body.output, { 'doc/notes.txt': text });
  });

  it('serves the upload URL under /v1 for a session created there', async () => {
    const res = await fetch(`${h.url}/v1/files/uploads`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filename: 'v1.txt', contentType: 'text/plain', size: 2 }),
    });
    const session = (await res.json()) as any;
    assert.ok(session.url.startsWith(`${h.url}/v1/files/uploads/`));
    assert.equal((await put(session, 'ok')).status, 200);
    assert.equal((await h.api('POST', `/files/uploads/${session.uploadId}/complete`)).body.size, 2);
  });

  it('refuses a wrong token, a wrong size and an upload after abort, keeping no bytes', async () => {
    const session = (await create({ filename: 'a.bin', contentType: 'application/octet-stream', size: 5 }))
      .body;
    const url = new URL(session.url);
    const token = url.searchParams.get('token')!;
    const withToken = (t: string | null) => {
      const u = new URL(session.url);
      if (t === null) u.searchParams.delete('token');
      else u.searchParams.set('token', t);
      return fetch(u, { method: 'PUT', body: 'abcde' });
    };
    // No token, a forged one, and a valid token of another session: as if there were no upload.
    assert.equal((await withToken(null)).status, 404);
    assert.equal((await withToken(`${token.split('.')[0]}.${'A'.repeat(43)}`)).status, 404);
    const second = (await create({ filename: 'b.bin', contentType: 'application/octet-stream', size: 5 }))
      .body;
    assert.equal((await withToken(new URL(second.url).searchParams.get('token'))).status, 404);
    const missing = await fetch(session.url.replace(session.uploadId, 'fup_nothing'), {
      method: 'PUT',
      body: 'abcde',
    });
    assert.equal(missing.status, 404);
    const err = (await missing.json()) as any;
    assert.equal(err.issues[0].code, 'not_found');

    const long = await put(session, 'abcdef');
    assert.equal(long.status, 413);
    const short = await put(session, 'abc');
    assert.equal(short.status, 400);
    assert.equal(((await short.json()) as any).issues[0].code, 'size_mismatch');
    for (const text of ['abcdef', 'abc'])
      assert.equal(await h.service.core.files.blobs.stat(sha(text)), undefined);

    assert.equal((await put(session, 'abcde')).status, 200);
    assert.ok(await h.service.core.files.blobs.stat(sha('abcde')));
    const aborted = await h.api('DELETE', `/files/uploads/${session.uploadId}`);
    assert.deepEqual(aborted.body, { aborted: true });
    assert.deepEqual((await h.api('DELETE', `/files/uploads/${session.uploadId}`)).body, { aborted: true });
    // The bytes only the session held are gone; the session takes no more and cannot complete.
    assert.equal(await h.service.core.files.blobs.stat(sha('abcde')), undefined);
    assert.equal((await put(session, 'abcde')).status, 409);
    const done = await h.api('POST', `/files/uploads/${session.uploadId}/complete`);
    assert.equal(done.status, 409);
    assert.equal(done.body.issues[0].code, 'upload_aborted');
  });

  it('refuses bad session requests with 4xx', async () => {
    const over = await create({ filename: 'big.bin', contentType: 'application/octet-stream', size: 65537 });
    assert.equal(over.status, 413);
    assert.equal(over.body.issues[0].field, 'size');
    const cases: [Record<string, unknown>, string][] = [
      [{ contentType: 'text/plain', size: 1 }, 'filename'],
      [{ filename: '..', contentType: 'text/plain', size: 1 }, 'filename'],
      [{ filename: 'a/b.txt', contentType: 'text/plain', size: 1 }, 'filename'],
      [{ filename: 'a.txt', contentType: 'text/plain\r\nx: y', size: 1 }, 'contentType'],
      [{ filename: 'a.txt', contentType: 'text/plain', size: -1 }, 'size'],
      [{ filename: 'a.txt', contentType: 'text/plain', size: 1.5 }, 'size'],
      [{ filename: 'a.txt', contentType: 'text/plain', size: 1, purpose: 'forever' }, 'purpose'],
      [
        { filename: 'a.txt', contentType: 'text/plain', size: 1, idempotencyKey: 'k'.repeat(300) },
        'idempotencyKey',
      ],
    ];
    for (const [body, field] of cases) {
      const r = await create(body);
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(r.body.issues[0].field, field, JSON.stringify(r.body));
    }
    const bogus = await h.api('POST', '/files/uploads/fup_nothing/complete');
    assert.equal(bogus.status, 404);
    // A Host header that cannot go into a URL: the upload URL is not built from it.
    const host = await rawRequest(Number(new URL(h.url).port), '/api/v1/files/uploads', {
      method: 'POST',
      headers: { host: 'evil"/x', authorization: `Bearer ${h.token}`, 'content-type': 'application/json' },
      body: Buffer.from(JSON.stringify({ filename: 'a.txt', contentType: 'text/plain', size: 1 })),
    });
    assert.equal(host.status, 400, host.text);
    assert.equal(host.json().issues[0].code, 'invalid_host');
  });
});

describe('upload session expiry', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-uploads-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses an expired session everywhere and the sweep frees its bytes', async () => {
    const db = openAutomationDb(join(dir, 'meta.lmdb'));
    try {
      const store = new LmdbFileStore(db, new LocalBlobStore(join(dir, 'blobs')));
      let now = Date.parse('2030-01-01T00:00:00Z');
      const files = new FileService(store, {
        maxUploadBytes: 1024,
        sessionTtlMs: 60_000,
        signer: new DownloadTokens(Buffer.from('secret'), 60_000),
        now: () => now,
      });
      const chunks = (text: string) =>
        (async function* () {
          yield Buffer.from(text);
        })();
      let token = '';
      const session = await files.createSession(
        't1',
        { filename: 'late.txt', contentType: 'text/plain', size: 4, idempotencyKey: 'k' },
        (_id, t) => ((token = t), `http://x/${t}`),
      );
      await files.receive(session.uploadId, token, chunks('late'));
      const blob = sha('late');
      assert.ok(await store.blobs.stat(blob));
      assert.equal(await files.sweep(), 0);

      now += 60_000;
      await assert.rejects(files.complete('t1', session.uploadId), (e: any) => e.status === 404);
      await assert.rejects(files.abort('t1', session.uploadId), (e: any) => e.status === 404);
      await assert.rejects(
        files.receive(session.uploadId, token, chunks('late')),
        (e: any) => e.status === 404,
      );
      // The key is free again once its session expired.
      const fresh = await files.createSession(
        't1',
        { filename: 'other.txt', contentType: 'text/plain', size: 1, idempotencyKey: 'k' },
        () => 'http://x',
      );
      assert.notEqual(fresh.uploadId, session.uploadId);

      assert.equal(await files.sweep(), 1);
      assert.equal(await store.upload(session.uploadId), undefined);
      assert.equal(await store.blobs.stat(blob), undefined);
      assert.equal(await files.sweep(), 0);
    } finally {
      await db.close();
    }
  });
});
