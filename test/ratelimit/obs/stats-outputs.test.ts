// Statistics outputs against real listeners: a UDP socket receiving statsd lines (plain, tagged,
// mogrified, EXTRA_TAGS, timers), standard-output printing, and a Prometheus scrape of the pull
// endpoint with the built-in mapping, the milliseconds switch and a mapping file.

import { strict as assert } from 'node:assert';
import { createSocket, type Socket } from 'node:dgram';
import { createServer as createTcpServer, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EnvReader, SettingsError } from '../../../src/core/settings/index.js';
import { loadStatsOutputSettings } from '../../../src/ratelimit/settings/observability.js';
import { ruleStats, STAT } from '../../../src/ratelimit/stats/names.js';
import { startStatsOutputs, type StatsOutputs } from '../../../src/ratelimit/stats/outputs/index.js';
import { MappingError, parseMapping } from '../../../src/ratelimit/stats/outputs/prom-mapping.js';
import { responseTimeRecorder } from '../../../src/ratelimit/stats/outputs/response-time.js';
import { createStatsBuffer, SharedStatsTable } from '../../../src/ratelimit/stats/shared-table.js';

function freshTable(): SharedStatsTable {
  const table = new SharedStatsTable(createStatsBuffer(256));
  const one = ruleStats(table, 'd.k1');
  table.add(one.totalHits, 3);
  table.add(one.withinLimit, 2);
  table.add(one.overLimit, 1);
  const two = ruleStats(table, 'd.k1_v.k2');
  table.add(two.totalHits, 5);
  const three = ruleStats(table, 'd.k1_v.k2.k3');
  table.add(three.totalHits, 7);
  table.inc(STAT.serverTotalRequests('ShouldRateLimit'), 4);
  table.inc(STAT.serverResponseTimeCount('ShouldRateLimit'), 4);
  table.inc(STAT.serverResponseTimeTotalUs('ShouldRateLimit'), 10_000);
  table.inc(STAT.configLoadSuccess, 1);
  table.inc(STAT.callError('service_error'), 2);
  return table;
}

class UdpCollector {
  readonly socket: Socket = createSocket('udp4');
  readonly lines: string[] = [];
  private waiters: (() => void)[] = [];

  async start(): Promise<number> {
    this.socket.on('message', (msg) => {
      for (const line of msg.toString('utf8').split('\n')) if (line !== '') this.lines.push(line);
      for (const w of this.waiters.splice(0)) w();
    });
    await new Promise<void>((resolve) => this.socket.bind(0, '127.0.0.1', resolve));
    return this.socket.address().port;
  }

  /** Waits until a line satisfying `test` has arrived (the test's own timeout bounds it). */
  async waitFor(test: (line: string) => boolean): Promise<string> {
    for (;;) {
      const found = this.lines.find(test);
      if (found !== undefined) return found;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.socket.close(() => resolve()));
  }
}

