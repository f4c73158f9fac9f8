// The worker pool for custom-script evaluators. Memory caps are per worker (resourceLimits),
// so there is one piscina pool per memory limit (rounded up to a power of two: at most seven
// pools from 16 to 1024 MiB), created on first use; threads idle out, so an unused limit
// costs nothing.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { JsonSchema } from '../schemas/compiler.js';
import { CUSTOM_SCRIPTS_DISABLED } from './types.js';
import type {
  RegexTask,
  RegexTaskResult,
  SchemaTask,
  SchemaTaskResult,
  ScriptTask,
  ScriptTaskResult,
} from './script-runner.js';

type Task = ScriptTask | RegexTask | SchemaTask;
type TaskResult = ScriptTaskResult | RegexTaskResult | SchemaTaskResult;

export interface ScriptPoolOptions {
  /** Threads per memory limit. Default 1: scripts are rare next to the runs they score. */
  readonly maxThreads?: number;
  /** Memory cap for scripts that give none (MiB of V8 old generation). */
  readonly defaultMemoryLimitMb?: number;
  /** A running task is killed this long after its own timeout if the vm timeout did not fire. */
  readonly graceMs?: number;
  readonly idleTimeoutMs?: number;
  /** Time limit of a user regex or of a validation against a schema with patterns. */
  readonly patternTimeoutMs?: number;
  /** false: custom scripts are refused (node:vm in a worker is not a security boundary). */
  readonly customScripts?: boolean;
}

/** Heap cap of the threads that validate schemas: a run input may be megabytes of JSON. */
const SCHEMA_MEMORY_MB = 256;

export interface ScriptRunRequest {
  readonly script: string;
  readonly data: string;
  readonly timeoutMs: number;
  readonly memoryLimitMb?: number;
  readonly signal?: AbortSignal;
}

interface Failure {
  readonly ok: false;
  readonly kind: 'timeout' | 'memory' | 'threw' | 'compile' | 'crashed' | 'aborted' | 'disabled';
  readonly message: string;
}

export type ScriptRunOutcome = { readonly ok: true; readonly json: string } | Failure;
export type RegexRunOutcome =
  { readonly ok: true; readonly match: null | { readonly text: string; readonly index: number } } | Failure;
export type SchemaRunOutcome = Extract<SchemaTaskResult, { ok: true }> | Failure;

/** The worker entry, as .ts when running from sources (tsx) and .js once compiled. */
function workerFile(): string {
  const here = fileURLToPath(import.meta.url);
  const ext = here.endsWith('.ts') ? '.ts' : '.js';
  const file = fileURLToPath(new URL(`../../../workers/automation-eval-script${ext}`, import.meta.url));
  if (!existsSync(file)) throw new Error(`evaluator script worker not found at ${file}`);
  return file;
}

