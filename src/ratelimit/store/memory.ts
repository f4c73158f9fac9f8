// The embedded counter store: an open-addressing hash table in a SharedArrayBuffer that every
// front-end thread maps, updated only with Atomics so concurrent increments are never lost.
//
// Slot (8 × uint32): [fpA, fpB, divider, spare, win0, cnt0, win1, cnt1]
//  - fpA 0 = empty, BUSY = being (re)initialised by another thread (a few stores; readers spin);
//  - two buckets indexed by window parity, each (window index, count). A bucket moves to a new
//    window by CAS(window → BUSY), store count, store window, so an increment can never land in a
//    count that is about to be reset without also seeing the new window.
//  - fixed: count of the current window (identical to the upstream epoch-aligned window);
//    sliding: current count + previous window's count weighted by the part of it still inside
//    the sliding interval (the two-bucket approximation).
// Slots are never emptied, so probe chains stay intact; a slot whose newest window is two
// windows old is reused for a new key. When a key finds neither its slot, an empty one nor an
// expired one within MAX_PROBE slots, the table is full: the op is UNTRACKED (the engine lets
// the request through) and the full counter in the header goes up.

import { randomBytes } from 'node:crypto';
import type { WindowAlgorithm } from '../settings/index.js';
import { KeyHasher, type HashBases } from './key-hash.js';
import { UNTRACKED, type CounterOp, type CounterStore, type Counts } from './types.js';

const MAGIC = 0x534c5243; // "SLRC"
const HEADER_WORDS = 16;
const H_MAGIC = 0;
const H_CAPACITY = 1;
const H_FULL = 2;
const H_KEYS = 3;
const H_REUSED = 4;
/** The key hash's two random odd bases (key-hash.ts), shared by every thread. */
const H_BASE_A = 5;
const H_BASE_B = 6;
const SLOT = 8;
const BUSY = 0xffffffff;
const MAX_PROBE = 128;
const MAX_COUNT = 0xffffffff - 1;
/** Clocks of different threads may differ by one event-loop turn; reuse only clearly expired slots. */
const REUSE_SLACK_MS = 2000;
/**
 * A BUSY word lasts a few stores. One that stays BUSY this many reads belongs to a thread that
 * was terminated mid-update; readers then stop waiting (a slot is skipped, a bucket taken over)
 * instead of spinning forever.
 */
const MAX_SPIN = 1 << 20;

export function memoryStoreBytes(maxKeys: number): number {
  return (HEADER_WORDS + roundCapacity(maxKeys) * SLOT) * 4;
}

function roundCapacity(maxKeys: number): number {
  let cap = 16;
  while (cap < maxKeys) cap *= 2;
  return cap;
}

/** Allocates the shared table; the main thread calls this once and hands the buffer to every thread. */
export function createMemoryStoreBuffer(maxKeys: number): SharedArrayBuffer {
  const sab = new SharedArrayBuffer(memoryStoreBytes(maxKeys));
  const words = new Uint32Array(sab);
  words[H_MAGIC] = MAGIC;
  words[H_CAPACITY] = roundCapacity(maxKeys);
  const seed = randomBytes(8);
  // Odd and not 1: an even base loses the early units of long keys, 1 ignores their order.
  words[H_BASE_A] = (seed.readUInt32LE(0) | 1) === 1 ? 0x01000193 : seed.readUInt32LE(0) | 1;
  words[H_BASE_B] = (seed.readUInt32LE(4) | 1) === 1 ? 0x5bd1e995 : seed.readUInt32LE(4) | 1;
  return sab;
}

export interface MemoryStoreStats {
  capacity: number;
  keys: number;
  reused: number;
  fullEvents: number;
}

export class MemoryCounterStore implements CounterStore {
  readonly kind = 'memory';
  private readonly words: Uint32Array;
  private readonly mask: number;
  private readonly capacity: number;
  /** Bases of the key hash; the engine hashes constant key parts with them once. */
  readonly bases: HashBases;
  private readonly hasher: KeyHasher;

  constructor(
    buffer: SharedArrayBuffer,
    readonly algorithm: WindowAlgorithm,
  ) {
    this.words = new Uint32Array(buffer);
    if (this.words[H_MAGIC] !== MAGIC)
      throw new Error('memory store buffer was not created by createMemoryStoreBuffer');
    this.capacity = this.words[H_CAPACITY]!;
    this.mask = this.capacity - 1;
    this.bases = Object.freeze({ a: this.words[H_BASE_A]! | 0, b: this.words[H_BASE_B]! | 0 });
    this.hasher = new KeyHasher(this.bases);
  }

