// The charts beside the bench and load-test reports: rendered by the real vega/vega-lite from
// small reports, checked as XML, and written by the real report writers into a temp dir.

import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { renderChartSvg } from '../../bench/chart.js';
import { benchChartDocument, writeBenchReport, type BenchReport } from '../../bench/report.js';
import {
  loadtestChartDocument,
  ratioRows,
  writeLoadtestReport,
  type LoadtestReport,
  type TargetReport,
} from '../../loadtest/report.js';

const ENTITY = /&(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);/g;

/**
 * Checks that `svg` is one well-formed XML element tree rooted at <svg> (tags nest and close,
 * attributes are quoted, `<` and `&` appear only as markup or entities) and returns its text
 * nodes, entities decoded.
 */
function wellFormedSvgText(svg: string): string[] {
  const doc = svg.replace(/^<\?xml[^>]*\?>\s*/, '');
  const token = /<!--[\s\S]*?-->|<(\/?)([A-Za-z][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*"[^"<]*")*)\s*(\/?)>/g;
  const stack: string[] = [];
  const texts: string[] = [];
  let last = 0;
  let roots = 0;
  const checkText = (text: string, where: number): void => {
    assert.ok(!text.includes('<'), `stray < at ${where}: ${doc.slice(where, where + 80)}`);
    assert.ok(!text.replace(ENTITY, '').includes('&'), `bare & at ${where}`);
  };
  for (let m = token.exec(doc); m; m = token.exec(doc)) {
    const between = doc.slice(last, m.index);
    checkText(between, last);
    if (stack.length === 0) assert.equal(between.trim(), '', 'text outside the root element');
    else if (between.trim()) texts.push(decode(between));
    last = token.lastIndex;
    if (m[0].startsWith('<!--')) continue;
    const [, closing, name, attrs, selfClosing] = m;
    checkText((attrs ?? '').replace(/"[^"]*"/g, (v) => v.replace(ENTITY, '')).replace(/[^&<]/g, ''), m.index);
    if (closing) {
      assert.equal(stack.pop(), name, `</${name}> closes the wrong element`);
    } else if (!selfClosing) {
      if (stack.length === 0) roots++;
      stack.push(name!);
    } else if (stack.length === 0) roots++;
  }
  assert.equal(doc.slice(last).trim(), '', 'text after the root element');
  assert.deepEqual(stack, [], 'unclosed elements');
  assert.equal(roots, 1, 'exactly one root element');
  assert.match(doc, /^<svg[\s>]/);
  return texts;
}

function decode(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&#x([0-9a-fA-F]+);/g, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&amp;/g, '&');
}

const task = (name: string, opsPerSec: number, ratio: number | undefined, p50Ns: number, p99Ns: number) => ({
  name,
  opsPerSec,
  meanNs: p50Ns,
  p50Ns,
  p99Ns,
  rme: 1,
  samples: 100,
  ...(ratio === undefined ? {} : { ratio }),
});

function benchReport(): BenchReport {
  return {
    startedAt: '2026-01-02T03:04:05.678Z',
    durationMs: 1000,
    timeMsPerTask: 50,
    machine: { cpus: 2, cpuModel: 'test cpu', memoryGiB: 4, node: 'v20.0.0', platform: 'linux-x64' },
    suites: [
      {
        file: 'bench/a.bench.ts',
        name: 'counter suite',
        ceiling: 'empty loop',
        tasks: [task('empty loop', 4e8, 1, 2, 5), task('counter add', 1e8, 0.25, 8, 40)],
      },
      {
        file: 'bench/b.bench.ts',
        name: 'store <lmdb> & "redis"',
        ceiling: 'raw get',
        tasks: [
          task('raw get', 2e6, 1, 400, 2000),
          task('store get', 5e5, 0.25, 1600, 9000),
          { ...task('store put', 0, undefined, 0, 0), error: 'disk full' },
        ],
      },
    ],
  };
}

function loadtestReport(): LoadtestReport {
  const targets: TargetReport[] = [
    {
      label: 'ceiling uws-echo',
      kind: 'ceiling',
      ceiling: 'uws-echo',
      load: 'POST /echo',
      results: [
        {
          client: 'autocannon',
          settings: 'c=10',
          requests: 90000,
          rps: 30000,
          p50Ms: 1.2,
          p99Ms: 4,
          failures: 0,
        },
        { client: 'wrk', settings: 'c=10', requests: 150000, rps: 50000, p50Ms: 0.8, p99Ms: 3, failures: 0 },
      ],
    },
    {
      label: 'ratelimit-json',
      kind: 'scenario',
      load: 'POST /json',
      results: [
        {
          client: 'autocannon',
          settings: 'c=10',
          requests: 45000,
          rps: 15000,
          p50Ms: 2.5,
          p99Ms: 9,
          failures: 0,
        },
        { client: 'wrk', settings: 'c=10', requests: 60000, rps: 20000, p50Ms: 2, p99Ms: 7, failures: 0 },
      ],
    },
  ];
  return {
    scenario: 'ratelimit-json',
    startedAt: '2026-01-02T03:04:05.678Z',
    machine: { cpus: 2, cpuModel: 'test cpu', node: 'v20.0.0' },
    args: { durationS: 3 },
    clientsAvailable: { wrk: true, h2load: false },
    targets,
    ratios: ratioRows(targets),
  };
}

describe('the SVG check itself', () => {
  it('rejects broken XML and accepts a well-formed tree', () => {
    assert.throws(() => wellFormedSvgText('<svg><g></svg>'));
    assert.throws(() => wellFormedSvgText('<svg><text>a & b</text></svg>'));
    assert.throws(() => wellFormedSvgText('<svg><text>a < b</text></svg>'));
    assert.throws(() => wellFormedSvgText('<svg></svg><svg></svg>'));
    assert.throws(() => wellFormedSvgText('<svg><g>'));
    assert.deepEqual(wellFormedSvgText('<svg a="1"><text>a &amp; &lt;b&gt;</text><g/></svg>'), ['a & <b>']);
  });
});

describe('bench chart', () => {
  it('renders every suite, task and ceiling with the ratios, as well-formed SVG', async () => {
    const svg = await renderChartSvg(benchChartDocument(benchReport()));
    const text = wellFormedSvgText(svg).join('\n');
    for (const s of ['counter suite', 'store <lmdb> & "redis"', 'counter add', 'store get'])
      assert.ok(text.includes(s), `no ${JSON.stringify(s)} in the chart`);
    assert.ok(text.includes('empty loop (ceiling)'));
    assert.ok(text.includes('raw get (ceiling)'));
    assert.ok(text.includes('ceiling: empty loop'));
    assert.match(text, /100\.00 M ops\/s · 0\.250×/);
    assert.match(text, /store put failed: disk full/);
    assert.match(text, /latency per operation/);
  });

  it('renders a report whose only suite failed, with the failure and no bars', async () => {
    const report = benchReport();
    report.suites = [
      {
        file: 'bench/c.bench.ts',
        name: '(file)',
        ceiling: '',
        tasks: [{ ...task('(suite)', 0, undefined, 0, 0), error: 'cannot load: boom' }],
      },
    ];
    const text = wellFormedSvgText(await renderChartSvg(benchChartDocument(report))).join('\n');
    assert.match(text, /\(suite\) failed: cannot load: boom/);
    assert.match(text, /no figures to chart/);
  });
});

describe('load-test chart', () => {
  it('renders the scenario and its ceiling per client with the ratio, as well-formed SVG', async () => {
    const report = loadtestReport();
    assert.deepEqual(
      report.ratios.map((r) => [r.client, r.ratio]),
      [
        ['autocannon', 0.5],
        ['wrk', 0.4],
      ],
    );
    const text = wellFormedSvgText(await renderChartSvg(loadtestChartDocument(report))).join('\n');
    for (const s of ['ratelimit-json', 'ceiling uws-echo', 'autocannon', 'wrk'])
      assert.ok(text.includes(s), `no ${JSON.stringify(s)} in the chart`);
    assert.match(text, /15\.0 k req\/s · 0\.500×/);
    assert.match(text, /20\.0 k req\/s · 0\.400×/);
    assert.match(text, /latency per request/);
  });
});

describe('report writers put the chart beside the JSON', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-chart-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('bench: <stamp>.json, <stamp>.svg and latest.md', async () => {
    const out = join(dir, 'bench', 'nested');
    const report = benchReport();
    const written = await writeBenchReport(out, report);
    assert.deepEqual(readdirSync(out).sort(), [
      '2026-01-02T03-04-05-678Z.json',
      '2026-01-02T03-04-05-678Z.svg',
      'latest.md',
    ]);
    assert.equal(written.svg, join(out, '2026-01-02T03-04-05-678Z.svg'));
    assert.deepEqual(JSON.parse(readFileSync(written.json, 'utf8')), report);
    assert.ok(wellFormedSvgText(readFileSync(written.svg, 'utf8')).join('\n').includes('counter suite'));
    assert.match(readFileSync(written.markdown, 'utf8'), /## counter suite/);
  });

  it('loadtest: <scenario>-<stamp>.json and .svg', async () => {
    const out = join(dir, 'loadtest');
    const report = loadtestReport();
    const written = await writeLoadtestReport(out, report);
    assert.deepEqual(readdirSync(out).sort(), [
      'ratelimit-json-2026-01-02T03-04-05-678Z.json',
      'ratelimit-json-2026-01-02T03-04-05-678Z.svg',
    ]);
    assert.deepEqual(JSON.parse(readFileSync(written.json, 'utf8')), report);
    assert.ok(wellFormedSvgText(readFileSync(written.svg, 'utf8')).join('\n').includes('ratelimit-json'));
  });
});