function codeOf(err: unknown): string | undefined {
  if (err === null || typeof err !== 'object') return undefined;
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

export class ScriptPool {
  readonly #pools = new Map<number, Piscina<Task, TaskResult>>();
  readonly #file = workerFile();
  readonly #maxThreads: number;
  readonly #graceMs: number;
  readonly #idleTimeoutMs: number;
  readonly defaultMemoryLimitMb: number;
  readonly patternTimeoutMs: number;
  readonly customScripts: boolean;
  #closed = false;
  #running = 0;
  #lastPoolError: string | null = null;

  constructor(opts: ScriptPoolOptions = {}) {
    this.#maxThreads = opts.maxThreads ?? 1;
    this.defaultMemoryLimitMb = opts.defaultMemoryLimitMb ?? 64;
    this.#graceMs = opts.graceMs ?? 2000;
    this.#idleTimeoutMs = opts.idleTimeoutMs ?? 30_000;
    this.patternTimeoutMs = opts.patternTimeoutMs ?? 1000;
    this.customScripts = opts.customScripts ?? true;
  }

  /** Limits are rounded up to a power of two so configs cannot make a pool per MiB value. */
  static effectiveMemoryLimitMb(requested: number): number {
    return 2 ** Math.ceil(Math.log2(Math.max(16, requested)));
  }

  #pool(memoryLimitMb: number): Piscina<Task, TaskResult> {
    let pool = this.#pools.get(memoryLimitMb);
    if (pool === undefined) {
      pool = new Piscina<Task, TaskResult>({
        filename: this.#file,
        name: 'default',
        minThreads: 0,
        maxThreads: this.#maxThreads,
        idleTimeout: this.#idleTimeoutMs,
        // Scripts see none of the server's environment even if they escaped the vm context.
        env: {},
        resourceLimits: {
          maxOldGenerationSizeMb: memoryLimitMb,
          maxYoungGenerationSizeMb: Math.max(4, Math.min(32, Math.floor(memoryLimitMb / 4))),
          stackSizeMb: 4,
        },
      });
      // A worker that dies outside a task (e.g. at start-up under a tiny cap) is reported on the
      // pool; without a listener that event would take the whole process down.
      pool.on('error', (err: unknown) => {
        this.#lastPoolError = err instanceof Error ? err.message : String(err);
      });
      this.#pools.set(memoryLimitMb, pool);
    }
    return pool;
  }

  /** Runs a custom script; every failure comes back as an outcome, never as a rejection. */
  async run(req: ScriptRunRequest): Promise<ScriptRunOutcome> {
    if (!this.customScripts) return { ok: false, kind: 'disabled', message: CUSTOM_SCRIPTS_DISABLED };
    const task: ScriptTask = { script: req.script, data: req.data, timeoutMs: req.timeoutMs };
    return this.#dispatch<ScriptTaskResult>(
      task,
      req.timeoutMs,
      req.memoryLimitMb ?? this.defaultMemoryLimitMb,
      req.signal,
    );
  }

  /** Runs `new RegExp(pattern, flags).exec(text)` under a time limit, off this thread. */
  async execRegex(req: {
    pattern: string;
    flags: string;
    text: string;
    timeoutMs?: number;
    signal?: AbortSignal;
  }): Promise<RegexRunOutcome> {
    const timeoutMs = req.timeoutMs ?? this.patternTimeoutMs;
    const task: RegexTask = {
      kind: 'regex',
      pattern: req.pattern,
      flags: req.flags,
      text: req.text,
      timeoutMs,
    };
    return this.#dispatch<RegexTaskResult>(task, timeoutMs, this.defaultMemoryLimitMb, req.signal);
  }

  /** Validates `value` against `schema` (ajv) under a time limit, off this thread. */
  async validateSchema(req: {
    schema: JsonSchema;
    value: unknown;
    timeoutMs?: number;
    signal?: AbortSignal;
  }): Promise<SchemaRunOutcome> {
    const timeoutMs = req.timeoutMs ?? this.patternTimeoutMs;
    const task: SchemaTask = { kind: 'schema', schema: req.schema, value: req.value, timeoutMs };
    const memoryMb = Math.max(this.defaultMemoryLimitMb, SCHEMA_MEMORY_MB);
    return this.#dispatch<SchemaTaskResult>(task, timeoutMs, memoryMb, req.signal);
  }

  /** R is what the worker answers for this kind of task (runPoolTask dispatches on `kind`). */
  async #dispatch<R extends TaskResult>(
    base: Task,
    timeoutMs: number,
    memoryLimitMb: number,
    signal: AbortSignal | undefined,
  ): Promise<R | Failure> {
    const what =
      base.kind === 'regex'
        ? 'the regular expression'
        : base.kind === 'schema'
          ? 'the schema validation'
          : 'the script';
    if (this.#closed) return { ok: false, kind: 'crashed', message: 'the script pool is closed' };
    if (signal?.aborted) return { ok: false, kind: 'aborted', message: 'scoring was cancelled' };
    const pool = this.#pool(ScriptPool.effectiveMemoryLimitMb(memoryLimitMb));
    const { port1, port2 } = new MessageChannel();
    const watchdog = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    let started = false;
    let settled = false;
    // The backstop starts when the task starts; queueing behind other scripts is not its time.
    port1.once('message', () => {
      if (settled) return;
      started = true;
      this.#running++;
      timer = setTimeout(() => {
        timedOut = true;
        watchdog.abort();
      }, timeoutMs + this.#graceMs);
    });
    const onCallerAbort = (): void => watchdog.abort();
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    try {
      return (await pool.run(
        { ...base, port: port2 },
        { transferList: [port2], signal: watchdog.signal },
      )) as R;
    } catch (err) {
      if (timedOut)
        return {
          ok: false,
          kind: 'timeout',
          message: `${what} ran longer than ${timeoutMs} ms and was stopped`,
        };
      if (watchdog.signal.aborted) return { ok: false, kind: 'aborted', message: 'scoring was cancelled' };
      if (codeOf(err) === 'ERR_WORKER_OUT_OF_MEMORY') {
        return {
          ok: false,
          kind: 'memory',
          message: `${what} exceeded its memory limit of ${ScriptPool.effectiveMemoryLimitMb(memoryLimitMb)} MiB and was stopped`,
        };
      }
      const message = err instanceof Error ? err.message : String(err);
      return { ok: false, kind: 'crashed', message: `the worker running ${what} failed: ${message}` };
    } finally {
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      if (started) this.#running--;
      signal?.removeEventListener('abort', onCallerAbort);
      port1.close();
    }
  }

  /** Tasks executing in a worker right now (not counting queued ones). */
  get running(): number {
    return this.#running;
  }

  /** The last failure of a worker outside any task, for health reporting. */
  get lastPoolError(): string | null {
    return this.#lastPoolError;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }
}
