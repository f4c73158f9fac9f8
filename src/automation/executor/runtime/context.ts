// What an automation's code sees while it runs inside a pool worker: its input, the input
// files, a place to write output files, a cancellation signal and a usage meter. Every
// observable effect is reported to the main thread as it happens.

import { mkdirSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, statfs, writeFile } from 'node:fs/promises';
import { dirname, join, normalize, sep } from 'node:path';
import {
  KEPT_FILE_BYTES,
  KEPT_RUN_BYTES,
  type InputFileRef,
  type OutputFileReport,
  type RunReport,
  type RunTask,
  type UsageDelta,
  type WorkerMessage,
} from '../protocol.js';

const utf8 = new TextEncoder();

/** Where a run's reports go: the thread's channel to the main thread. */
export interface ReportPort {
  postMessage(report: RunReport): void;
}

export class Reporter {
  constructor(
    private readonly port: ReportPort,
    private readonly runId: string,
  ) {}

  send(msg: WorkerMessage): void {
    try {
      this.port.postMessage({ runId: this.runId, msg });
    } catch {
      // Values that cannot be cloned (functions, class instances with handles) are reported
      // as their JSON form rather than failing the run.
      this.port.postMessage({ runId: this.runId, msg: JSON.parse(JSON.stringify(msg)) as WorkerMessage });
    }
  }

  event(type: string, message?: string, metadata?: Record<string, unknown>): void {
    const msg: WorkerMessage = { t: 'event', type, at: new Date().toISOString() };
    if (message !== undefined) msg.message = message;
    if (metadata !== undefined) msg.metadata = metadata;
    this.send(msg);
  }

  trace(entry: Record<string, unknown>): void {
    this.send({ t: 'trace', entry });
  }
}

/** Output and input names are relative paths; anything escaping the run's folder is refused. */
export function safeRelative(name: string): string {
  const clean = normalize(name).replace(/^([/\\])+/, '');
  if (
    clean === '' ||
    clean === '.' ||
    clean.startsWith('..' + sep) ||
    clean === '..' ||
    clean.includes('\0')
  ) {
    throw new Error(`invalid file name ${JSON.stringify(name)}`);
  }
  return clean;
}

export interface RunFiles {
  readonly input: readonly InputFileRef[];
  read(name: string): Promise<Buffer>;
  write(name: string, data: string | Uint8Array, contentType?: string): Promise<void>;
}

export interface RunContext {
  readonly runId: string;
  readonly input: unknown;
  readonly metadata: Record<string, unknown>;
  readonly signal: AbortSignal;
  readonly files: RunFiles;
  readonly steps: Record<string, unknown>;
  readonly usage: { add(delta: UsageDelta): void };
  log(message: string, metadata?: Record<string, unknown>): void;
  /** A sleep that ends early (rejecting) when the run is cancelled. */
  sleep(ms: number): Promise<void>;
  /** Throws when cancellation was requested; call it between units of work. */
  throwIfCancelled(): void;
}

export function guessContentType(name: string): string {
  const ext = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  const types: Record<string, string> = {
    txt: 'text/plain',
    md: 'text/markdown',
    json: 'application/json',
    csv: 'text/csv',
    html: 'text/html',
    pdf: 'application/pdf',
    png: 'image/png',
    jpg: 'image/jpeg',
    jpeg: 'image/jpeg',
  };
  return types[ext] ?? 'application/octet-stream';
}

/**
 * Up to this size an output file is written with blocking calls. The worker thread runs this run
 * only, so blocking it briefly costs nothing, while each asynchronous call (make the folder,
 * check the free space, write) is a round trip to libuv's thread pool, which the whole process
 * shares (https://nodejs.org/en/learn/asynchronous-work/dont-block-the-event-loop).
 */
const INLINE_WRITE_BYTES = 256 * 1024;

/**
 * Refuses an output write that would leave less than the reserve free: the service's LMDB stores
 * share the disk and must never find it full (src/core/disk/reserve.ts). The run fails with this.
 */