describe('statsd push output', () => {
  let udp: UdpCollector;
  let port: number;
  const opened: StatsOutputs[] = [];

  before(async () => {
    udp = new UdpCollector();
    port = await udp.start();
  });
  after(async () => {
    for (const o of opened) await o.close();
    await udp.close();
  });

  async function start(env: Record<string, string>, table: SharedStatsTable): Promise<StatsOutputs> {
    const settings = loadStatsOutputSettings(
      new EnvReader({
        STATSD_HOST: '127.0.0.1',
        STATSD_PORT: String(port),
        STATS_FLUSH_INTERVAL: '1h',
        ...env,
      }),
    );
    const outputs = await startStatsOutputs(table, settings);
    opened.push(outputs);
    return outputs;
  }

  it('sends plain statsd lines with EXTRA_TAGS folded into the name, then only increments', async () => {
    udp.lines.length = 0;
    const table = freshTable();
    const outputs = await start({ EXTRA_TAGS: '<env:test>,<az:eu-1.a>' }, table);
    await outputs.flush();
    await udp.waitFor((l) => l.startsWith('ratelimit.service.config_load_success'));
    assert.ok(
      udp.lines.includes('ratelimit.service.rate_limit.d.k1.total_hits.__az=eu-1_a.__env=test:3|c'),
      udp.lines.join('\n'),
    );
    assert.ok(
      udp.lines.includes('ratelimit.service.rate_limit.d.k1_v.k2.total_hits.__az=eu-1_a.__env=test:5|c'),
      udp.lines.join('\n'),
    );
    assert.ok(
      udp.lines.includes('ratelimit.service.call.should_rate_limit.service_error.__az=eu-1_a.__env=test:2|c'),
      udp.lines.join('\n'),
    );
    // Four calls, 10 ms in total: one timer line with the mean and a 1/4 sample rate.
    assert.ok(
      udp.lines.includes(
        'ratelimit_server.ShouldRateLimit.response_time.__az=eu-1_a.__env=test:2.5|ms|@0.25',
      ),
      udp.lines.join('\n'),
    );
    assert.ok(!udp.lines.some((l) => l.includes('total_us') || l.includes('response_time.count')));
    udp.lines.length = 0;
    table.inc('ratelimit.service.rate_limit.d.k1.total_hits', 2);
    await outputs.flush();
    const line = await udp.waitFor((l) => l.includes('d.k1.total_hits'));
    assert.equal(line, 'ratelimit.service.rate_limit.d.k1.total_hits.__az=eu-1_a.__env=test:2|c');
    assert.ok(
      !udp.lines.some((l) => l.includes('config_load_success')),
      'unchanged counters are not sent again',
    );
    await outputs.close();
  });

  it('sends tagged lines rewritten by mogrifiers with $n groups, through the upstream alias names', async () => {
    udp.lines.length = 0;
    const table = freshTable();
    const outputs = await start(
      {
        USE_DOG_STATSD: 'true',
        USE_DOG_STATSD_MOGRIFIERS: 'RULE,SERVER',
        DOG_STATSD_MOGRIFIER_RULE_PATTERN: '^ratelimit\\.service\\.rate_limit\\.([^.]*)\\.([^.]*)\\.([^.]*)$',
        DOG_STATSD_MOGRIFIER_RULE_NAME: 'ratelimit.service.rate_limit.$3',
        DOG_STATSD_MOGRIFIER_RULE_TAGS: 'domain:$1,descriptor:$2',
        TAGGEDSTATS_MOGRIFIER_SERVER_PATTERN: '^ratelimit_server\\.(.*)\\.(.*)$',
        TAGGEDSTATS_MOGRIFIER_SERVER_NAME: 'ratelimit_server.$2',
        TAGGEDSTATS_MOGRIFIER_SERVER_TAGS: 'method:$1,missing:$7',
        EXTRA_TAGS: 'env:test',
      },
      table,
    );
    await outputs.flush();
    await udp.waitFor((l) => l.startsWith('ratelimit.service.config_load_success'));
    assert.ok(
      udp.lines.includes('ratelimit.service.rate_limit.total_hits:3|c|#env:test,domain:d,descriptor:k1'),
      udp.lines.join('\n'),
    );
    assert.ok(
      udp.lines.includes('ratelimit.service.rate_limit.over_limit:1|c|#env:test,domain:d,descriptor:k1'),
      udp.lines.join('\n'),
    );
    // Not matched by RULE (deeper path): sent unchanged, with the extra tags only.
    assert.ok(
      udp.lines.includes('ratelimit.service.rate_limit.d.k1_v.k2.total_hits:5|c|#env:test'),
      udp.lines.join('\n'),
    );
    // An out-of-range group stays as written, like the upstream service.
    assert.ok(
      udp.lines.includes('ratelimit_server.total_requests:4|c|#env:test,method:ShouldRateLimit,missing:$7'),
      udp.lines.join('\n'),
    );
    assert.ok(
      udp.lines.includes(
        'ratelimit_server.response_time:2.5|ms|@0.25|#env:test,method:ShouldRateLimit,missing:$7',
      ),
      udp.lines.join('\n'),
    );
    assert.ok(
      udp.lines.includes('ratelimit.service.config_load_success:1|c|#env:test'),
      udp.lines.join('\n'),
    );
    await outputs.close();
  });

  it('flushes on STATS_FLUSH_INTERVAL without being asked', async () => {
    udp.lines.length = 0;
    const table = new SharedStatsTable(createStatsBuffer(64));
    const settings = loadStatsOutputSettings(
      new EnvReader({
        PUSHSTATS_HOST: '127.0.0.1',
        PUSHSTATS_PORT: String(port),
        STATS_FLUSH_INTERVAL: '50ms',
      }),
    );
    const outputs = await startStatsOutputs(table, settings);
    opened.push(outputs);
    table.inc('ratelimit.service.rate_limit.timer.k.total_hits', 9);
    assert.equal(
      await udp.waitFor((l) => l.includes('timer.k')),
      'ratelimit.service.rate_limit.timer.k.total_hits:9|c',
    );
    await outputs.close();
  });
});

