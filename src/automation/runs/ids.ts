// Run ids sort in creation order: the product's `exec_` prefix, a base-36 millisecond time, a
// per-process counter for runs created in the same millisecond, and randomness so two processes
// never collide. Runs stored before the prefix changed keep their `run_…` ids: a run is looked
// up by its id as stored, so those stay readable.

import { createHash, randomFillSync } from 'node:crypto';

export const RUN_ID_PREFIX = 'exec_';

let lastMs = 0;
let counter = 0;

/**
 * Random bytes drawn 4 KiB at a time and handed out 5 per id: one call into the CSPRNG per 819
 * ids instead of one per id (each call crosses into C++ and allocates a buffer; at hundreds of
 * runs a second that showed in the service thread's profile). Bytes are never handed out twice.
 */
const RANDOM_POOL = Buffer.alloc(4095);
let randomAt = RANDOM_POOL.length;

function randomHex5(): string {
  if (randomAt === RANDOM_POOL.length) {
    randomFillSync(RANDOM_POOL);
    randomAt = 0;
  }
  randomAt += 5;
  return RANDOM_POOL.toString('hex', randomAt - 5, randomAt);
}

export function newRunId(now: number): string {
  if (now === lastMs) counter++;
  else {
    lastMs = now;
    counter = 0;
  }
  return `${RUN_ID_PREFIX}${now.toString(36).padStart(9, '0')}${counter.toString(36).padStart(3, '0')}${randomHex5()}`;
}

/** Deterministic in [0, 1): the first 52 bits of SHA-256(tenant, run id) over 2^52. */
export function sampleRank(tenant: string, runId: string): number {
  const digest = createHash('sha256').update(tenant).update('\0').update(runId).digest();
  const high = digest.readUInt32BE(0);
  const low = digest.readUInt32BE(4) >>> 12; // 20 more bits
  return (high * 2 ** 20 + low) / 2 ** 52;
}
