// PgBlobStore on a private PostgreSQL: content addressing, chunk boundaries and ranges, the
// size limit leaving nothing behind, concurrent writers of the same content, and a 20 MiB blob
// written and read with the retained memory far below its size (measured after a full GC at
// every MiB, so garbage not yet collected does not count).
import * as assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { TooLargeError } from '../../../src/automation/files/blob-store.js';
import { PgBlobStore } from '../../../src/automation/pg/blob-store.js';
import { migrate } from '../../../src/automation/pg/migrations.js';
import { PgDatabase } from '../../../src/automation/pg/pool.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../../helpers/postgres.js';

async function* pieces(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < data.length; i += size) yield data.subarray(i, i + size);
}

async function collect(stream: Readable): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const c of stream) out.push(c as Buffer);
  return Buffer.concat(out);
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Bytes that differ from chunk to chunk (so a misplaced chunk shows), made from their index. */
function pattern(length: number, seed = 0): Buffer {
  const b = Buffer.alloc(length);
  for (let i = 0; i < length; i++) b[i] = (i * 31 + seed + (i >> 8)) & 0xff;
  return b;
}

// A full collection on demand (node:test runs without --expose-gc). V8 frees the memory of
// dead Buffers after a collection, off the main thread; the second collection, a turn later,
// finishes that, so arrayBuffers counts only live ones.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const retained = async () => {
  gc();
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

