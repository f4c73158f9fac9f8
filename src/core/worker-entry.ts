// Where a worker entry lives: `workers/<name>.js` next to the compiled code in dist/, or the
// `.ts` source started through workers/tsx-entry.mjs when running from source under tsx.

import { Worker, type WorkerOptions } from 'node:worker_threads';

const fromSource = import.meta.url.endsWith('.ts');

export function startWorker(
  name: string,
  options: WorkerOptions & { workerData?: Record<string, unknown> },
): Worker {
  const entry = new URL(`../../workers/${name}${fromSource ? '.ts' : '.js'}`, import.meta.url);
  if (!fromSource) return new Worker(entry, options);
  return new Worker(new URL('../../workers/tsx-entry.mjs', import.meta.url), {
    ...options,
    workerData: { ...options.workerData, tsxEntry: entry.href },
  });
}
