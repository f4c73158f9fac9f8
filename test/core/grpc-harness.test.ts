// The bench and load-test harness around the gRPC core: the h2load output reader, the
// latency histogram, the wrk script against a real server (when wrk is installed), the
// multi-process grpc-js generator against a real server, and both runners end to end with
// tiny durations. Figures are checked for shape and counts, never for speed.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { onPath } from '../../loadtest/clients/detect.js';
import { runGrpcJs } from '../../loadtest/clients/grpc-js.js';
import { parseH2load } from '../../loadtest/clients/h2load.js';
import { merge, record, summarise, type Histogram } from '../../loadtest/clients/histogram.js';
import { resolveHttpLoad } from '../../loadtest/clients/http-body.js';
import { runWrk, wrkScript } from '../../loadtest/clients/wrk.js';
import { runAutocannon } from '../../loadtest/clients/autocannon.js';
import { RLS_LOAD } from '../../loadtest/defaults.js';
import {
  loadProto,
  PROTO_FILES,
  serviceDefinition,
  startGrpcServer,
  type RunningGrpcServer,
} from '../../src/core/grpc/index.js';

const root = join(import.meta.dirname, '..', '..');

function runTsx(
  script: string,
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('load-test pieces', () => {
  it('reads h2load figures, counting failed streams and non-2xx statuses', () => {
    const sample = [
      'finished in 3.00s, 875.00 req/s, 48.37KB/s',
      'requests: 2625 total, 2725 started, 2600 done, 2590 succeeded, 10 failed, 2 errored, 1 timeout',
      'status codes: 2590 2xx, 0 3xx, 4 4xx, 6 5xx',
      'traffic: 145.10KB (148583) total, 13.80KB (14136) headers (space savings 96.23%), 55.37KB (56700) data',
      '                     min         max         mean         sd        +/- sd',
      'time for request:   460us    1.48s    113.01ms     64.53ms    90.48%',
    ].join('\n');
    const f = parseH2load(sample);
    assert.equal(f.rps, 875);
    assert.equal(f.requests, 2600);
    assert.equal(f.failed, 13);
    assert.equal(f.non2xx, 10);
    assert.equal(f.meanMs, 113.01);
    assert.equal(f.maxMs, 1480);
    assert.throws(() => parseH2load('h2load: connection refused'), /cannot read h2load output/);
  });

  it('summarises merged latency histograms within the bucket width', () => {
    const a: Histogram = {};
    const b: Histogram = {};
    for (let i = 1; i <= 500; i++) record(a, i * 10); // 10 µs … 5 ms
    for (let i = 501; i <= 1000; i++) record(b, i * 10);
    merge(a, b);
    const s = summarise(a);
    assert.equal(s.count, 1000);
    assert.ok(Math.abs(s.p50Ms - 5) / 5 < 0.03, `p50 ${s.p50Ms}`);
    assert.ok(Math.abs(s.p99Ms - 9.9) / 9.9 < 0.03, `p99 ${s.p99Ms}`);
    assert.ok(s.maxMs >= s.p99Ms);
    assert.deepEqual(summarise({}), { count: 0, p50Ms: 0, p99Ms: 0, meanMs: 0, maxMs: 0 });
  });

  it('writes a wrk script whose strings cannot be closed by the body', () => {
    const script = wrkScript(
      resolveHttpLoad({ kind: 'http', method: 'POST', path: '/x', body: 'a]]b]=]c' }),
      4,
    );
    assert.match(script, /wrk\.body = \[==\[\na\]\]b\]=\]c\]==\]/);
    assert.match(script, /wrk\.headers\[ \[\[\ncontent-type\]\] \] = \[\[\ntext\/plain\]\]/);
    assert.match(script, /for i = 1, 4 do/);
  });
});

