// `npm run charts` — renders the published figures of docs/benchmarks.md, kept in
// docs/charts/published.json, to docs/charts/<name>.svg with bench/chart.ts.
// `npm run charts -- --check` renders them in memory and exits 1 if a committed SVG differs.
//
// The JSON holds only what the tables show (rates, ceilings); each ratio is computed here as a
// row's rate ÷ the ceiling row of the same group and series. Bad input exits 2 with the reason.

import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderChartSvg, type ChartDocument, type ChartRow } from './chart.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const chartsDir = join(root, 'docs', 'charts');

interface PublishedRow {
  label: string;
  series: string;
  ceiling: boolean;
  rate: number;
}

interface PublishedChart {
  name: string;
  title: string;
  subtitle: string;
  rateUnit: string;
  groups: Array<{ title: string; subtitle: string; rows: PublishedRow[] }>;
}

function fail(message: string): never {
  process.stderr.write(`charts: ${message}\n`);
  process.exit(2);
}

function checkChart(c: PublishedChart, i: number): void {
  const where = `charts[${i}]`;
  if (typeof c.name !== 'string' || !/^[a-z0-9-]+$/.test(c.name))
    fail(`${where}.name must be lower-case letters, digits and dashes`);
  for (const key of ['title', 'subtitle', 'rateUnit'] as const)
    if (typeof c[key] !== 'string') fail(`${where}.${key} must be a string`);
  if (!Array.isArray(c.groups) || c.groups.length === 0) fail(`${where}.groups must be a non-empty array`);
  for (const [j, g] of c.groups.entries()) {
    if (typeof g.title !== 'string' || typeof g.subtitle !== 'string' || !Array.isArray(g.rows))
      fail(`${where}.groups[${j}] needs title, subtitle and rows`);
    for (const [k, r] of g.rows.entries())
      if (
        typeof r.label !== 'string' ||
        typeof r.series !== 'string' ||
        typeof r.ceiling !== 'boolean' ||
        typeof r.rate !== 'number' ||
        !(r.rate > 0)
      )
        fail(`${where}.groups[${j}].rows[${k}] needs label, series, ceiling (boolean) and a positive rate`);
  }
}

function toDocument(c: PublishedChart): ChartDocument {
  return {
    title: c.title,
    subtitle: c.subtitle,
    groups: c.groups.map((g) => ({
      title: g.title,
      subtitle: g.subtitle,
      rateUnit: c.rateUnit,
      latencyUnit: 'ms',
      latencyPer: 'request',
      log: false,
      notes: [],
      rows: g.rows.map((r): ChartRow => {
        const ceiling = g.rows.find((x) => x.ceiling && x.series === r.series);
        return {
          label: r.label,
          series: r.series,
          ceiling: r.ceiling,
          rate: r.rate,
          ...(r.ceiling || !ceiling ? {} : { ratio: r.rate / ceiling.rate }),
        };
      }),
    })),
  };
}

async function main(): Promise<void> {
  const check = process.argv.includes('--check');
  const source = join(chartsDir, 'published.json');
  let charts: PublishedChart[];
  try {
    charts = (JSON.parse(readFileSync(source, 'utf8')) as { charts: PublishedChart[] }).charts;
  } catch (err) {
    fail(`cannot read ${relative(root, source)}: ${(err as Error).message}`);
  }
  if (!Array.isArray(charts)) fail(`${relative(root, source)} has no "charts" array`);
  charts.forEach(checkChart);
  let stale = 0;
  for (const c of charts) {
    const path = join(chartsDir, `${c.name}.svg`);
    const svg = (await renderChartSvg(toDocument(c))) + '\n';
    if (!check) {
      writeFileSync(path, svg);
      process.stdout.write(`charts: wrote ${relative(root, path)}\n`);
      continue;
    }
    let committed = '';
    try {
      committed = readFileSync(path, 'utf8');
    } catch {
      // Missing counts as stale.
    }
    if (committed !== svg) {
      stale++;
      process.stderr.write(`charts: ${relative(root, path)} is not up to date; run npm run charts\n`);
    }
  }
  if (check && stale === 0) process.stdout.write(`charts: ${charts.length} chart(s) up to date\n`);
  process.exit(stale > 0 ? 1 : 0);
}

await main();
