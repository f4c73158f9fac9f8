// `npm run bench [-- filter]` — runs every bench/**/*.bench.ts with tinybench and writes
// bench/reports/<timestamp>.json, its chart <timestamp>.svg and bench/reports/latest.md.
//
// Contract for a bench file (types in bench/types.ts):
//   export default (async) function (ctx: BenchContext): BenchSuite[]
//   BenchSuite = { name, description?, ceiling: '<task name>', tasks: { name: fn | { fn, opsPerCall } },
//                  setup?, teardown? }
// - Each suite names one of its tasks as its ceiling: the fastest the work could possibly be on
//   this machine (a raw primitive, an empty handler). Every task is reported as a ratio to it,
//   measured in the same run, so figures from different machines compare as ratios.
// - Operations much shorter than a microsecond must loop inside `fn` and declare opsPerCall;
//   the runner divides times and multiplies ops/s by it.
// - Tasks may be async; resources are opened in setup and released in teardown.
// - filter: a case-insensitive substring of the file path or the suite name.
// Settings: BENCH_REPORT_DIR (default bench/reports), BENCH_TIME_MS (measuring time per task, default 500), BENCH_WARMUP_MS (default
// time/5, at most 200). The runner never fails because of speed; it exits 1 when a bench file
// cannot be loaded, a suite or task throws or hangs, or nothing matched — after writing the report.

import { readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Bench } from 'tinybench';
import {
  machineInfo,
  renderMarkdown,
  writeBenchReport,
  type BenchReport,
  type SuiteFigures,
  type TaskFigures,
} from './report.js';
import type { BenchContext, BenchFile, BenchSuite, BenchTask } from './types.js';

const benchDir = dirname(fileURLToPath(import.meta.url));
const root = join(benchDir, '..');

function intFromEnv(name: string, def: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(
      `bench: ${name} must be a positive integer of milliseconds, got ${JSON.stringify(raw)}\n`,
    );
    process.exit(2);
  }
  return n;
}

function findBenchFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'reports' || entry.name === 'node_modules') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findBenchFiles(path));
    else if (entry.name.endsWith('.bench.ts')) out.push(path);
  }
  return out.sort();
}

function normalise(task: BenchTask | (() => unknown)): Required<BenchTask> {
  return typeof task === 'function'
    ? { fn: task, opsPerCall: 1 }
    : { fn: task.fn, opsPerCall: task.opsPerCall ?? 1 };
}

