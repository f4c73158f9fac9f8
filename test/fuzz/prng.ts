// A seeded PRNG (mulberry32: a 32-bit state, good enough spread for test input and trivially
// reproducible) with the few draws the fuzzer needs. Same seed, same sequence of requests.

export class Prng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  bytes(length: number): Buffer {
    const out = Buffer.allocUnsafe(length);
    for (let i = 0; i < length; i++) out[i] = Math.floor(this.next() * 256);
    return out;
  }

  /** The generator of request `index` of a run: a case replays from (seed, index) alone. */
  static forCase(seed: number, index: number): Prng {
    return new Prng(Math.imul((seed ^ 0x5bd1e995) >>> 0, 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b));
  }
}
