// The FileStore contract: tenant-scoped file records over the blob store they hold references
// in (a blob goes when nothing holds it), and upload sessions from pending to completed or gone.

import { strict as assert } from 'node:assert';
import { it } from 'node:test';
import type { FileMeta, FileStore, UploadRecord } from '../../../src/automation/files/store.js';
import { chunks } from './blob-store.contract.js';
import { contractSuite } from './suite.js';

const META: FileMeta = { filename: 'report.pdf', contentType: 'application/pdf', purpose: null };
const NOW = Date.UTC(2030, 0, 1);

function session(id: string, tenant: string, extra: Partial<UploadRecord> = {}): UploadRecord {
  return {
    id,
    tenant,
    fileId: `file_${id}`,
    filename: 'up.txt',
    contentType: 'text/plain',
    purpose: 'run-input',
    size: 5,
    idempotencyKey: null,
    createdAt: new Date(NOW).toISOString(),
    expiresAt: NOW + 60_000,
    state: 'pending',
    blob: null,
    ...extra,
  };
}

export function fileStoreContract(
  label: string,
  make: () => Promise<{ store: FileStore; close(): Promise<void> }>,
): void {
  contractSuite(`FileStore contract: ${label}`, make, (s) => {
    const blob = (text: string) => s().store.blobs.write(chunks(Buffer.from(text)));
    const held = async (sha256: string) => (await s().store.blobs.stat(sha256)) !== undefined;

    it('creates files the tenant alone can read; deleting the last one frees its blob', async () => {
      const b = await blob('shared bytes');
      const one = await s().store.create('t1', b, META);
      const two = await s().store.create('t1', b, { ...META, filename: 'copy.pdf', purpose: 'run-input' });
      assert.match(one.id, /^file_/);
      assert.notEqual(one.id, two.id);
      assert.deepEqual(await s().store.get('t1', one.id), one);
      assert.deepEqual(
        [one.tenant, one.filename, one.contentType, one.size, one.sha256, one.purpose],
        ['t1', 'report.pdf', 'application/pdf', b.size, b.sha256, null],
      );
      assert.equal(await s().store.get('t2', one.id), undefined, 'another tenant’s file is absent');
      assert.equal(await s().store.delete('t2', one.id), undefined, 'nor can another tenant delete it');
      assert.equal(await s().store.get('t1', 'file_missing'), undefined);
      assert.deepEqual(await s().store.delete('t1', one.id), one);
      assert.equal(await s().store.get('t1', one.id), undefined);
      assert.equal(await s().store.delete('t1', one.id), undefined);
      assert.ok(await held(b.sha256), 'the other file still holds the blob');
      await s().store.delete('t1', two.id);
      assert.equal(await held(b.sha256), false);
    });

    it('discardIfUnreferenced drops only blobs nothing holds', async () => {
      const kept = await blob('kept');
      await s().store.create('t1', kept, META);
      const loose = await blob('loose');
      await s().store.discardIfUnreferenced(kept.sha256);
      await s().store.discardIfUnreferenced(loose.sha256);
      assert.ok(await held(kept.sha256));
      assert.equal(await held(loose.sha256), false);
    });

    it('an upload session goes pending → uploaded → completed, holding one blob reference', async () => {
      const created = await s().store.createUpload(session('fup_1', 't1'), NOW);
      assert.deepEqual(created, { record: session('fup_1', 't1'), created: true });
      assert.deepEqual(await s().store.upload('fup_1'), session('fup_1', 't1'));
      assert.equal(await s().store.completeUpload('fup_1', NOW), undefined, 'nothing uploaded yet');
      const first = await blob('first');
      assert.equal(await s().store.attachUpload('fup_1', first, NOW), true);
      const second = await blob('secon');
      assert.equal(await s().store.attachUpload('fup_1', second, NOW), true);
      assert.equal(await held(first.sha256), false, 'replaced bytes are let go');
      const up = (await s().store.upload('fup_1'))!;
      assert.equal(up.state, 'uploaded');
      assert.deepEqual(up.blob, { sha256: second.sha256, size: second.size });
      const file = (await s().store.completeUpload('fup_1', NOW))!;
      assert.equal(file.id, 'file_fup_1');
      assert.equal(file.sha256, second.sha256);
      assert.deepEqual(await s().store.get('t1', file.id), file);
      assert.equal((await s().store.upload('fup_1'))!.state, 'completed');
      assert.equal(await s().store.completeUpload('fup_1', NOW), undefined, 'completes once');
      assert.equal(await s().store.attachUpload('fup_1', second, NOW), false);
      await s().store.delete('t1', file.id);
      assert.equal(await held(second.sha256), false, 'the session’s reference became the file’s');
    });

    it('abort lets go of the bytes; an aborted or expired session takes none', async () => {
      await s().store.createUpload(session('fup_2', 't1'), NOW);
      const b = await blob('abort');
      assert.equal(await s().store.attachUpload('fup_2', b, NOW), true);
      await s().store.abortUpload('fup_2');
      assert.equal((await s().store.upload('fup_2'))!.state, 'aborted');
      assert.equal(await held(b.sha256), false);
      assert.equal(await s().store.attachUpload('fup_2', await blob('again'), NOW), false);
      await s().store.abortUpload('fup_2');
      await s().store.abortUpload('fup_missing');
      await s().store.createUpload(session('fup_3', 't1', { expiresAt: NOW + 10 }), NOW);
      assert.equal(await s().store.attachUpload('fup_3', await blob('late!'), NOW + 10), false);
      assert.equal(await s().store.completeUpload('fup_3', NOW + 10), undefined);
      assert.equal(await s().store.upload('fup_missing'), undefined);
    });

    it('an idempotency key answers the tenant’s unexpired session instead of a new one', async () => {
      const key = 'key-1';
      const a = await s().store.createUpload(session('fup_k1', 't1', { idempotencyKey: key }), NOW);
      assert.equal(a.created, true);
      const again = await s().store.createUpload(session('fup_k2', 't1', { idempotencyKey: key }), NOW);
      assert.deepEqual(again, { record: a.record, created: false });
      assert.equal(await s().store.upload('fup_k2'), undefined);
      const other = await s().store.createUpload(session('fup_k3', 't2', { idempotencyKey: key }), NOW);
      assert.equal(other.created, true, 'keys are per tenant');
      const later = await s().store.createUpload(
        session('fup_k4', 't1', { idempotencyKey: key }),
        NOW + 60_000,
      );
      assert.equal(later.created, true, 'an expired session’s key is free again');
    });

    it('removeExpiredUploads removes sessions expired at `now`, frees their bytes and counts them', async () => {
      const t = NOW + 1_000_000;
      await s().store.createUpload(session('fup_e1', 't9', { expiresAt: t, idempotencyKey: 'e' }), NOW);
      await s().store.createUpload(session('fup_e2', 't9', { expiresAt: t + 1 }), NOW);
      const b = await blob('expir');
      assert.equal(await s().store.attachUpload('fup_e1', b, NOW), true);
      const removed = await s().store.removeExpiredUploads(t);
      assert.ok(removed >= 1);
      assert.equal(await s().store.upload('fup_e1'), undefined);
      assert.ok(await s().store.upload('fup_e2'));
      assert.equal(await held(b.sha256), false);
      assert.equal(await s().store.removeExpiredUploads(t), 0);
      const fresh = await s().store.createUpload(session('fup_e3', 't9', { idempotencyKey: 'e' }), t);
      assert.equal(fresh.created, true);
    });
  });
}
