// The load-test report: its shape, the ratio rows, and the writer that puts
// `<scenario>-<timestamp>.json` and its chart `<scenario>-<timestamp>.svg` side by side.

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderChartSvg, type ChartDocument, type ChartRow } from '../bench/chart.js';
import type { ClientName, LoadResult } from './clients/types.js';
import type { CeilingName } from './types.js';

export interface TargetReport {
  label: string;
  kind: 'ceiling' | 'scenario';
  ceiling?: CeilingName;
  load: string;
  results: LoadResult[];
  error?: string;
  skipped?: string;
  /** Server process id, so callers can check nothing outlived the run. */
  pid?: number;
}

export interface RatioRow {
  scenario: string;
  ceiling: string;
  client: ClientName;
  ratio: number;
}

export interface LoadtestReport {
  scenario: string;
  startedAt: string;
  machine: { cpus: number; cpuModel: string; node: string };
  /** The command-line options as parsed. */
  args: object;
  clientsAvailable: { wrk: boolean; h2load: boolean };
  targets: TargetReport[];
  ratios: RatioRow[];
}

/** Scenario req/s ÷ ceiling req/s, per client that measured both. */
export function ratioRows(targets: TargetReport[]): RatioRow[] {
  const rows: RatioRow[] = [];
  const scenario = targets.find((t) => t.kind === 'scenario');
  const ceiling = targets.find((t) => t.kind === 'ceiling');
  if (!scenario || !ceiling) return rows;
  for (const r of scenario.results) {
    const c = ceiling.results.find((x) => x.client === r.client);
    if (c && c.rps > 0)
      rows.push({ scenario: scenario.label, ceiling: ceiling.label, client: r.client, ratio: r.rps / c.rps });
  }
  return rows;
}

/** The chart of a load-test report: every target's req/s per client, the scenario's ratio labelled. */
export function loadtestChartDocument(report: LoadtestReport): ChartDocument {
  const rows: ChartRow[] = [];
  for (const t of report.targets) {
    for (const r of t.results) {
      const ratio =
        t.kind === 'ceiling'
          ? undefined
          : report.ratios.find((x) => x.scenario === t.label && x.client === r.client)?.ratio;
      rows.push({
        label: t.label,
        series: r.client,
        ceiling: t.kind === 'ceiling',
        rate: r.rps,
        ...(ratio === undefined ? {} : { ratio }),
        ...(r.p50Ms === undefined ? {} : { p50: r.p50Ms }),
        ...(r.p99Ms === undefined ? {} : { p99: r.p99Ms }),
      });
    }
  }
  const notes = report.targets.flatMap((t) => [
    ...(t.error ? [`${t.label} failed: ${t.error.split('\n')[0]}`] : []),
    ...(t.skipped ? [`${t.label} skipped: ${t.skipped}`] : []),
  ]);
  const ceilings = report.targets.filter((t) => t.kind === 'ceiling').map((t) => t.label);
  const m = report.machine;
  return {
    title: `Load test ${report.scenario} — ${report.startedAt}`,
    subtitle: `${m.cpus} × ${m.cpuModel}, Node ${m.node}; ratio = scenario req/s ÷ ceiling req/s, same client and settings, same run`,
    groups: [
      {
        title: report.scenario,
        subtitle: `ceiling: ${ceilings.join(', ') || '(not measured)'}`,
        rateUnit: 'req/s',
        latencyUnit: 'ms',
        latencyPer: 'request',
        log: false,
        rows,
        notes,
      },
    ],
  };
}

/** Writes the JSON report and its SVG chart into `dir` (created if absent); returns both paths. */
export async function writeLoadtestReport(
  dir: string,
  report: LoadtestReport,
): Promise<{ json: string; svg: string }> {
  mkdirSync(dir, { recursive: true });
  const base = join(dir, `${report.scenario}-${report.startedAt.replace(/[:.]/g, '-')}`);
  const paths = { json: `${base}.json`, svg: `${base}.svg` };
  writeFileSync(paths.json, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(paths.svg, await renderChartSvg(loadtestChartDocument(report)));
  return paths;
}