describe('statsd over TCP', () => {
  it('sends lines over TCP with PUSHSTATS_PROTOCOL=tcp', async () => {
    let text = '';
    let arrived!: () => void;
    const done = new Promise<void>((resolve) => (arrived = resolve));
    const server = createTcpServer((socket) => {
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('utf8');
        if (text.includes('config_load_success')) arrived();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    const outputs = await startStatsOutputs(
      freshTable(),
      loadStatsOutputSettings(
        new EnvReader({
          STATSD_HOST: '127.0.0.1',
          STATSD_PORT: String(port),
          PUSHSTATS_PROTOCOL: 'tcp',
          STATS_FLUSH_INTERVAL: '1h',
        }),
      ),
    );
    try {
      await outputs.flush();
      await done;
      assert.match(text, /^ratelimit\.service\.rate_limit\.d\.k1\.total_hits:3\|c$/m);
    } finally {
      await outputs.close();
      server.close();
    }
  });

  it('keeps running when the statsd server is not there', async () => {
    const probe = createTcpServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as AddressInfo).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    const table = freshTable();
    const outputs = await startStatsOutputs(
      table,
      loadStatsOutputSettings(
        new EnvReader({
          STATSD_HOST: '127.0.0.1',
          STATSD_PORT: String(port),
          PUSHSTATS_PROTOCOL: 'tcp',
          STATS_FLUSH_INTERVAL: '1h',
        }),
      ),
    );
    await outputs.flush();
    table.inc('ratelimit.service.rate_limit.d.k1.total_hits', 1);
    await outputs.flush();
    await outputs.close();
  });
});

describe('standard output and disabled statistics', () => {
  it('USE_PUSHSTATS=false prints the increments as statsd lines', async () => {
    const printed: string[] = [];
    const table = freshTable();
    const outputs = await startStatsOutputs(
      table,
      loadStatsOutputSettings(new EnvReader({ USE_PUSHSTATS: 'false', EXTRA_TAGS: 'env:t' })),
      {
        stdout: { write: (text: string) => printed.push(text) },
      },
    );
    await outputs.flush();
    const text = printed.join('');
    assert.match(text, /^ratelimit\.service\.rate_limit\.d\.k1\.total_hits\.__env=t:3\|c$/m);
    assert.match(text, /^ratelimit_server\.ShouldRateLimit\.response_time\.__env=t:2\.5\|ms\|@0\.25$/m);
    printed.length = 0;
    await outputs.flush();
    assert.equal(printed.join(''), '', 'nothing changed, nothing printed');
    await outputs.close();
  });

  it('DISABLE_STATS=true starts no output at all', async () => {
    const printed: string[] = [];
    const settings = loadStatsOutputSettings(
      new EnvReader({
        DISABLE_STATS: 'true',
        USE_PUSHSTATS: 'false',
        USE_PULLMETRICS: 'true',
        PULLMETRICS_ADDR: '127.0.0.1:0',
      }),
    );
    const outputs = await startStatsOutputs(freshTable(), settings, {
      stdout: { write: (t: string) => printed.push(t) },
    });
    await outputs.flush();
    assert.equal(outputs.pullUrl, undefined);
    assert.deepEqual(printed, []);
    await outputs.close();
  });
});

function metricLines(text: string): string[] {
  return text.split('\n').filter((l) => l !== '' && !l.startsWith('#'));
}

describe('pull metrics (Prometheus text format)', () => {
  let dir: string;
  const opened: StatsOutputs[] = [];
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-obs-prom-'));
  });
  after(async () => {
    for (const o of opened) await o.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function start(env: Record<string, string>, table = freshTable()): Promise<StatsOutputs> {
    const outputs = await startStatsOutputs(
      table,
      loadStatsOutputSettings(
        new EnvReader({ USE_PULLMETRICS: 'true', PULLMETRICS_ADDR: '127.0.0.1:0', ...env }),
      ),
    );
    opened.push(outputs);
    return outputs;
  }

  it('serves the built-in names and labels (domain, key1, key2) and the response-time histogram in seconds', async () => {
    const table = freshTable();
    const outputs = await start({}, table);
    assert.ok(outputs.pullUrl?.endsWith('/metrics'));
    const res = await fetch(outputs.pullUrl!);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await res.text();
    const lines = metricLines(text);
    assert.ok(lines.includes('ratelimit_service_rate_limit_total_hits{domain="d",key1="k1"} 3'), text);
    assert.ok(lines.includes('ratelimit_service_rate_limit_within_limit{domain="d",key1="k1"} 2'));
    assert.ok(lines.includes('ratelimit_service_rate_limit_over_limit{domain="d",key1="k1"} 1'));
    // The two- and three-level paths both land on key2 (deeper levels are not labels): summed.
    assert.ok(
      lines.includes('ratelimit_service_rate_limit_total_hits{domain="d",key1="k1_v",key2="k2"} 12'),
      text,
    );
    assert.ok(lines.includes('ratelimit_service_should_rate_limit_error{err_type="service_error"} 2'));
    assert.ok(lines.includes('ratelimit_service_total_requests{grpc_method="ShouldRateLimit"} 4'));
    assert.ok(
      lines.includes(
        'ratelimit_service_response_time_seconds_bucket{grpc_method="ShouldRateLimit",le="+Inf"} 4',
      ),
      text,
    );
    assert.ok(
      lines.includes('ratelimit_service_response_time_seconds_sum{grpc_method="ShouldRateLimit"} 0.01'),
    );
    assert.ok(
      lines.includes('ratelimit_service_response_time_seconds_count{grpc_method="ShouldRateLimit"} 4'),
    );
    assert.ok(lines.includes('ratelimit_service_config_load_success 1'));
    assert.match(text, /^# TYPE ratelimit_service_rate_limit_total_hits counter$/m);
    assert.match(text, /^# TYPE ratelimit_service_response_time_seconds histogram$/m);
    // Totals are read at scrape time: a new hit shows on the next scrape.
    table.inc('ratelimit.service.rate_limit.d.k1.total_hits', 1);
    const again = metricLines(await (await fetch(outputs.pullUrl!)).text());
    assert.ok(again.includes('ratelimit_service_rate_limit_total_hits{domain="d",key1="k1"} 4'));
  });

  it('keeps milliseconds with PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS, adds EXTRA_TAGS as labels, serves a custom path', async () => {
    const outputs = await start({
      PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS: 'true',
      PROMETHEUS_PATH: '/prom',
      EXTRA_TAGS: 'env:t',
    });
    assert.ok(outputs.pullUrl?.endsWith('/prom'));
    const lines = metricLines(await (await fetch(outputs.pullUrl!)).text());
    assert.ok(
      lines.includes('ratelimit_service_response_time_seconds_sum{env="t",grpc_method="ShouldRateLimit"} 10'),
      lines.join('\n'),
    );
    const base = outputs.pullUrl!.replace(/\/prom$/, '');
    const missing = await fetch(base + '/metrics');
    assert.equal(missing.status, 404);
    await missing.arrayBuffer();
    const post = await fetch(outputs.pullUrl!, { method: 'POST', body: 'x' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    await post.arrayBuffer();
  });

  it('replaces the built-in mapping with PULLMETRICS_MAPPER_YAML (glob, regex, drop, scale, summary)', async () => {
    const file = join(dir, 'mapper.yaml');
    writeFileSync(
      file,
      [
        'defaults:',
        '  observer_type: summary',
        'mappings:',
        '  - match: "ratelimit.service.rate_limit.*.*.total_hits"',
        '    name: "hits_${1}"',
        '    help: "hits per rule"',
        '    labels: { rule: "$2" }',
        '  - match: "ratelimit\\\\.service\\\\.rate_limit\\\\..*"',
        '    match_type: regex',
        '    action: drop',
        '  - match: "ratelimit_server.*.response_time"',
        '    name: "rpc_ms"',
        '    scale: 2',
        '    labels: { method: "$1" }',
      ].join('\n'),
    );
    const outputs = await start({ PULLMETRICS_MAPPER_YAML: file });
    const text = await (await fetch(outputs.pullUrl!)).text();
    const lines = metricLines(text);
    assert.ok(lines.includes('hits_d{rule="k1"} 3'), text);
    assert.match(text, /^# HELP hits_d hits per rule$/m);
    assert.ok(
      !lines.some((l) => l.includes('k1_v') || l.startsWith('ratelimit_service_rate_limit')),
      'dropped by the regex rule',
    );
    assert.match(text, /^# TYPE rpc_ms summary$/m);
    assert.ok(lines.includes('rpc_ms_sum{method="ShouldRateLimit"} 20'));
    assert.ok(lines.includes('rpc_ms_count{method="ShouldRateLimit"} 4'));
    // Unmapped names are escaped, like the statsd exporter does.
    assert.ok(lines.includes('ratelimit_service_config_load_success 1'));
    assert.ok(lines.includes('ratelimit_server_ShouldRateLimit_total_requests 4'));
  });

  it('serves response-time buckets recorded per call, in seconds and in milliseconds', async () => {
    const table = new SharedStatsTable(createStatsBuffer(256));
    const record = responseTimeRecorder(table, 'ShouldRateLimit');
    for (const us of [50, 300, 300, 2_000, 5_000_000]) record(us);
    const seconds = metricLines(await (await fetch((await start({}, table)).pullUrl!)).text());
    const bucket = (le: string) =>
      seconds
        .find((l) =>
          l.startsWith(
            `ratelimit_service_response_time_seconds_bucket{grpc_method="ShouldRateLimit",le="${le}"}`,
          ),
        )
        ?.split(' ')[1];
    assert.equal(bucket('0.0001'), '1', seconds.join('\n'));
    assert.equal(bucket('0.00025'), '1');
    assert.equal(bucket('0.0005'), '3');
    assert.equal(bucket('0.0025'), '4');
    assert.equal(bucket('1'), '4');
    assert.equal(bucket('+Inf'), '5');
    assert.ok(
      seconds.includes('ratelimit_service_response_time_seconds_count{grpc_method="ShouldRateLimit"} 5'),
    );
    assert.ok(
      seconds.includes('ratelimit_service_response_time_seconds_sum{grpc_method="ShouldRateLimit"} 5.00265'),
    );
    assert.ok(!seconds.some((l) => l.includes('le_')), 'bucket counters are not exported as counters');
    const ms = metricLines(
      await (
        await fetch((await start({ PULLMETRICS_RESPONSE_TIME_AS_MILLISECONDS: 'true' }, table)).pullUrl!)
      ).text(),
    );
    assert.ok(
      ms.includes('ratelimit_service_response_time_seconds_bucket{grpc_method="ShouldRateLimit",le="0.5"} 3'),
      ms.join('\n'),
    );
    assert.ok(
      ms.includes('ratelimit_service_response_time_seconds_sum{grpc_method="ShouldRateLimit"} 5002.65'),
    );
    // The push outputs send the mean, never the bucket counters.
    const printed: string[] = [];
    const stdout = await startStatsOutputs(
      table,
      loadStatsOutputSettings(new EnvReader({ USE_PUSHSTATS: 'false' })),
      { stdout: { write: (t: string) => printed.push(t) } },
    );
    await stdout.flush();
    await stdout.close();
    assert.equal(printed.join(''), 'ratelimit_server.ShouldRateLimit.response_time:1000.53|ms|@0.2\n');
  });

  it('refuses a bad mapping file at start', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'mappings:\n  - match: "a.*"\n    name: x\n    ttl: 10s\n');
    const settings = loadStatsOutputSettings(
      new EnvReader({
        USE_PULLMETRICS: 'true',
        PULLMETRICS_ADDR: '127.0.0.1:0',
        PULLMETRICS_MAPPER_YAML: bad,
      }),
    );
    await assert.rejects(startStatsOutputs(freshTable(), settings), /unsupported key 'ttl'/);
    const missing = loadStatsOutputSettings(
      new EnvReader({
        USE_PULLMETRICS: 'true',
        PULLMETRICS_ADDR: '127.0.0.1:0',
        PULLMETRICS_MAPPER_YAML: join(dir, 'nope.yaml'),
      }),
    );
    await assert.rejects(startStatsOutputs(freshTable(), missing), /cannot read metrics mapping/);
    assert.throws(
      () => parseMapping('mappings:\n  - match: "("\n    match_type: regex\n    name: x\n'),
      MappingError,
    );
    assert.throws(() => parseMapping('mappings:\n  - name: x\n'), /match is required/);
    assert.throws(
      () => parseMapping('mappings:\n  - match: a\n    name: x\n    labels: { "bad-label": "1" }\n'),
      /invalid label name/,
    );
    assert.throws(() => parseMapping(': : :\n'), MappingError);
  });
});

describe('statistics settings', () => {
  const load = (env: Record<string, string>) => loadStatsOutputSettings(new EnvReader(env));

  it('has the spec defaults', () => {
    const s = load({});
    assert.equal(s.push.mode, 'statsd');
    assert.equal(s.push.host, 'localhost');
    assert.equal(s.push.port, 8125);
    assert.equal(s.flushIntervalMs, 10_000);
    assert.equal(s.pull.enabled, false);
    assert.equal(s.pull.host, '0.0.0.0');
    assert.equal(s.pull.port, 9090);
    assert.equal(s.pull.path, '/metrics');
    assert.equal(s.disabled, false);
  });

  it('turns push off when only the pull endpoint is enabled, keeps both when asked', () => {
    assert.equal(load({ USE_PULLMETRICS: 'true' }).push.mode, 'off');
    assert.equal(load({ USE_PULLMETRICS: 'true', USE_PUSHSTATS: 'true' }).push.mode, 'statsd');
    assert.equal(load({ USE_PUSHSTATS: 'false' }).push.mode, 'stdout');
    assert.equal(load({ USE_STATSD: 'false', USE_TAGGEDSTATS: 'true' }).push.mode, 'statsd');
  });

  it('refuses bad values with the variable named', () => {
    const bad: Record<string, string>[] = [
      { PULLMETRICS_ADDR: 'nine-thousand' },
      { PROMETHEUS_ADDR: ':99999' },
      { PULLMETRICS_PATH: 'metrics' },
      { STATS_FLUSH_INTERVAL: 'soon' },
      { STATS_FLUSH_INTERVAL: '0s' },
      { EXTRA_TAGS: 'novalue' },
      { STATSD_PORT: '0' },
      { USE_PUSHSTATS: 'maybe' },
      { USE_TAGGEDSTATS: 'true', TAGGEDSTATS_MOGRIFIERS: 'A' },
      { USE_TAGGEDSTATS: 'true', TAGGEDSTATS_MOGRIFIERS: 'A', TAGGEDSTATS_MOGRIFIER_A_PATTERN: '(' },
      { USE_TAGGEDSTATS: 'true', TAGGEDSTATS_MOGRIFIERS: 'A', TAGGEDSTATS_MOGRIFIER_A_PATTERN: 'x' },
      {
        USE_TAGGEDSTATS: 'true',
        TAGGEDSTATS_MOGRIFIERS: 'A',
        TAGGEDSTATS_MOGRIFIER_A_PATTERN: 'x',
        TAGGEDSTATS_MOGRIFIER_A_NAME: 'y',
        TAGGEDSTATS_MOGRIFIER_A_TAGS: 'nocolon',
      },
      { PUSHSTATS_PROTOCOL: 'sctp' },
    ];
    for (const env of bad) assert.throws(() => load(env), SettingsError, JSON.stringify(env));
  });
});
