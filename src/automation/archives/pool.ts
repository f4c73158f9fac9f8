// A small piscina pool for archive work, so reading, inflating and writing ZIPs never runs on the
// service's event loop. Tasks exchange file paths, not archive bytes: the upload is already on
// disk, the export is written to a temp file and streamed from there.

import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import type { ParsedExample } from '../datasets/archive.js';
import { toServiceError, type ArchiveLimits } from './limits.js';
import type { ArchiveTask, ArchiveTaskResult } from './tasks.js';
import type { BuildEntry } from './zip-writer.js';

function workerFile(): string {
  // Under tsx the sources are .ts; in the build they are .js next to each other in dist/.
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`../../../workers/automation-archive.${ext}`, import.meta.url));
}

type Distribute<T> = T extends unknown ? Omit<T, 'gate'> : never;

export class ArchivePool {
  readonly #piscina: Piscina<ArchiveTask, ArchiveTaskResult>;
  readonly #gate = new SharedArrayBuffer(8);

  constructor(options: { threads: number; idleTimeoutMs?: number; onError?: (err: unknown) => void }) {
    this.#piscina = new Piscina<ArchiveTask, ArchiveTaskResult>({
      filename: workerFile(),
      minThreads: 0,
      maxThreads: options.threads,
      idleTimeout: options.idleTimeoutMs ?? 30_000,
    });
    // A worker that dies outside a task is reported on the pool; unheard, that event would end
    // the process. A task's own failure still rejects its run() (a 500 for that request).
    this.#piscina.on('error', (err: unknown) => options.onError?.(err));
  }

  async #run(task: Distribute<ArchiveTask>): Promise<ArchiveTaskResult & { ok: true }> {
    const result = await this.#piscina.run({ ...task, gate: this.#gate });
    if (!result.ok) throw toServiceError(result);
    return result;
  }

  /** Reads, checks and extracts a dataset archive into `staging` (created by the task). */
  async importDataset(archive: string, staging: string, limits: ArchiveLimits): Promise<ParsedExample[]> {
    const result = await this.#run({ kind: 'import-dataset', archive, staging, limits });
    return result.kind === 'import-dataset' ? result.examples : [];
  }

  /** Writes a ZIP of `entries` to `out`; returns its size. */
  async build(out: string, entries: BuildEntry[], mtime: number, limits: ArchiveLimits): Promise<number> {
    const result = await this.#run({ kind: 'build', out, entries, mtime, limits });
    return result.kind === 'build' ? result.size : 0;
  }

  /**
   * Holds every task at its start, in its worker, until the returned function is called. For
   * tests that must observe the service while archive work is in progress.
   */
  hold(): () => void {
    const g = new Int32Array(this.#gate);
    Atomics.store(g, 0, 1);
    return () => {
      Atomics.store(g, 0, 0);
      Atomics.notify(g, 0);
    };
  }

  /** Tasks waiting at the gate of hold(). */
  get held(): number {
    return Atomics.load(new Int32Array(this.#gate), 1);
  }

  async close(): Promise<void> {
    const g = new Int32Array(this.#gate);
    Atomics.store(g, 0, 0);
    Atomics.notify(g, 0);
    await this.#piscina.destroy();
  }
}