/** Generous bound per suite: tinybench stops on time, but a task awaiting forever would not. */
function suiteTimeoutMs(suite: BenchSuite, ctx: BenchContext): number {
  return 60_000 + Object.keys(suite.tasks).length * (ctx.timeMs + ctx.warmupMs) * 20;
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

async function runSuite(file: string, suite: BenchSuite, ctx: BenchContext): Promise<SuiteFigures> {
  if (!(suite.ceiling in suite.tasks))
    throw new Error(`suite "${suite.name}" names ceiling "${suite.ceiling}" but has no such task`);
  const tasks = Object.entries(suite.tasks).map(([name, t]) => [name, normalise(t)] as const);
  const bench = new Bench({
    time: ctx.timeMs,
    warmupTime: ctx.warmupMs,
    iterations: 16,
    warmupIterations: 4,
  });
  for (const [name, t] of tasks) bench.add(name, t.fn);
  await suite.setup?.();
  try {
    await bench.run();
  } finally {
    await suite.teardown?.();
  }
  const figures: TaskFigures[] = tasks.map(([name, t]) => {
    const result = bench.getTask(name)?.result;
    if (!result || (result.state !== 'completed' && result.state !== 'aborted-with-statistics')) {
      const error =
        result && result.state === 'errored' ? result.error.message : `task ${result?.state ?? 'missing'}`;
      return { name, opsPerSec: 0, meanNs: 0, p50Ns: 0, p99Ns: 0, rme: 0, samples: 0, error };
    }
    return {
      name,
      // From the mean time rather than tinybench's mean of per-sample rates, so ops/s and mean agree.
      opsPerSec: result.latency.mean > 0 ? (1e3 / result.latency.mean) * t.opsPerCall : 0,
      meanNs: (result.latency.mean * 1e6) / t.opsPerCall,
      p50Ns: (result.latency.p50 * 1e6) / t.opsPerCall,
      p99Ns: (result.latency.p99 * 1e6) / t.opsPerCall,
      rme: result.latency.rme,
      samples: result.latency.samplesCount,
    };
  });
  const ceiling = figures.find((f) => f.name === suite.ceiling);
  for (const f of figures) {
    if (ceiling && !ceiling.error && ceiling.opsPerSec > 0 && !f.error)
      f.ratio = f.opsPerSec / ceiling.opsPerSec;
  }
  const out: SuiteFigures = {
    file: relative(root, file),
    name: suite.name,
    ceiling: suite.ceiling,
    tasks: figures,
  };
  if (suite.description) out.description = suite.description;
  return out;
}

async function main(): Promise<void> {
  const filter = process.argv
    .slice(2)
    .find((a) => !a.startsWith('-'))
    ?.toLowerCase();
  const timeMs = intFromEnv('BENCH_TIME_MS', 500);
  const ctx: BenchContext = {
    timeMs,
    warmupMs: intFromEnv('BENCH_WARMUP_MS', Math.min(200, Math.max(1, Math.round(timeMs / 5)))),
  };
  const started = Date.now();
  const report: BenchReport = {
    startedAt: new Date(started).toISOString(),
    durationMs: 0,
    timeMsPerTask: timeMs,
    machine: machineInfo(),
    suites: [],
  };
  const files = findBenchFiles(benchDir);
  let matched = 0;
  const failures: string[] = [];
  const failedSuite = (file: string, name: string, ceiling: string, message: string): SuiteFigures => ({
    file,
    name,
    ceiling,
    tasks: [
      { name: '(suite)', opsPerSec: 0, meanNs: 0, p50Ns: 0, p99Ns: 0, rme: 0, samples: 0, error: message },
    ],
  });
  for (const file of files) {
    const rel = relative(root, file);
    const fileMatches = !filter || rel.toLowerCase().includes(filter);
    let suites: BenchSuite[];
    try {
      const mod = (await import(pathToFileURL(file).href)) as { default?: BenchFile };
      if (typeof mod.default !== 'function') throw new Error('no default-exported suite function');
      suites = await mod.default(ctx);
    } catch (err) {
      // A broken file is reported and fails the run, but the other files still run.
      if (!fileMatches) continue;
      matched++;
      failures.push(`${rel}: ${(err as Error).message}`);
      report.suites.push(failedSuite(rel, '(file)', '', `cannot load: ${(err as Error).message}`));
      continue;
    }
    for (const suite of suites) {
      if (!fileMatches && !suite.name.toLowerCase().includes(filter ?? '')) continue;
      matched++;
      process.stderr.write(`bench: ${rel} — ${suite.name}\n`);
      try {
        const figures = await withTimeout(runSuite(file, suite, ctx), suiteTimeoutMs(suite, ctx), suite.name);
        for (const t of figures.tasks)
          if (t.error) failures.push(`${rel} / ${suite.name} / ${t.name}: ${t.error}`);
        report.suites.push(figures);
      } catch (err) {
        failures.push(`${rel} / ${suite.name}: ${(err as Error).message}`);
        report.suites.push(failedSuite(rel, suite.name, suite.ceiling, (err as Error).message));
      }
    }
  }
  if (matched === 0) {
    process.stderr.write(`bench: no suite matched ${filter ? JSON.stringify(filter) : '(no bench files)'}\n`);
    process.exit(1);
  }
  report.durationMs = Date.now() - started;
  const reportsDir = process.env['BENCH_REPORT_DIR'] || join(benchDir, 'reports');
  const written = await writeBenchReport(reportsDir, report);
  process.stdout.write(renderMarkdown(report));
  process.stderr.write(
    `bench: wrote ${[written.json, written.svg, written.markdown].map((p) => relative(root, p)).join(', ')}\n`,
  );
  for (const f of failures) process.stderr.write(`bench: FAILED ${f}\n`);
  // Explicit exit: a suite that timed out may still hold handles open.
  process.exit(failures.length > 0 ? 1 : 0);
}

await main();
