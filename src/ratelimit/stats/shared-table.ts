// Named counters in a SharedArrayBuffer, so every front-end thread adds to the same numbers and
// the debug server on thread 0 prints the process totals without any message passing.
//
// Slot (72 × uint32): [fpA, fpB, nameBytes, lo, hi, name… (up to 252 bytes)]. A slot is claimed
// by CAS on fpA; the name is written before nameBytes is published, so readers skip slots whose
// nameBytes is still 0. Values are 64-bit (lo + carry into hi). When the table is full, adds go
// to a single overflow counter shown as `ratelimit.stats.table_full`.

import { fingerprint, type Fingerprint } from '../store/hash.js';

const MAGIC = 0x534c5354; // "SLST"
const HEADER_WORDS = 8;
const H_MAGIC = 0;
const H_CAPACITY = 1;
const H_OVERFLOW = 2;
const SLOT = 72;
const NAME_OFFSET = 5;
const NAME_BYTES = (SLOT - NAME_OFFSET) * 4;
const BUSY = 0xffffffff;
const MAX_PROBE = 64;
const CACHE_LIMIT = 50_000;

export const OVERFLOW_STAT = 'ratelimit.stats.table_full';

export function createStatsBuffer(maxKeys: number): SharedArrayBuffer {
  let cap = 16;
  while (cap < maxKeys) cap *= 2;
  const sab = new SharedArrayBuffer((HEADER_WORDS + cap * SLOT) * 4);
  const words = new Uint32Array(sab);
  words[H_MAGIC] = MAGIC;
  words[H_CAPACITY] = cap;
  return sab;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A handle is the word index of a counter's slot; -1 is the overflow counter. */
export type StatHandle = number;

export class SharedStatsTable {
  private readonly words: Uint32Array;
  private readonly bytes: Uint8Array;
  private readonly mask: number;
  private readonly cache = new Map<string, StatHandle>();
  private readonly fp: Fingerprint = { a: 0, b: 0 };

  constructor(buffer: SharedArrayBuffer) {
    this.words = new Uint32Array(buffer);
    this.bytes = new Uint8Array(buffer);
    if (this.words[H_MAGIC] !== MAGIC) throw new Error('stats buffer was not created by createStatsBuffer');
    this.mask = this.words[H_CAPACITY]! - 1;
  }

  handle(name: string): StatHandle {
    const cached = this.cache.get(name);
    if (cached !== undefined) return cached;
    const handle = this.find(name);
    // Runtime-valued metric names are unbounded; forget handles rather than grow forever.
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(name, handle);
    return handle;
  }

  add(handle: StatHandle, value: number): void {
    if (value <= 0) return;
    const w = this.words;
    if (handle < 0) {
      Atomics.add(w, H_OVERFLOW, 1);
      return;
    }
    let v = value;
    if (v >= 0x100000000) {
      Atomics.add(w, handle + 4, Math.floor(v / 0x100000000));
      v %= 0x100000000;
    }
    const old = Atomics.add(w, handle + 3, v);
    if (old + v > 0xffffffff) Atomics.add(w, handle + 4, 1);
  }

  inc(name: string, value = 1): void {
    this.add(this.handle(name), value);
  }

  get(name: string): number {
    const handle = this.find(name, false);
    return handle < 0 ? 0 : this.read(handle);
  }

  /** Every counter with its value, sorted by name. */
  snapshot(): Map<string, number> {
    const w = this.words;
    const out: [string, number][] = [];
    const cap = this.mask + 1;
    for (let i = 0; i < cap; i++) {
      const base = HEADER_WORDS + i * SLOT;
      const a = Atomics.load(w, base);
      if (a === 0 || a === BUSY) continue;
      const length = Atomics.load(w, base + 2);
      if (length === 0) continue;
      const start = (base + NAME_OFFSET) * 4;
      // TextDecoder refuses views of shared memory; copy the name out first.
      const name = decoder.decode(this.bytes.slice(start, start + length));
      out.push([name, this.read(base)]);
    }
    const overflow = Atomics.load(w, H_OVERFLOW);
    if (overflow > 0) out.push([OVERFLOW_STAT, overflow]);
    out.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    return new Map(out);
  }

  private read(base: number): number {
    return Atomics.load(this.words, base + 4) * 0x100000000 + Atomics.load(this.words, base + 3);
  }

  private find(name: string, claim = true): StatHandle {
    const w = this.words;
    const fp = fingerprint(name, 0x5747, this.fp);
    let index = (fp.b >>> 1) & this.mask;
    for (let probe = 0; probe < MAX_PROBE; probe++) {
      const base = HEADER_WORDS + index * SLOT;
      let a = Atomics.load(w, base);
      // Bounded: a claimer terminated mid-write must not hang every other thread.
      for (let spins = 0; a === BUSY && spins < 1 << 20; spins++) a = Atomics.load(w, base);
      if (a === 0) {
        if (!claim) return -1;
        if (Atomics.compareExchange(w, base, 0, BUSY) !== 0) {
          probe--;
          continue;
        }
        Atomics.store(w, base + 1, fp.b);
        let encoded = encoder.encode(name);
        if (encoded.length > NAME_BYTES) encoded = encoded.subarray(0, NAME_BYTES);
        this.bytes.set(encoded, (base + NAME_OFFSET) * 4);
        Atomics.store(w, base, fp.a);
        Atomics.store(w, base + 2, encoded.length);
        return base;
      }
      if (a === fp.a && Atomics.load(w, base + 1) === fp.b) return base;
      index = (index + 1) & this.mask;
    }
    return -1;
  }
}