async function keepReserve(task: RunTask, target: string, size: number): Promise<void> {
  if (task.diskReserveBytes > 0) checkReserve(task, target, size, await statfs(dirname(target)));
}

/** keepReserve with blocking calls (see writeInline). */
function keepReserveSync(task: RunTask, target: string, size: number): void {
  if (task.diskReserveBytes > 0) checkReserve(task, target, size, statfsSync(dirname(target)));
}

function checkReserve(
  task: RunTask,
  target: string,
  size: number,
  s: { bavail: number; bsize: number },
): void {
  const free = s.bavail * s.bsize;
  if (free - size < task.diskReserveBytes) {
    throw new Error(
      `insufficient storage: output file ${JSON.stringify(target.slice(task.outputDir.length + 1))} ` +
        `(${size} bytes) not written: ${free} bytes free, SLUICE_DISK_RESERVE keeps ${task.diskReserveBytes} free`,
    );
  }
}

export function createContext(
  task: RunTask,
  reporter: Reporter,
  signal: AbortSignal,
  currentStep: () => string | undefined,
): RunContext {
  const steps: Record<string, unknown> = {};
  /** Output files this run wrote to its folder, by name (a later kept write removes the file). */
  const onDisk = new Set<string>();
  /** Bytes of this run's output files kept off the disk so far (KEPT_RUN_BYTES). */
  let keptBytes = 0;
  const files: RunFiles = {
    input: task.files,
    async read(name) {
      const ref = task.files.find((f) => f.name === name || f.field === name);
      if (!ref) throw new Error(`no input file ${JSON.stringify(name)}`);
      return readFile(ref.path);
    },
    async write(name, data, contentType) {
      const rel = safeRelative(name);
      const target = join(task.outputDir, rel);
      const size = typeof data === 'string' ? Buffer.byteLength(data) : data.byteLength;
      const file: OutputFileReport = {
        name: rel.split(sep).join('/'),
        size,
        contentType: contentType ?? guessContentType(rel),
      };
      const step = currentStep();
      if (step !== undefined) file.stepName = step;
      if (size <= KEPT_FILE_BYTES && keptBytes + size <= KEPT_RUN_BYTES) {
        // Kept off the disk (KEPT_FILE_BYTES): a copy of its own goes with the report, so the
        // caller may reuse its buffer. A version this run wrote to its folder before goes away.
        keptBytes += size;
        file.content = typeof data === 'string' ? utf8.encode(data) : new Uint8Array(data);
        if (onDisk.delete(file.name)) rmSync(target, { force: true });
        reporter.send({ t: 'file', file });
        return;
      }
      const inline = size <= INLINE_WRITE_BYTES;
      if (inline) {
        mkdirSync(dirname(target), { recursive: true });
        keepReserveSync(task, target, size);
      } else {
        await mkdir(dirname(target), { recursive: true });
        await keepReserve(task, target, size);
      }
      try {
        if (inline) writeFileSync(target, data);
        else await writeFile(target, data);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ENOSPC' || code === 'EDQUOT') throw new Error(`insufficient storage: ${String(err)}`);
        throw err;
      }
      onDisk.add(file.name);
      reporter.send({ t: 'file', file });
    },
  };
  const cancelledError = () => {
    const err = new Error(`cancelled: ${String(signal.reason ?? 'requested')}`);
    err.name = 'AbortError';
    return err;
  };
  return {
    runId: task.runId,
    input: task.input,
    metadata: task.metadata,
    signal,
    files,
    steps,
    usage: { add: (delta) => reporter.send({ t: 'usage', delta }) },
    log: (message, metadata) => reporter.event('log', message, metadata),
    sleep(ms) {
      return new Promise<void>((resolve, reject) => {
        if (signal.aborted) return reject(cancelledError());
        const timer = setTimeout(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        }, ms);
        const onAbort = () => {
          clearTimeout(timer);
          reject(cancelledError());
        };
        signal.addEventListener('abort', onAbort, { once: true });
      });
    },
    throwIfCancelled() {
      if (signal.aborted) throw cancelledError();
    },
  };
}
