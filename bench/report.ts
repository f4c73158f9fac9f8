// Turns measured suites into the JSON report (bench/reports/<timestamp>.json), its chart
// (<timestamp>.svg beside it) and the Markdown summary (bench/reports/latest.md). Speed figures
// are reported, never judged: the runner exits 0 whatever the numbers are.

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { renderChartSvg, type ChartDocument, type ChartGroup } from './chart.js';

export interface TaskFigures {
  name: string;
  opsPerSec: number;
  /** Mean, median and p99 of one operation, nanoseconds. */
  meanNs: number;
  p50Ns: number;
  p99Ns: number;
  /** Relative margin of error of the mean, percent. */
  rme: number;
  samples: number;
  /** opsPerSec / ceiling opsPerSec; undefined when the ceiling failed. */
  ratio?: number;
  error?: string;
}

export interface SuiteFigures {
  file: string;
  name: string;
  description?: string;
  ceiling: string;
  tasks: TaskFigures[];
}

export interface BenchReport {
  startedAt: string;
  durationMs: number;
  timeMsPerTask: number;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  suites: SuiteFigures[];
}

export function machineInfo(): BenchReport['machine'] {
  const list = cpus();
  return {
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
  };
}

function fmtOps(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`;
  return n.toFixed(1);
}

function fmtTime(ns: number): string {
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)} ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(2)} µs`;
  return `${ns.toFixed(1)} ns`;
}

export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  const lines = [
    `# Bench report — ${report.startedAt}`,
    '',
    `${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Node ${m.node} (${m.platform}); ${report.timeMsPerTask} ms per task, total ${(report.durationMs / 1000).toFixed(1)} s.`,
    '',
    'Ratio = task ops/s ÷ the suite ceiling ops/s, measured in the same run. Times are per operation.',
    '',
  ];
  for (const suite of report.suites) {
    lines.push(`## ${suite.name}`, '');
    if (suite.description) lines.push(suite.description, '');
    lines.push(`File \`${suite.file}\`, ceiling: **${suite.ceiling}**.`, '');
    lines.push(
      '| task | ops/s | mean | p50 | p99 | ±rme | samples | ratio to ceiling |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
    );
    for (const t of suite.tasks) {
      if (t.error) {
        lines.push(`| ${t.name} | failed: ${t.error.replace(/\|/g, '\\|')} | | | | | | |`);
        continue;
      }
      const ratio = t.ratio === undefined ? 'n/a' : `${t.ratio.toFixed(3)}×`;
      lines.push(
        `| ${t.name}${t.name === suite.ceiling ? ' (ceiling)' : ''} | ${fmtOps(t.opsPerSec)} | ${fmtTime(t.meanNs)} | ${fmtTime(t.p50Ns)} | ${fmtTime(t.p99Ns)} | ${t.rme.toFixed(1)}% | ${t.samples} | ${ratio} |`,
      );
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** Per-operation times in the unit that suits the suite's slowest p99. */
function latencyUnit(suite: SuiteFigures): { unit: string; divisor: number } {
  const worst = Math.max(0, ...suite.tasks.filter((t) => !t.error).map((t) => t.p99Ns));
  if (worst >= 1e6) return { unit: 'ms', divisor: 1e6 };
  if (worst >= 1e3) return { unit: 'µs', divisor: 1e3 };
  return { unit: 'ns', divisor: 1 };
}

/** The chart of a bench report: one group per suite, every task next to the suite's ceiling. */
export function benchChartDocument(report: BenchReport): ChartDocument {
  const m = report.machine;
  const groups = report.suites.map((suite): ChartGroup => {
    const { unit, divisor } = latencyUnit(suite);
    const measured = suite.tasks.filter((t) => !t.error);
    return {
      title: suite.name,
      subtitle: `${suite.file} · ceiling: ${suite.ceiling || '(none)'}`,
      rateUnit: 'ops/s',
      latencyUnit: unit,
      latencyPer: 'operation',
      log: true,
      rows: measured.map((t) => ({
        label: t.name,
        ceiling: t.name === suite.ceiling,
        rate: t.opsPerSec,
        ...(t.ratio === undefined ? {} : { ratio: t.ratio }),
        p50: t.p50Ns / divisor,
        p99: t.p99Ns / divisor,
      })),
      notes: suite.tasks.filter((t) => t.error).map((t) => `${t.name} failed: ${t.error}`),
    };
  });
  return {
    title: `Bench report — ${report.startedAt}`,
    subtitle: `${m.cpus} × ${m.cpuModel}, Node ${m.node} (${m.platform}); ratio = task ops/s ÷ the suite ceiling's ops/s, same run`,
    groups,
  };
}

/**
 * Writes `<stamp>.json`, its chart `<stamp>.svg` and `latest.md` into `dir` (created if absent);
 * returns the paths written.
 */
export async function writeBenchReport(
  dir: string,
  report: BenchReport,
): Promise<{ json: string; svg: string; markdown: string }> {
  mkdirSync(dir, { recursive: true });
  const stamp = report.startedAt.replace(/[:.]/g, '-');
  const paths = {
    json: join(dir, `${stamp}.json`),
    svg: join(dir, `${stamp}.svg`),
    markdown: join(dir, 'latest.md'),
  };
  writeFileSync(paths.json, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(paths.svg, await renderChartSvg(benchChartDocument(report)));
  writeFileSync(paths.markdown, renderMarkdown(report));
  return paths;
}
