// Renders speed figures as one SVG: per group (a bench suite, a load-test run), a bar chart of
// each row's throughput next to its ceiling with the ratio labelled, and a bar chart of its p50
// and p99 latency. The one module that imports vega and vega-lite: the bench and load-test
// report writers turn their reports into ChartGroup values and call renderChartSvg.
//
// The spec is compiled by vega-lite and rendered headless by vega's View.toSVG() (renderer
// 'none': no canvas, no browser, no native build). Text is written as SVG <text> elements, so
// the chart is correct whatever fonts the viewer has; widths of labels are estimated.

import { parse, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

export interface ChartRow {
  /** What was measured: a task name, a load-test target label. */
  label: string;
  /** The client (load tests) that produced the figures; absent for bench tasks. */
  series?: string;
  /** True for the ceiling every other row is compared with. */
  ceiling: boolean;
  /** Operations or requests per second; rows without a positive rate are left out of the throughput bars. */
  rate: number;
  /** rate ÷ the ceiling's rate, when known. */
  ratio?: number;
  /** Latency percentiles in `ChartGroup.latencyUnit`; absent where the client did not report them. */
  p50?: number;
  p99?: number;
}

export interface ChartGroup {
  title: string;
  /** One line under the title (e.g. "ceiling: empty loop"). */
  subtitle: string;
  /** 'ops/s' or 'req/s'. */
  rateUnit: string;
  /** Unit of p50/p99, e.g. 'µs' or 'ms'. */
  latencyUnit: string;
  /** What one latency figure is for: 'operation', 'request'. */
  latencyPer: string;
  /** Logarithmic axes: bench rates span several orders of magnitude within one suite. */
  log: boolean;
  rows: ChartRow[];
  /** Rows that failed or were skipped, shown as text ("name: reason"). */
  notes: string[];
}

export interface ChartDocument {
  title: string;
  subtitle: string;
  groups: ChartGroup[];
}

const WIDTH = 360;
// Every chart has its own rows, bars and colours: no scale is shared between charts.
const INDEPENDENT = { x: 'independent', y: 'independent', yOffset: 'independent', color: 'independent' };
const ROW_HEIGHT = 22;
/** Widest row label, pixels; longer names are cut with an ellipsis. */
const LABEL_LIMIT = 380;

function rowName(r: ChartRow): string {
  return r.ceiling && !/ceiling/i.test(r.label) ? `${r.label} (ceiling)` : r.label;
}

function ratioText(r: ChartRow): string {
  if (r.ceiling) return 'ceiling';
  return r.ratio === undefined ? 'no ratio' : `${r.ratio.toFixed(3)}×`;
}

function fmtRate(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)} G`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)} M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)} k`;
  return n.toFixed(1);
}

/** Three significant digits, no exponent. */
function fmtNumber(n: number): string {
  return n >= 100 ? n.toFixed(0) : n.toPrecision(3);
}

function throughputChart(g: ChartGroup): Record<string, unknown> {
  const values = g.rows
    .filter((r) => Number.isFinite(r.rate) && r.rate > 0)
    .map((r) => ({
      name: rowName(r),
      series: r.series ?? (r.ceiling ? 'ceiling' : 'measured'),
      rate: r.rate,
      label: `${fmtRate(r.rate)} ${g.rateUnit} · ${ratioText(r)}`,
    }));
  const y = { field: 'name', type: 'nominal', sort: null, title: null, axis: { labelLimit: LABEL_LIMIT } };
  const yOffset = { field: 'series', type: 'nominal', sort: null };
  return {
    title: { text: `throughput (${g.rateUnit}) and ratio to the ceiling`, fontSize: 11 },
    width: WIDTH,
    height: { step: ROW_HEIGHT },
    data: { values },
    encoding: { y, yOffset },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          x: {
            field: 'rate',
            type: 'quantitative',
            title: `${g.rateUnit}${g.log ? ' (log scale)' : ''}`,
            scale: g.log ? { type: 'log' } : { zero: true },
            // Unstacked, so a log-scale bar starts at the axis, not at zero.
            stack: null,
            axis: { format: '~s' },
          },
          color: { field: 'series', type: 'nominal', sort: null, title: null, legend: { orient: 'bottom' } },
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 3, fontSize: 10 },
        encoding: { x: { field: 'rate', type: 'quantitative' }, text: { field: 'label' } },
      },
    ],
  };
}

