// The BlobStore contract: content-addressed bytes streamed in and out, ranges, limits, absence.

import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { CodedError } from '../../../src/core/errors.js';
import { TooLargeError, type BlobStore } from '../../../src/automation/files/blob-store.js';
import { contractSuite } from './suite.js';

export const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

export async function* chunks(data: Buffer, size = 64 * 1024): AsyncGenerator<Buffer> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

async function text(store: BlobStore, sha256: string, range?: { start: number; end: number }) {
  const parts: Buffer[] = [];
  for await (const c of await store.read(sha256, range)) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

const notFound = (e: unknown) => e instanceof CodedError && e.code === 'not_found';

export function blobStoreContract(
  label: string,
  make: () => Promise<{ store: BlobStore; close(): Promise<void> }>,
): void {
  contractSuite(`BlobStore contract: ${label}`, make, (s) => {
    it('stores bytes under their sha256 and streams them back whole or by inclusive range', async () => {
      const data = Buffer.from('hello, content-addressed world');
      const stored = await s().store.write(chunks(data, 5));
      assert.deepEqual(stored, { sha256: sha(data), size: data.length });
      assert.deepEqual(await s().store.stat(stored.sha256), { size: data.length });
      assert.deepEqual(await text(s().store, stored.sha256), data);
      assert.equal(
        (await text(s().store, stored.sha256, { start: 7, end: 23 })).toString(),
        'content-addressed',
      );
      assert.equal((await text(s().store, stored.sha256, { start: 0, end: 0 })).toString(), 'h');
    });

    it('the same bytes written twice, even at once, are one blob', async () => {
      const data = Buffer.from('twice');
      const [a, b] = await Promise.all([s().store.write(chunks(data)), s().store.write(chunks(data))]);
      assert.deepEqual(a, b);
      assert.deepEqual(await s().store.write(chunks(data)), a);
      assert.deepEqual(await text(s().store, a.sha256), data);
    });

    it('streams large content in and out in chunks, and stores empty content', async () => {
      const big = Buffer.alloc(3 * 1024 * 1024 + 17);
      for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
      const stored = await s().store.write(chunks(big));
      assert.equal(stored.size, big.length);
      assert.ok((await text(s().store, stored.sha256)).equals(big));
      const empty = await s().store.write(chunks(Buffer.alloc(0)));
      assert.deepEqual(empty, { sha256: sha(''), size: 0 });
      assert.equal((await text(s().store, empty.sha256)).length, 0);
    });

    it('refuses content past the limit and keeps nothing of it', async () => {
      const data = Buffer.from('0123456789');
      await assert.rejects(s().store.write(chunks(data, 3), 9), TooLargeError);
      assert.equal(await s().store.stat(sha(data)), undefined);
      assert.deepEqual(await s().store.write(chunks(data, 3), 10), { sha256: sha(data), size: 10 });
    });

    it('absent blobs: stat is undefined, read and copyTo reject not_found, delete is quiet', async () => {
      const absent = sha('never stored');
      assert.equal(await s().store.stat(absent), undefined);
      await assert.rejects(s().store.read(absent), notFound);
      const dir = mkdtempSync(join(tmpdir(), 'sluice-blob-copy-'));
      try {
        await assert.rejects(s().store.copyTo(absent, join(dir, 'x')), notFound);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      await s().store.delete(absent);
      // Not a digest at all: absent too, never a path outside the store.
      assert.equal(await s().store.stat('../../etc/passwd'), undefined);
      await assert.rejects(s().store.read('../../etc/passwd'), notFound);
    });

    it('delete removes the blob; a read opened before still reads to its end', async () => {
      const data = Buffer.from('short-lived');
      const stored = await s().store.write(chunks(data));
      const open = await s().store.read(stored.sha256);
      await s().store.delete(stored.sha256);
      assert.equal(await s().store.stat(stored.sha256), undefined);
      await assert.rejects(s().store.read(stored.sha256), notFound);
      const parts: Buffer[] = [];
      for await (const c of open) parts.push(c as Buffer);
      assert.deepEqual(Buffer.concat(parts), data);
    });

    it('copyTo makes a file of the content that outlives the blob; an existing file stays', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sluice-blob-copy-'));
      try {
        const data = Buffer.from('copied out');
        const stored = await s().store.write(chunks(data));
        const target = join(dir, 'a', 'b', 'file.txt');
        await s().store.copyTo(stored.sha256, target);
        assert.deepEqual(readFileSync(target), data);
        await s().store.delete(stored.sha256);
        assert.deepEqual(readFileSync(target), data);
        const kept = join(dir, 'kept.txt');
        writeFileSync(kept, 'mine');
        const other = await s().store.write(chunks(Buffer.from('other')));
        await s().store.copyTo(other.sha256, kept);
        assert.equal(readFileSync(kept, 'utf8'), 'mine');
        assert.ok(existsSync(target));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
