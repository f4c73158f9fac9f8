// Development only (tests, `tsx src/cli.ts`): Node 20 worker threads do not inherit the
// parent's `--import tsx` hooks, so a TypeScript worker entry is started through this file,
// which registers tsx inside the worker and then imports the real entry (workerData.tsxEntry).
// The built code (dist/) never uses it.
import { workerData } from 'node:worker_threads';
import { register } from 'tsx/esm/api';

register();
await import(workerData.tsxEntry);