describe('wrk against a real server', () => {
  const wrk = onPath('wrk');
  let server: Server;
  let port = 0;
  const bodies = new Set<string>();
  const methods = new Set<string>();

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        methods.add(`${req.method} ${req.url} ${req.headers['content-type']}`);
        if (req.url?.startsWith('/limited')) {
          res.statusCode = 429;
          res.end('slow down');
          return;
        }
        if (req.url?.startsWith('/broken')) {
          res.statusCode = 500;
          res.end('oops');
          return;
        }
        bodies.add(Buffer.concat(chunks).toString());
        res.end('ok');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : 0;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it(
    'sends the exact method, path, headers and body',
    { skip: wrk ? false : 'wrk is not installed' },
    async () => {
      const body = { text: 'quote " and ]] and \\ and \n newline' };
      const result = await runWrk(
        wrk!,
        `http://127.0.0.1:${port}`,
        resolveHttpLoad({ kind: 'http', method: 'POST', path: '/echo?x=1', body }),
        { durationS: 1, connections: 2, threads: 1, pipelining: 1 },
      );
      assert.equal(result.client, 'wrk');
      assert.ok(result.requests > 0);
      assert.equal(result.failures, 0);
      assert.ok(result.p50Ms !== undefined && result.p99Ms !== undefined && result.p99Ms >= result.p50Ms);
      assert.deepEqual([...bodies], [JSON.stringify(body)]);
      assert.deepEqual([...methods], ['POST /echo?x=1 application/json']);
    },
  );

  const quick = { durationS: 1, connections: 2, threads: 1, pipelining: 1 };

  it(
    'counts statuses outside okStatus as failures (wrk)',
    { skip: wrk ? false : 'wrk is not installed' },
    async () => {
      const base = `http://127.0.0.1:${port}`;
      const accepted = await runWrk(
        wrk!,
        base,
        resolveHttpLoad({ kind: 'http', method: 'GET', path: '/limited', okStatus: [200, 429] }),
        quick,
      );
      assert.ok(accepted.requests > 0);
      assert.equal(accepted.failures, 0, '429 is an accepted answer here');
      const plain = await runWrk(
        wrk!,
        base,
        resolveHttpLoad({ kind: 'http', method: 'GET', path: '/limited' }),
        quick,
      );
      assert.ok(plain.failures > 0 && plain.failures <= plain.requests, 'by default a 429 is a failure');
      const broken = await runWrk(
        wrk!,
        base,
        resolveHttpLoad({ kind: 'http', method: 'GET', path: '/broken', okStatus: [200, 429] }),
        quick,
      );
      assert.ok(broken.failures > 0, '500 is not in okStatus');
    },
  );

  it('counts statuses outside okStatus as failures (autocannon)', async () => {
    const base = `http://127.0.0.1:${port}`;
    const accepted = await runAutocannon(
      base,
      resolveHttpLoad({ kind: 'http', method: 'GET', path: '/limited', okStatus: [200, 429] }),
      quick,
    );
    assert.equal(accepted.client, 'autocannon');
    assert.ok(accepted.requests > 0);
    assert.equal(accepted.failures, 0);
    const plain = await runAutocannon(
      base,
      resolveHttpLoad({ kind: 'http', method: 'GET', path: '/limited' }),
      quick,
    );
    assert.ok(plain.failures > 0);
  });
});

describe('grpc-js load generator', () => {
  let server: RunningGrpcServer;
  let calls = 0;

  before(async () => {
    const definition = serviceDefinition(
      loadProto([PROTO_FILES.rls]),
      'envoy.service.ratelimit.v3.RateLimitService',
    );
    server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [
        {
          definition,
          implementation: {
            ShouldRateLimit: (req: { domain?: string }) => {
              calls++;
              return { overallCode: req.domain === (RLS_LOAD.request as { domain: string }).domain ? 1 : 2 };
            },
          },
        },
      ],
    });
  });
  after(() => server.close(1000));

  it('runs generator processes and adds up their calls', async () => {
    const result = await runGrpcJs(
      server.address,
      RLS_LOAD,
      { durationS: 1, connections: 2, threads: 1, pipelining: 2 },
      2,
    );
    assert.equal(result.client, 'grpc-js');
    assert.ok(result.requests > 0, 'some calls completed');
    assert.ok(calls >= result.requests, 'the server saw at least the counted calls');
    assert.equal(result.failures, 0);
    assert.match(result.settings, /2 processes, 2 channels × 2 in flight/);
  });

  it('counts failed calls as failures', async () => {
    const result = await runGrpcJs(
      server.address,
      {
        ...RLS_LOAD,
        method: 'ShouldRateLimit',
        service: 'envoy.service.ratelimit.v3.RateLimitService',
        request: { domain: 'x' },
      },
      { durationS: 1, connections: 1, threads: 1, pipelining: 1 },
      1,
    );
    assert.equal(result.failures, 0, 'OVER_LIMIT is an answer, not a failure');
    const down = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [] });
    try {
      const unimplemented = await runGrpcJs(
        down.address,
        RLS_LOAD,
        { durationS: 1, connections: 1, threads: 1, pipelining: 1 },
        1,
      );
      assert.equal(unimplemented.requests, 0);
      assert.ok(unimplemented.failures > 0);
    } finally {
      await down.close(1000);
    }
  });
});

