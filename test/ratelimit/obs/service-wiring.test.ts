// The whole service started as the core starts it, with the observability settings wired in:
// configuration from a management server (CONFIG_TYPE=GRPC_XDS_SOTW), gRPC over mutual TLS,
// the pull endpoint, statsd lines on UDP and decision spans on an OTLP/HTTP receiver.

import { strict as assert } from 'node:assert';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createUnaryClient,
  loadProto,
  PROTO_FILES,
  serviceDefinition,
  type UnaryClient,
} from '../../../src/core/grpc/index.js';
import type { RunningService } from '../../../src/core/service.js';
import { startRatelimit } from '../../../src/ratelimit/index.js';
import { ManualClock } from '../../../src/ratelimit/engine/clock.js';
import { RLS_SERVICE, type WireRequest } from '../../../src/ratelimit/server/grpc.js';
import { makeTestContext, type TestContext } from '../../helpers/context.js';
import { makeCa } from '../../helpers/certs.js';
import { encodeConfig, ManagementServer } from './management-server.js';
import { waitUntil } from '../../helpers/wait.js';

describe('rate limit service with management-server config, TLS, metrics and tracing', () => {
  let dir: string;
  let t: TestContext;
  let service: RunningService;
  let grpc: UnaryClient<
    WireRequest,
    { overallCode?: number; statuses?: { code?: number; limitRemaining?: number }[] }
  >;
  const xds = new ManagementServer();
  const udp = createSocket('udp4');
  const lines: string[] = [];
  let otlp: Server;
  const spans: string[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-rl-wiring-'));
    makeCa(dir, 'ca', { server: 'DNS:localhost', client: 'DNS:envoy.test' });
    await xds.start();
    xds.push('v1', [
      encodeConfig({
        name: 'mgmt',
        domain: 'edge',
        descriptors: [{ key: 'user', rateLimit: { unit: 2, requestsPerUnit: 2 } }],
      }),
    ]);
    udp.on('message', (m) => lines.push(...m.toString().split('\n')));
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    otlp = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        spans.push(body);
        res.writeHead(200).end('{}');
      });
    });
    await new Promise<void>((resolve) => otlp.listen(0, '127.0.0.1', resolve));
    const p = (f: string) => join(dir, f);
    t = await makeTestContext({
      env: {
        CONFIG_TYPE: 'GRPC_XDS_SOTW',
        CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${xds.port}`,
        CONFIG_GRPC_XDS_NODE_ID: 'wiring',
        GRPC_SERVER_USE_TLS: 'true',
        GRPC_SERVER_TLS_CERT: p('server.crt'),
        GRPC_SERVER_TLS_KEY: p('server.key'),
        GRPC_CLIENT_TLS_CACERT: p('ca-ca.crt'),
        GRPC_CLIENT_TLS_SAN: 'envoy.test',
        USE_PULLMETRICS: 'true',
        USE_PUSHSTATS: 'true',
        PULLMETRICS_ADDR: '127.0.0.1:0',
        STATSD_HOST: '127.0.0.1',
        STATSD_PORT: String(udp.address().port),
        STATS_FLUSH_INTERVAL: '100ms',
        TRACING_ENABLED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(otlp.address() as AddressInfo).port}`,
        WINDOW_ALGORITHM: 'fixed',
        MEMORY_STORE_MAX_KEYS: '1024',
      },
    });
    // The clock stands still: no window edge falls between the hits a test counts.
    service = await startRatelimit(t.ctx, { clock: new ManualClock(Date.now()) });
    const root = loadProto([PROTO_FILES.rls]);
    grpc = createUnaryClient(
      service.addresses.grpc!,
      serviceDefinition(root, RLS_SERVICE),
      'ShouldRateLimit',
      {
        tls: {
          caFile: p('ca-ca.crt'),
          serverName: 'localhost',
          certFile: p('client.crt'),
          keyFile: p('client.key'),
        },
      },
    );
  });

  after(async () => {
    grpc?.close();
    await service?.close();
    await t?.cleanup();
    await xds.stop();
    udp.close();
    await new Promise<void>((resolve) => otlp.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it('decides with the management server configuration over mutual TLS', async () => {
    const request = { domain: 'edge', descriptors: [{ entries: [{ key: 'user', value: 'u1' }] }] };
    assert.equal((await grpc.call(request)).statuses?.[0]?.limitRemaining, 1);
    await grpc.call(request);
    assert.equal((await grpc.call(request)).overallCode, 2);
    const json = await fetch(`${service.addresses.http}/json`, {
      method: 'POST',
      body: JSON.stringify(request),
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    assert.equal(json.status, 429);
    await json.arrayBuffer();
  });

  it('shows the decisions on the pull endpoint and in statsd lines', async () => {
    const text = await (await fetch(service.addresses.metrics!)).text();
    assert.match(text, /^ratelimit_service_rate_limit_total_hits\{domain="edge",key1="user"\} 4$/m);
    assert.match(text, /^ratelimit_service_rate_limit_over_limit\{domain="edge",key1="user"\} 2$/m);
    assert.match(text, /^ratelimit_service_total_requests\{grpc_method="ShouldRateLimit"\} 3$/m);
    assert.match(text, /^ratelimit_service_config_load_success 1$/m);
    assert.match(text, /^ratelimit_service_response_time_seconds_count\{grpc_method="ShouldRateLimit"\} 3$/m);
    // How long the calls took depends on the machine, so the buckets are checked for shape:
    // cumulative counts that never fall, ending in +Inf with every call, and a 1 s bound.
    const buckets = [
      ...text.matchAll(
        /^ratelimit_service_response_time_seconds_bucket\{grpc_method="ShouldRateLimit",le="([^"]+)"\} (\d+)$/gm,
      ),
    ].map((m) => [m[1]!, Number(m[2])] as const);
    assert.ok(
      buckets.some(([le]) => le === '1'),
      text,
    );
    assert.deepEqual(buckets[buckets.length - 1], ['+Inf', 3]);
    for (let i = 1; i < buckets.length; i++) assert.ok(buckets[i]![1] >= buckets[i - 1]![1], text);
    // Flushes carry increments, so the lines add up to the total.
    const pushed = () =>
      lines
        .filter((l) => l.startsWith('ratelimit.service.rate_limit.edge.user.total_hits:'))
        .reduce((n, l) => n + Number(/:(\d+)\|c$/.exec(l)?.[1] ?? 0), 0);
    await waitUntil('4 hits in statsd lines', () => pushed() >= 4, { intervalMs: 50 });
    assert.equal(pushed(), 4);
  });

  it('exports a span per decision with the domain, the /json one under the caller trace', async () => {
    await service.close();
    const all = spans.join('\n');
    assert.equal((all.match(/"key":"domain","value":\{"stringValue":"edge"\}/g) ?? []).length, 4);
    assert.match(all, /"traceId":"0af7651916cd43dd8448eb211c80319c"/);
    assert.match(all, /"name":"json"/);
  });
});
