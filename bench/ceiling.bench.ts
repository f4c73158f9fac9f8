// The reference suite other benches imitate: a ceiling measured in the same run and the real
// work compared with it. Here the ceiling is one raw Atomics.add on a SharedArrayBuffer — the
// least a shared counter update can cost — and the tasks show what a plain (unshared) counter
// saves and what the clock and a fixed-window check add on top.

import type { BenchFile } from './types.js';

const OPS = 1024; // operations per call, so the timer's own cost (~50 ns) does not swamp ~5 ns ops

const bench: BenchFile = () => {
  const shared = new Int32Array(new SharedArrayBuffer(64 * 4));
  const plain = new Int32Array(64);
  let sink = 0;
  // [window start (s), count] per key, as a fixed-window limiter keeps it.
  const windows = new Int32Array(new SharedArrayBuffer(2 * 64 * 4));
  const limit = 1 << 30;

  return [
    {
      name: 'shared counter increment',
      description:
        'Atomics.add on a SharedArrayBuffer (ceiling) vs a plain typed-array counter and fixed-window decisions built on it.',
      ceiling: 'Atomics.add Int32',
      tasks: {
        'Atomics.add Int32': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) Atomics.add(shared, i & 63, 1);
          },
        },
        'plain Int32Array ++ (not shared-safe)': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) plain[i & 63]!++;
          },
        },
        'fixed window, clock read once per call': {
          opsPerCall: OPS,
          fn: () => {
            const now = (Date.now() / 1000) | 0;
            for (let i = 0; i < OPS; i++) {
              const slot = (i & 63) * 2;
              const start = Atomics.load(windows, slot);
              if (start !== now) {
                // First hit of a new window: whoever wins the swap resets the count.
                if (Atomics.compareExchange(windows, slot, start, now) === start)
                  Atomics.store(windows, slot + 1, 0);
              }
              if (Atomics.add(windows, slot + 1, 1) >= limit) sink++;
            }
          },
        },
        'fixed window, Date.now() per decision': {
          opsPerCall: OPS,
          fn: () => {
            for (let i = 0; i < OPS; i++) {
              const now = (Date.now() / 1000) | 0;
              const slot = (i & 63) * 2;
              const start = Atomics.load(windows, slot);
              if (start !== now && Atomics.compareExchange(windows, slot, start, now) === start)
                Atomics.store(windows, slot + 1, 0);
              if (Atomics.add(windows, slot + 1, 1) >= limit) sink++;
            }
          },
        },
      },
      teardown: () => {
        // Keeps the work observable so the optimiser cannot drop it.
        if (sink < 0) console.log(sink);
      },
    },
  ];
};

export default bench;
