// The contract between bench/run.ts and every bench/**/*.bench.ts file. Kept in its own
// module so bench files import only types (no side effects from the runner).

export interface BenchContext {
  /** Measuring time per task in ms (BENCH_TIME_MS). */
  readonly timeMs: number;
  /** Warm-up time per task in ms. */
  readonly warmupMs: number;
}

export interface BenchTask {
  /** One call; for operations far below a microsecond, loop inside and set opsPerCall. */
  fn: () => unknown;
  /** How many operations one call performs (default 1); ops/s and per-op times use it. */
  opsPerCall?: number;
}

export interface BenchSuite {
  name: string;
  /** What the suite shows, one line for the report. */
  description?: string;
  /** Name of the task every other task is compared with (the fastest thing the work could be). */
  ceiling: string;
  tasks: Record<string, BenchTask | (() => unknown)>;
  /** Runs before the suite's tasks / after them (open and close resources here). */
  setup?: () => unknown;
  teardown?: () => unknown;
}

/** The default export of a *.bench.ts file. */
export type BenchFile = (ctx: BenchContext) => BenchSuite[] | Promise<BenchSuite[]>;