describe('PgBlobStore', { skip: postgresSkip }, () => {
  let server: PostgresServer;
  let db: PgDatabase;
  before(async () => {
    server = await startPostgres();
    db = new PgDatabase({ url: await server.createDatabase() });
    await migrate(db);
  });
  after(async () => {
    await db?.close();
    await server?.stop();
  });

  const rowCounts = async () => {
    const { rows } = await db.query<{ blobs: string; chunks: string }>(
      'SELECT (SELECT count(*) FROM blobs) AS blobs, (SELECT count(*) FROM blob_chunks) AS chunks',
    );
    return { blobs: Number(rows[0]!.blobs), chunks: Number(rows[0]!.chunks) };
  };

  it('stores by content, once; stat, read, delete; unknown content is not found', async () => {
    const store = new PgBlobStore(db, { chunkBytes: 1000 });
    const data = pattern(2500, 1);
    const before = await rowCounts();
    const first = await store.write(pieces(data, 300));
    assert.deepEqual(first, { sha256: sha(data), size: 2500 });
    const second = await store.write(pieces(data, 2500));
    assert.deepEqual(second, first);
    const afterTwo = await rowCounts();
    assert.deepEqual(afterTwo, { blobs: before.blobs + 1, chunks: before.chunks + 3 });
    assert.deepEqual(await store.stat(first.sha256), { size: 2500 });
    assert.deepEqual(await collect(await store.read(first.sha256)), data);
    const empty = await store.write(pieces(Buffer.alloc(0), 1));
    assert.deepEqual(empty, { sha256: sha(Buffer.alloc(0)), size: 0 });
    assert.deepEqual(await collect(await store.read(empty.sha256)), Buffer.alloc(0));
    await store.delete(first.sha256);
    assert.equal(await store.stat(first.sha256), undefined);
    await assert.rejects(store.read(first.sha256), { code: 'not_found' });
    await store.delete(first.sha256);
    // Deleted content keeps its chunks for reads opened before, until the sweep.
    assert.deepEqual(await rowCounts(), { blobs: before.blobs + 2, chunks: before.chunks + 3 });
    assert.equal(await store.removeAbandoned(0), 1);
    assert.deepEqual(await rowCounts(), { blobs: before.blobs + 1, chunks: before.chunks });
  });

  it('reads inclusive ranges across chunk boundaries', async () => {
    const store = new PgBlobStore(db, { chunkBytes: 1000 });
    const data = pattern(10_500, 2);
    const { sha256 } = await store.write(pieces(data, 777));
    const ranges: [number, number][] = [
      [0, 0],
      [0, 999],
      [999, 1000],
      [1000, 1999],
      [1500, 4321],
      [10_499, 10_499],
      [0, 10_499],
      [9_990, 10_499],
    ];
    for (const [start, end] of ranges)
      assert.deepEqual(
        await collect(await store.read(sha256, { start, end })),
        data.subarray(start, end + 1),
        `${start}-${end}`,
      );
    // An end past the content stops at its last byte.
    assert.deepEqual(
      await collect(await store.read(sha256, { start: 10_000, end: 99_999 })),
      data.subarray(10_000),
    );
    await assert.rejects(store.read(sha256, { start: 10_500, end: 10_600 }), { code: 'invalid_range' });
    await assert.rejects(store.read(sha256, { start: 5, end: 4 }), { code: 'invalid_range' });
  });

  it('a write past the limit throws TooLargeError and leaves nothing', async () => {
    const store = new PgBlobStore(db, { chunkBytes: 1000 });
    const before = await rowCounts();
    await assert.rejects(store.write(pieces(pattern(5000, 3), 500), 4000), TooLargeError);
    assert.deepEqual(await rowCounts(), before);
    // A source that fails mid-way leaves nothing either.
    async function* failing() {
      yield pattern(2500, 4);
      throw new Error('client went away');
    }
    await assert.rejects(store.write(failing()), /client went away/);
    assert.deepEqual(await rowCounts(), before);
  });

  it('concurrent writers of the same content both get it, stored once', async () => {
    const store = new PgBlobStore(db, { chunkBytes: 1000 });
    const data = pattern(4200, 5);
    const before = await rowCounts();
    const results = await Promise.all([1, 2, 3, 4].map((n) => store.write(pieces(data, 100 * n))));
    for (const r of results) assert.deepEqual(r, { sha256: sha(data), size: 4200 });
    assert.deepEqual(await rowCounts(), { blobs: before.blobs + 1, chunks: before.chunks + 5 });
    assert.deepEqual(await collect(await store.read(sha(data))), data);
  });

  it('streams a 20 MiB blob in and out with memory far below its size', async (t) => {
    const store = new PgBlobStore(db);
    const MiB = 1024 * 1024;
    const total = 20 * MiB;
    const piece = 64 * 1024;
    // Generated piece by piece (never whole here either); each is a fresh buffer.
    const makePiece = (i: number) => pattern(piece, i);
    const expected = createHash('sha256');
    for (let i = 0; i < total / piece; i++) expected.update(makePiece(i));
    const expectedSha = expected.digest('hex');

    const base = await retained();
    let peak = 0;
    async function* source() {
      for (let i = 0; i < total / piece; i++) {
        if (i % 16 === 0) peak = Math.max(peak, (await retained()) - base);
        yield makePiece(i);
      }
    }
    const written = await store.write(source());
    assert.deepEqual(written, { sha256: expectedSha, size: total });
    t.diagnostic(`20 MiB blob: retained at most ${peak} bytes while writing`);
    assert.ok(peak < total / 4, `writing retained ${peak} bytes for a ${total}-byte blob`);

    peak = 0;
    const readBase = await retained();
    const hash = createHash('sha256');
    let read = 0;
    let nextSample = 0;
    for await (const chunk of await store.read(written.sha256)) {
      hash.update(chunk as Buffer);
      read += (chunk as Buffer).length;
      if (read >= nextSample) {
        peak = Math.max(peak, (await retained()) - readBase);
        nextSample += MiB;
      }
    }
    assert.equal(read, total);
    assert.equal(hash.digest('hex'), expectedSha);
    t.diagnostic(`20 MiB blob: retained at most ${peak} bytes while reading`);
    assert.ok(peak < total / 4, `reading retained ${peak} bytes for a ${total}-byte blob`);

    // A range in the middle: only its bytes, across many chunks.
    const start = 5 * MiB + 3;
    const end = 13 * MiB + 7;
    const want = createHash('sha256');
    for (let i = Math.floor(start / piece); i <= Math.floor(end / piece); i++) {
      const p = makePiece(i);
      const from = Math.max(0, start - i * piece);
      const to = Math.min(piece, end - i * piece + 1);
      want.update(p.subarray(from, to));
    }
    const got = createHash('sha256');
    let length = 0;
    for await (const chunk of await store.read(written.sha256, { start, end })) {
      got.update(chunk as Buffer);
      length += (chunk as Buffer).length;
    }
    assert.equal(length, end - start + 1);
    assert.equal(got.digest('hex'), want.digest('hex'));
  });
});
