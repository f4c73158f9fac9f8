// The shared counter table against its ceiling, a raw Atomics.add: what hashing the key,
// finding the slot and the window bookkeeping cost on top of the increment itself.

import { createMemoryStoreBuffer, MemoryCounterStore } from '../src/ratelimit/store/memory.js';
import type { BenchFile } from './types.js';

const OPS = 256;

const bench: BenchFile = () => {
  const raw = new Int32Array(new SharedArrayBuffer(64 * 4));
  const now = Date.UTC(2026, 10, 25, 12, 0, 30);
  const fixed = new MemoryCounterStore(createMemoryStoreBuffer(1 << 17), 'fixed');
  const sliding = new MemoryCounterStore(createMemoryStoreBuffer(1 << 17), 'sliding');
  const keys = Array.from(
    { length: 10_000 },
    (_, i) => `rl_example_remote_address_10.0.${(i >> 8) & 255}.${i & 255}_path_/api/v1/items_`,
  );
  let k = 0;
  return [
    {
      name: 'ratelimit memory store',
      description:
        'one counted descriptor: hash a 55-char key, find its slot (10k keys live), move the window, add; ceiling = Atomics.add alone',
      ceiling: 'Atomics.add Int32',
      tasks: {
        'Atomics.add Int32': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) Atomics.add(raw, i & 63, 1);
          },
        },
        'fixed window increment (10k keys)': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) fixed.incrementOne(keys[k++ % keys.length]!, 60, 1, now);
          },
        },
        'sliding window increment (10k keys)': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) sliding.incrementOne(keys[k++ % keys.length]!, 60, 1, now);
          },
        },
        'fixed window increment (one hot key)': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) fixed.incrementOne(keys[0]!, 60, 1, now);
          },
        },
      },
    },
  ];
};

export default bench;
