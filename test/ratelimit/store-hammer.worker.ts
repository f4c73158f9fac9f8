// Worker for the contention test: hammers one key (and a few private ones) in the shared table.
import { parentPort, workerData } from 'node:worker_threads';
import { MemoryCounterStore } from '../../src/ratelimit/store/memory.js';

const { buffer, hits, nowMs, algorithm, id, start } = workerData as {
  buffer: SharedArrayBuffer;
  hits: number;
  nowMs: number;
  algorithm: 'fixed' | 'sliding';
  id: number;
  start: SharedArrayBuffer;
};
const store = new MemoryCounterStore(buffer, algorithm);
// Start together so the threads really contend.
const gate = new Int32Array(start);
Atomics.add(gate, 1, 1);
Atomics.wait(gate, 0, 0, 5000);
let last = 0;
for (let i = 0; i < hits; i++) {
  last = store.incrementOne('domain_shared_key_', 60, 1, nowMs);
  // distinct keys claimed concurrently by every thread
  if (i % 100 === 0) store.incrementOne(`domain_t${id}_k${i}_`, 60, 1, nowMs);
}
parentPort!.postMessage({ last });
