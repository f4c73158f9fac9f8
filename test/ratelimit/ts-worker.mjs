// Starts a TypeScript worker entry under tsx: Node 20 workers do not inherit the parent's
// `--import tsx` loader hooks. workerData.entry is the .ts file to run.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';
import { pathToFileURL } from 'node:url';

register();
await import(pathToFileURL(workerData.entry).href);
