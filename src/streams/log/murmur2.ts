// Kafka's Java client partitions keyed records with MurmurHash2 (seed 0x9747b28c) over the
// serialised key bytes. Using the same function means a Java producer and this service put the
// same key in the same partition, which matters once a Kafka-protocol backend shares the topics.

const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const R = 24;

/** 32-bit MurmurHash2 as a signed int, bit-for-bit equal to `org.apache.kafka.common.utils.Utils.murmur2`. */
export function murmur2(data: Uint8Array, length = data.length): number {
  let h = (SEED ^ length) | 0;
  const blocks = length >>> 2;
  for (let i = 0; i < blocks; i++) {
    const at = i << 2;
    let k = data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> R;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const tail = blocks << 2;
  const rest = length & 3;
  if (rest === 3) h ^= data[tail + 2]! << 16;
  if (rest >= 2) h ^= data[tail + 1]! << 8;
  if (rest >= 1) {
    h ^= data[tail]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** `toPositive(murmur2(bytes)) % partitions` — masking, not Math.abs, as the Java client does. */
export function partitionForKey(key: string, partitions: number): number {
  const hash = intoScratch(key) ? murmur2(scratch, key.length) : murmur2(Buffer.from(key, 'utf8'));
  return (hash & 0x7fffffff) % partitions;
}

/** Reused for ASCII keys (most keys: ids), which are hashed without a Buffer of their own. */
const scratch = new Uint8Array(256);

/** Copies an ASCII key into `scratch` (its UTF-8 bytes are its char codes); false for any other. */
function intoScratch(key: string): boolean {
  if (key.length > scratch.length) return false;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 0x80) return false;
    scratch[i] = c;
  }
  return true;
}