  increment(ops: readonly CounterOp[], nowMs: number): Counts {
    const out = new Array<number>(ops.length);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      out[i] = this.incrementOne(op.key, op.divider, op.hits, nowMs);
    }
    return out;
  }

  peek(ops: readonly CounterOp[], nowMs: number): Counts {
    const out = new Array<number>(ops.length);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      out[i] = this.peekOne(op.key, op.divider, nowMs);
    }
    return out;
  }

  healthy(): boolean {
    return true;
  }

  async close(): Promise<void> {
    // The buffer belongs to the process; nothing to release per thread.
  }

  stats(): MemoryStoreStats {
    const w = this.words;
    return {
      capacity: this.capacity,
      keys: Atomics.load(w, H_KEYS),
      reused: Atomics.load(w, H_REUSED),
      fullEvents: Atomics.load(w, H_FULL),
    };
  }

  /** Count after adding `hits` (weighted with the previous window when sliding), or UNTRACKED. */
  incrementOne(key: string, divider: number, hits: number, nowMs: number): number {
    const h = this.hasher.reset().text(key);
    return this.incrementHashed(h.fingerprintA(divider), h.fingerprintB(divider), divider, hits, nowMs);
  }

  peekOne(key: string, divider: number, nowMs: number): number {
    const h = this.hasher.reset().text(key);
    return this.peekHashed(h.fingerprintA(divider), h.fingerprintB(divider), divider, nowMs);
  }

  /** incrementOne for a key already hashed (KeyHasher.fingerprintA/B with the divider as salt). */
  incrementHashed(fpA: number, fpB: number, divider: number, hits: number, nowMs: number): number {
    const base = this.findSlot(fpA, fpB, divider, nowMs, true);
    if (base < 0) {
      Atomics.add(this.words, H_FULL, 1);
      return UNTRACKED;
    }
    const window = Math.floor(nowMs / 1000 / divider);
    const current = this.addToBucket(base + 4 + (window & 1) * 2, window, hits);
    if (this.algorithm === 'fixed') return current;
    return current + this.weightedPrevious(base, window, divider, nowMs);
  }

  peekHashed(fpA: number, fpB: number, divider: number, nowMs: number): number {
    const base = this.findSlot(fpA, fpB, divider, nowMs, false);
    if (base < 0) return 0;
    const w = this.words;
    const window = Math.floor(nowMs / 1000 / divider);
    const bucket = base + 4 + (window & 1) * 2;
    const current = Atomics.load(w, bucket) === window ? Atomics.load(w, bucket + 1) : 0;
    if (this.algorithm === 'fixed') return current;
    return current + this.weightedPrevious(base, window, divider, nowMs);
  }

  private weightedPrevious(base: number, window: number, divider: number, nowMs: number): number {
    const w = this.words;
    const prev = base + 4 + ((window - 1) & 1) * 2;
    if (Atomics.load(w, prev) !== window - 1) return 0;
    const count = Atomics.load(w, prev + 1);
    if (count === 0) return 0;
    const lengthMs = divider * 1000;
    const elapsed = nowMs - window * lengthMs;
    return Math.floor((count * (lengthMs - elapsed)) / lengthMs);
  }

  private addToBucket(bucket: number, window: number, hits: number): number {
    const w = this.words;
    const h = hits > MAX_COUNT ? MAX_COUNT : hits;
    let spins = 0;
    for (;;) {
      const current = Atomics.load(w, bucket);
      if (current === BUSY) {
        if (++spins < MAX_SPIN) continue;
        if (Atomics.compareExchange(w, bucket, BUSY, window) === BUSY) {
          Atomics.store(w, bucket + 1, h);
          return h;
        }
        continue;
      }
      // A bucket already in a newer window means this thread's clock is behind: count the hit
      // there rather than rewind the window (conservative, never loses hits).
      if (current >= window) {
        const after = Atomics.add(w, bucket + 1, h) + h;
        if (after > MAX_COUNT) {
          Atomics.store(w, bucket + 1, MAX_COUNT);
          return MAX_COUNT;
        }
        return after;
      }
      if (Atomics.compareExchange(w, bucket, current, BUSY) === current) {
        Atomics.store(w, bucket + 1, h);
        Atomics.store(w, bucket, window);
        return h;
      }
    }
  }

  /** Word index of the key's slot; claims an empty or expired slot when `claim`; -1 when none. */
  private findSlot(fpA: number, fpB: number, divider: number, nowMs: number, claim: boolean): number {
    const w = this.words;
    let index = (fpB >>> 1) & this.mask;
    let reusable = -1;
    let reusableA = 0;
    for (let probe = 0; probe < MAX_PROBE; probe++) {
      const base = HEADER_WORDS + index * SLOT;
      let a = Atomics.load(w, base);
      for (let spins = 0; a === BUSY && spins < MAX_SPIN; spins++) a = Atomics.load(w, base);
      if (a === 0) {
        if (!claim) return -1;
        if (reusable >= 0 && this.claim(reusable, reusableA, fpA, fpB, divider)) {
          Atomics.add(w, H_REUSED, 1);
          return reusable;
        }
        if (this.claim(base, 0, fpA, fpB, divider)) {
          Atomics.add(w, H_KEYS, 1);
          return base;
        }
        // Lost the race for this slot: look at it again (it may now hold our key).
        probe--;
        continue;
      }
      if (a === fpA && Atomics.load(w, base + 1) === fpB && Atomics.load(w, base + 2) === divider)
        return base;
      if (claim && reusable < 0 && this.expired(base, nowMs)) {
        reusable = base;
        reusableA = a;
      }
      index = (index + 1) & this.mask;
    }
    if (reusable >= 0 && this.claim(reusable, reusableA, fpA, fpB, divider)) {
      Atomics.add(w, H_REUSED, 1);
      return reusable;
    }
    return -1;
  }

  private claim(base: number, expectedA: number, fpA: number, fpB: number, divider: number): boolean {
    const w = this.words;
    if (Atomics.compareExchange(w, base, expectedA, BUSY) !== expectedA) return false;
    Atomics.store(w, base + 1, fpB);
    Atomics.store(w, base + 2, divider);
    // A reused slot may carry windows of another divider; clear them while the slot is BUSY
    // (lookups of any key spin on BUSY, so nobody reads half-reset buckets).
    for (let i = 4; i < SLOT; i++) Atomics.store(w, base + i, 0);
    Atomics.store(w, base, fpA);
    return true;
  }

  private expired(base: number, nowMs: number): boolean {
    const w = this.words;
    const divider = Atomics.load(w, base + 2);
    if (divider === 0) return false;
    const w0 = Atomics.load(w, base + 4);
    const w1 = Atomics.load(w, base + 6);
    if (w0 === BUSY || w1 === BUSY) return false;
    const newest = Math.max(w0, w1);
    return (newest + 2) * divider * 1000 + REUSE_SLACK_MS <= nowMs;
  }
}
