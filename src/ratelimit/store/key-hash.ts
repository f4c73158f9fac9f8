// Counter-slot fingerprints for the memory store that can be computed piece by piece.
//
// A cache key is `prefix + domain + "_" + Σ(key + "_" + value + "_")`; most of it is constant
// per rule (the domain part, configured keys, explicit values). The hash is a polynomial over the
// key's UTF-16 code units, one lane per 32-bit half: H(s) = Σ s[i]·B^(n−1−i) mod 2^32. It composes,
// H(x + y) = H(x)·B^|y| + H(y), so the constant parts are hashed once when the rules are
// installed (a `Segment` holds H and B^|s|) and a decision only feeds the runtime values, without
// building the key string. Hashing the whole key string gives the same fingerprint, so string
// keys (`incrementOne`) and pieced-together keys find the same slot.
//
// The two bases are random and odd, drawn when the shared table is created and kept in its
// header (every thread hashes alike). Nobody outside the process knows them, so a caller cannot
// compute a value whose fingerprint equals another caller's key. The length and the window
// length (salt) are mixed in at the end, then both lanes pass a murmur3 finaliser; the slot also
// stores the window length, so keys of different windows never share a slot.

export interface HashBases {
  readonly a: number;
  readonly b: number;
}

/** H and B^len of a constant piece of text, per lane. */
export interface Segment {
  readonly a: number;
  readonly b: number;
  readonly powA: number;
  readonly powB: number;
  readonly length: number;
}

/** A running hash; `reset`, then append pieces in key order. */
export class KeyHasher {
  a = 0;
  b = 0;
  length = 0;

  constructor(readonly bases: HashBases) {}

  reset(): this {
    this.a = 0;
    this.b = 0;
    this.length = 0;
    return this;
  }

  /** Appends a precomputed constant piece. */
  segment(s: Segment): this {
    this.a = (Math.imul(this.a, s.powA) + s.a) | 0;
    this.b = (Math.imul(this.b, s.powB) + s.b) | 0;
    this.length += s.length;
    return this;
  }

  /** Appends runtime text, one code unit at a time (Horner). */
  text(text: string): this {
    const ba = this.bases.a;
    const bb = this.bases.b;
    let a = this.a;
    let b = this.b;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      a = (Math.imul(a, ba) + c) | 0;
      b = (Math.imul(b, bb) + c) | 0;
    }
    this.a = a;
    this.b = b;
    this.length += n;
    return this;
  }

  /** Appends one code unit (the `_` separators). */
  unit(c: number): this {
    this.a = (Math.imul(this.a, this.bases.a) + c) | 0;
    this.b = (Math.imul(this.b, this.bases.b) + c) | 0;
    this.length++;
    return this;
  }

  /** First fingerprint word: never 0 (empty slot) nor 0xffffffff (slot being written). */
  fingerprintA(salt: number): number {
    const a = (fmix(this.a ^ Math.imul(this.length, 0x9e3779b1) ^ Math.imul(salt, 0x27d4eb2f)) | 1) >>> 0;
    return a === 0xffffffff ? 0xfffffffd : a;
  }

  /** Second fingerprint word (odd, so never 0); its upper bits pick the first slot probed. */
  fingerprintB(salt: number): number {
    return (
      (fmix(this.b ^ Math.imul(this.length, 0x85ebca77) ^ Math.imul(salt + 0x165667b1, 0xc2b2ae3d)) | 1) >>> 0
    );
  }
}

export function segmentOf(bases: HashBases, text: string): Segment {
  let a = 0;
  let b = 0;
  let powA = 1;
  let powB = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = (Math.imul(a, bases.a) + c) | 0;
    b = (Math.imul(b, bases.b) + c) | 0;
    powA = Math.imul(powA, bases.a);
    powB = Math.imul(powB, bases.b);
  }
  return { a, b, powA, powB, length: text.length };
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