describe('runners end to end', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-harness-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('bench: runs a filtered suite and writes JSON and Markdown with ratios', async () => {
    const out = join(dir, 'bench');
    const res = await runTsx('bench/run.ts', ['ceiling'], { BENCH_TIME_MS: '20', BENCH_REPORT_DIR: out });
    assert.equal(res.code, 0, res.stderr);
    const files = readdirSync(out);
    const json = files.find((f) => f.endsWith('.json'));
    assert.ok(json && files.includes('latest.md'));
    assert.ok(files.includes(json.replace(/\.json$/, '.svg')), 'the chart is beside the report');
    const report = JSON.parse(readFileSync(join(out, json), 'utf8')) as {
      suites: Array<{
        ceiling: string;
        tasks: Array<{ name: string; ratio?: number; opsPerSec: number; error?: string }>;
      }>;
    };
    const suite = report.suites[0]!;
    const ceiling = suite.tasks.find((t) => t.name === suite.ceiling)!;
    assert.equal(ceiling.ratio, 1);
    for (const t of suite.tasks) {
      assert.equal(t.error, undefined);
      assert.ok(t.opsPerSec > 0 && t.ratio! > 0);
    }
    assert.match(readFileSync(join(out, 'latest.md'), 'utf8'), /\| Atomics\.add Int32 \(ceiling\) \|/);
  });

  it('bench: an unknown filter or a bad BENCH_TIME_MS fails with a message', async () => {
    const none = await runTsx('bench/run.ts', ['no-such-suite'], {
      BENCH_TIME_MS: '20',
      BENCH_REPORT_DIR: join(dir, 'x'),
    });
    assert.equal(none.code, 1);
    assert.match(none.stderr, /no suite matched/);
    const bad = await runTsx('bench/run.ts', [], { BENCH_TIME_MS: 'fast' });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /BENCH_TIME_MS must be a positive integer/);
  });

  it('loadtest: rejects unknown scenarios and bad options', async () => {
    const unknown = await runTsx('loadtest/run.ts', ['no-such-scenario'], {});
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no scenario "no-such-scenario"; known: .*ceiling-only/);
    const bad = await runTsx('loadtest/run.ts', ['ceiling-only', '--duration', 'long'], {});
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--duration needs a positive integer/);
    const client = await runTsx('loadtest/run.ts', ['ceiling-only', '--client', 'ab'], {});
    assert.equal(client.code, 2);
    assert.match(client.stderr, /unknown client "ab"/);
  });

  it('loadtest: measures the ceilings with child processes and writes a report', async () => {
    const out = join(dir, 'loadtest');
    const res = await runTsx(
      'loadtest/run.ts',
      [
        'ceiling-only',
        '--duration',
        '1',
        '--connections',
        '2',
        '--client',
        'autocannon,grpc-js',
        '--grpc-procs',
        '1',
      ],
      { LOADTEST_REPORT_DIR: out },
    );
    assert.equal(res.code, 0, res.stderr + res.stdout);
    const file = readdirSync(out).find((f) => f.startsWith('ceiling-only-') && f.endsWith('.json'));
    assert.ok(file);
    assert.ok(readdirSync(out).includes(file.replace(/\.json$/, '.svg')), 'the chart is beside the report');
    const report = JSON.parse(readFileSync(join(out, file), 'utf8')) as {
      targets: Array<{
        label: string;
        pid?: number;
        error?: string;
        results: Array<{ client: string; requests: number; failures: number }>;
      }>;
    };
    assert.deepEqual(
      report.targets.map((t) => [t.label, t.results.map((r) => r.client)]),
      [
        ['ceiling uws-hello', ['autocannon']],
        ['ceiling uws-echo', ['autocannon']],
        ['ceiling grpc-constant', ['grpc-js']],
      ],
    );
    for (const t of report.targets) {
      assert.equal(t.error, undefined);
      assert.ok(t.results[0]!.requests > 0, `${t.label} answered`);
      assert.equal(t.results[0]!.failures, 0, `${t.label} had no failures`);
    }
    assert.match(res.stdout, /ceiling uws-echo\s+autocannon/);
    // No ceiling process outlives the run.
    for (const t of report.targets) {
      assert.ok(t.pid !== undefined && t.pid > 0, `${t.label} reported its pid`);
      assert.throws(() => process.kill(t.pid!, 0), { code: 'ESRCH' }, `${t.label} (pid ${t.pid}) is gone`);
    }
    assert.ok(existsSync(out));
  });
});
