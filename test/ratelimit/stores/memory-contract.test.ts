// The store contract on the embedded SharedArrayBuffer table (the reference every shared store matches).
import { createMemoryStoreBuffer, MemoryCounterStore } from '../../../src/ratelimit/store/memory.js';
import { storeContract } from './contract.js';

storeContract(
  'memory',
  async (algorithm) => ({
    store: new MemoryCounterStore(createMemoryStoreBuffer(4096), algorithm),
    close: async () => undefined,
  }),
  { exact: true },
);
