import { strict as assert } from 'node:assert';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { createMemoryStoreBuffer, MemoryCounterStore } from '../../src/ratelimit/store/memory.js';
import { UNTRACKED } from '../../src/ratelimit/store/types.js';
import { T0 } from './helpers.js';

describe('ratelimit memory store', () => {
  it('N worker threads × M hits on one key count exactly N×M', async () => {
    const threads = 4;
    const hits = 20_000;
    const buffer = createMemoryStoreBuffer(4096);
    const start = new SharedArrayBuffer(8);
    const gate = new Int32Array(start);
    const workers = Array.from(
      { length: threads },
      (_, id) =>
        new Worker(join(import.meta.dirname, '../../workers/tsx-entry.mjs'), {
          workerData: {
            tsxEntry: pathToFileURL(join(import.meta.dirname, 'store-hammer.worker.ts')).href,
            buffer,
            hits,
            nowMs: T0 + 1000,
            algorithm: 'fixed',
            id,
            start,
          },
        }),
    );
    const done = workers.map(
      (w) =>
        new Promise<{ last: number }>((resolve, reject) => {
          w.once('message', resolve);
          w.once('error', reject);
        }),
    );
    const failed = Promise.race(done).then(
      () => undefined,
      (e: unknown) => e,
    );
    let error: unknown;
    void failed.then((e) => (error = e));
    while (Atomics.load(gate, 1) < threads && error === undefined) await new Promise((r) => setTimeout(r, 5));
    if (error !== undefined) throw error instanceof Error ? error : new Error('a hammer worker failed');
    Atomics.store(gate, 0, 1);
    Atomics.notify(gate, 0);
    const results = await Promise.all(done);
    await Promise.all(workers.map((w) => w.terminate()));
    const store = new MemoryCounterStore(buffer, 'fixed');
    assert.equal(store.peekOne('domain_shared_key_', 60, T0 + 1000), threads * hits);
    assert.equal(Math.max(...results.map((r) => r.last)), threads * hits);
    // every thread's private keys were claimed once each: no duplicate slots, none lost
    assert.equal(store.stats().keys, 1 + threads * (hits / 100));
    for (let id = 0; id < threads; id++) assert.equal(store.peekOne(`domain_t${id}_k100_`, 60, T0 + 1000), 1);
  });

  it('fixed window: epoch-aligned, resets exactly at the boundary', () => {
    const store = new MemoryCounterStore(createMemoryStoreBuffer(64), 'fixed');
    const k = 'd_k_v_';
    assert.equal(store.incrementOne(k, 60, 1, T0 + 59_999), 1);
    assert.equal(store.incrementOne(k, 60, 5, T0 + 59_999), 6);
    assert.equal(store.incrementOne(k, 60, 1, T0 + 60_000), 1);
    assert.equal(store.peekOne(k, 60, T0 + 60_000), 1);
    assert.equal(store.peekOne(k, 60, T0 + 120_000), 0);
    // the same key with another window length is another counter
    assert.equal(store.incrementOne(k, 1, 1, T0 + 60_000), 1);
  });

  it('sliding window: the previous window counts in proportion to its part still inside the interval', () => {
    const store = new MemoryCounterStore(createMemoryStoreBuffer(64), 'sliding');
    const k = 'd_k_v_';
    assert.equal(store.incrementOne(k, 60, 10, T0 + 30_000), 10);
    // at the boundary the whole previous window still counts
    assert.equal(store.peekOne(k, 60, T0 + 60_000), 10);
    // a quarter into the next window: 3/4 of 10 → 7 (floored), plus the new hit
    assert.equal(store.incrementOne(k, 60, 1, T0 + 75_000), 8);
    assert.equal(store.peekOne(k, 60, T0 + 119_999), 1);
    // two windows later nothing is left
    assert.equal(store.peekOne(k, 60, T0 + 180_000), 0);
    assert.equal(store.incrementOne(k, 60, 1, T0 + 180_000), 1);
  });

  it('a thread whose clock is behind never rewinds a bucket: its hit lands in its own window or the newer one', () => {
    const store = new MemoryCounterStore(createMemoryStoreBuffer(64), 'fixed');
    store.incrementOne('k', 1, 1, T0 + 2000);
    // one window behind: the other bucket, attributed to the window its clock is in
    assert.equal(store.incrementOne('k', 1, 1, T0 + 1999), 1);
    // two windows behind (same bucket as the newer window): counted in the newer window
    assert.equal(store.incrementOne('k', 1, 1, T0 + 999), 2);
    assert.equal(store.peekOne('k', 1, T0 + 2000), 2);
  });

  it('expired slots are reused, and a full table answers UNTRACKED and counts it', () => {
    const store = new MemoryCounterStore(createMemoryStoreBuffer(16), 'fixed');
    for (let i = 0; i < 16; i++) assert.equal(store.incrementOne(`key${i}`, 1, 1, T0), 1);
    assert.equal(store.incrementOne('one-too-many', 1, 1, T0), UNTRACKED);
    assert.equal(store.stats().fullEvents, 1);
    // two windows (plus slack) later every slot is reusable
    const later = T0 + 5000;
    for (let i = 0; i < 16; i++) assert.equal(store.incrementOne(`new${i}`, 60, 1, later), 1);
    assert.equal(store.stats().reused, 16);
    assert.equal(store.incrementOne('new3', 60, 1, later), 2);
    // a reused slot starts from zero even though the old key used another window length
    assert.equal(store.peekOne('key0', 1, later), 0);
  });

  it('counts saturate instead of wrapping', () => {
    const store = new MemoryCounterStore(createMemoryStoreBuffer(16), 'fixed');
    store.incrementOne('big', 60, 4_000_000_000, T0);
    assert.equal(store.incrementOne('big', 60, 1_000_000_000, T0), 0xffffffff - 1);
  });

  it('a slot or bucket left BUSY by a thread that died mid-update does not hang other threads', () => {
    const buffer = createMemoryStoreBuffer(16);
    const store = new MemoryCounterStore(buffer, 'fixed');
    assert.equal(store.incrementOne('alive', 60, 1, T0), 1);
    const words = new Uint32Array(buffer);
    const HEADER = 16;
    const SLOT = 8;
    let alive = -1;
    for (let i = 0; i < 16; i++) {
      const base = HEADER + i * SLOT;
      if (words[base] !== 0) alive = base;
      else words[base] = 0xffffffff; // every free slot "being claimed" forever
    }
    // the live key's current bucket "being moved to a new window" forever
    const window = Math.floor(T0 / 1000 / 60);
    words[alive + 4 + (window & 1) * 2] = 0xffffffff;
    assert.equal(store.incrementOne('alive', 60, 1, T0), 1);
    assert.equal(store.incrementOne('alive', 60, 1, T0), 2);
    assert.equal(store.incrementOne('newcomer', 60, 1, T0), UNTRACKED);
  });
});