function latencyChart(g: ChartGroup): Record<string, unknown> {
  const values: Array<Record<string, unknown>> = [];
  for (const r of g.rows) {
    for (const stat of ['p50', 'p99'] as const) {
      const v = r[stat];
      if (v === undefined || !Number.isFinite(v) || v <= 0) continue;
      values.push({
        name: rowName(r),
        key: r.series ? `${r.series} ${stat}` : stat,
        stat,
        value: v,
        label: `${fmtNumber(v)} ${g.latencyUnit}`,
      });
    }
  }
  return {
    title: { text: `latency per ${g.latencyPer}, p50 and p99 (${g.latencyUnit})`, fontSize: 11 },
    width: WIDTH,
    height: { step: ROW_HEIGHT / 2 + 2 },
    data: { values },
    encoding: {
      y: { field: 'name', type: 'nominal', sort: null, title: null, axis: { labelLimit: LABEL_LIMIT } },
      yOffset: { field: 'key', type: 'nominal', sort: null },
    },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          x: {
            field: 'value',
            type: 'quantitative',
            title: `${g.latencyUnit}${g.log ? ' (log scale)' : ''}`,
            scale: g.log ? { type: 'log' } : { zero: true },
            // Unstacked, so a log-scale bar starts at the axis, not at zero.
            stack: null,
            axis: { format: ',~r' },
          },
          color: {
            field: 'key',
            type: 'nominal',
            sort: null,
            title: null,
            legend: { orient: 'bottom' },
            scale: { scheme: 'tableau20' },
          },
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 3, fontSize: 9 },
        encoding: { x: { field: 'value', type: 'quantitative' }, text: { field: 'label' } },
      },
    ],
  };
}

function groupSpec(g: ChartGroup): Record<string, unknown> {
  const charts: Array<Record<string, unknown>> = [];
  if (g.rows.some((r) => Number.isFinite(r.rate) && r.rate > 0)) charts.push(throughputChart(g));
  if (g.rows.some((r) => (r.p50 ?? 0) > 0 || (r.p99 ?? 0) > 0)) charts.push(latencyChart(g));
  const subtitle = [g.subtitle, ...g.notes];
  if (charts.length === 0) subtitle.push('no figures to chart');
  // A text-only group still needs one view to carry its title: an empty mark.
  const body =
    charts.length > 0
      ? charts
      : [{ data: { values: [{}] }, mark: { type: 'text' }, width: WIDTH, height: 10 }];
  return {
    title: { text: g.title, subtitle, anchor: 'start', fontSize: 13, subtitleFontSize: 11 },
    hconcat: body,
    resolve: { scale: INDEPENDENT },
  };
}

/** The vega-lite spec of a document (exported for inspection; renderChartSvg compiles it). */
export function chartSpec(doc: ChartDocument): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: doc.title, subtitle: doc.subtitle, anchor: 'start', fontSize: 15 },
    background: 'white',
    padding: 12,
    config: { font: 'sans-serif', view: { stroke: null } },
    vconcat: doc.groups.map(groupSpec),
    resolve: { scale: INDEPENDENT },
    spacing: 28,
  } as unknown as TopLevelSpec;
}

/** The document as a standalone SVG string. */
export async function renderChartSvg(doc: ChartDocument): Promise<string> {
  const vegaSpec = compile(chartSpec(doc)).spec;
  const view = new View(parse(vegaSpec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
