// 62 useful bits of fingerprint from two independent 32-bit multiply-xor hashes over UTF-16
// code units. Both halves are forced odd so a zero word always means "empty slot".

export interface Fingerprint {
  a: number;
  b: number;
}

function fmix(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

export function fingerprint(text: string, salt: number, out: Fingerprint): Fingerprint {
  let h1 = 0x811c9dc5 ^ salt;
  let h2 = 0x9747b28c ^ Math.imul(salt, 0x27d4eb2f);
  const n = text.length;
  let i = 0;
  // Two UTF-16 units per step: half the multiplies of a unit-at-a-time loop.
  for (; i + 1 < n; i += 2) {
    const c = text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  if (i < n) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  }
  const textLength = n;
  out.a = (fmix(h1 ^ textLength) | 1) >>> 0;
  out.b = (fmix(h2 ^ Math.imul(textLength, 0x9e3779b1)) | 1) >>> 0;
  // 0xffffffff marks a slot being written; keep fingerprints off it.
  if (out.a === 0xffffffff) out.a = 0xfffffffd;
  return out;
}
