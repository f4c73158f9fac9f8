// Tracing: decision spans exported to OTLP receivers written here — an HTTP one (node:http
// capturing POST /v1/traces) and a gRPC one (the collector's TraceService, declared with a
// trimmed copy of its message numbers) — with the domain attribute, the resource attributes,
// parent propagation, errors, sampling and the settings.

import { strict as assert } from 'node:assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import protobuf from 'protobufjs';
import { serviceDefinition, startGrpcServer, type RunningGrpcServer } from '../../../src/core/grpc/index.js';
import { EnvReader, SettingsError } from '../../../src/core/settings/index.js';
import { loadTracingSettings } from '../../../src/ratelimit/settings/observability.js';
import { createTracer, parentContext } from '../../../src/ratelimit/tracing.js';
import { trace } from '@opentelemetry/api';

interface KeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number };
}
interface OtlpSpan {
  traceId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: KeyValue[];
  status?: { code?: number; message?: string };
}
interface ExportRequest {
  resourceSpans: { resource: { attributes: KeyValue[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

function attr(list: KeyValue[], key: string): string | number | undefined {
  const v = list.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined);
}

function spansOf(requests: ExportRequest[]): { span: OtlpSpan; resource: KeyValue[] }[] {
  return requests.flatMap((r) =>
    r.resourceSpans.flatMap((rs) =>
      rs.scopeSpans.flatMap((ss) => ss.spans.map((span) => ({ span, resource: rs.resource.attributes }))),
    ),
  );
}

describe('tracing over OTLP/HTTP', () => {
  let server: Server;
  let url: string;
  const received: ExportRequest[] = [];
  const contentTypes: string[] = [];

  before(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/traces') {
          contentTypes.push(String(req.headers['content-type']));
          received.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else res.writeHead(404).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('exports one span per decision with the domain and the service resource', async () => {
    received.length = 0;
    const settings = loadTracingSettings(
      new EnvReader({
        TRACING_ENABLED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: url,
        TRACING_SERVICE_NAMESPACE: 'edge',
        TRACING_SERVICE_INSTANCE_ID: 'rl-7',
      }),
    );
    const tracer = createTracer(settings);
    try {
      assert.equal(tracer.enabled, true);
      const sync = tracer.decide({ method: 'ShouldRateLimit', domain: 'payments', descriptors: 2 }, () => ({
        overallCode: 2,
      }));
      assert.deepEqual(sync, { overallCode: 2 }, 'a synchronous decision stays synchronous');
      const parent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      const asyncResult = await tracer.decide(
        { method: 'json', domain: 'search', descriptors: 1, traceparent: parent },
        async () => ({ overallCode: 1 }),
      );
      assert.equal(asyncResult.overallCode, 1);
      assert.throws(
        () =>
          tracer.decide({ method: 'ShouldRateLimit', domain: 'broken', descriptors: 0 }, () => {
            throw new Error('rate limit descriptor list must not be empty');
          }),
        /must not be empty/,
      );
      await tracer.flush();
    } finally {
      await tracer.close();
    }
    assert.ok(contentTypes.every((c) => c.startsWith('application/json')));
    const spans = spansOf(received);
    assert.equal(spans.length, 3);
    const byDomain = new Map(spans.map((s) => [attr(s.span.attributes, 'domain'), s]));
    const payments = byDomain.get('payments')!;
    assert.equal(payments.span.name, 'ShouldRateLimit');
    assert.equal(payments.span.kind, 2, 'SPAN_KIND_SERVER');
    assert.equal(attr(payments.span.attributes, 'ratelimit.overall_code'), 'OVER_LIMIT');
    assert.equal(attr(payments.span.attributes, 'ratelimit.descriptors'), 2);
    assert.equal(attr(payments.resource, 'service.name'), 'RateLimit');
    assert.equal(attr(payments.resource, 'service.namespace'), 'edge');
    assert.equal(attr(payments.resource, 'service.instance.id'), 'rl-7');
    const search = byDomain.get('search')!;
    assert.equal(search.span.traceId, '0af7651916cd43dd8448eb211c80319c', 'continues the caller trace');
    assert.equal(search.span.parentSpanId, 'b7ad6b7169203331');
    const broken = byDomain.get('broken')!;
    assert.equal(broken.span.status?.code, 2, 'STATUS_CODE_ERROR');
    assert.equal(broken.span.status?.message, 'rate limit descriptor list must not be empty');
  });

  it('samples nothing at TRACING_SAMPLING_RATE=0 and exports nothing when disabled', async () => {
    received.length = 0;
    const zero = createTracer(
      loadTracingSettings(
        new EnvReader({
          TRACING_ENABLED: 'true',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${url}/v1/traces`,
          TRACING_SAMPLING_RATE: '0',
        }),
      ),
    );
    const off = createTracer(
      loadTracingSettings(new EnvReader({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${url}/v1/traces` })),
    );
    assert.equal(off.enabled, false);
    for (let i = 0; i < 20; i++) {
      zero.decide({ method: 'ShouldRateLimit', domain: 'z', descriptors: 1 }, () => ({ overallCode: 1 }));
      off.decide({ method: 'ShouldRateLimit', domain: 'o', descriptors: 1 }, () => ({ overallCode: 1 }));
    }
    // A sampled caller is still followed at rate 0 (parent-based sampling).
    zero.decide(
      {
        method: 'ShouldRateLimit',
        domain: 'parented',
        descriptors: 1,
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      },
      () => ({ overallCode: 1 }),
    );
    await zero.flush();
    await off.flush();
    await zero.close();
    await off.close();
    const domains = spansOf(received).map((s) => attr(s.span.attributes, 'domain'));
    assert.deepEqual(domains, ['parented']);
  });
});

// The collector's trace service, trimmed to the fields this test reads (numbers as published in
// opentelemetry-proto: collector/trace/v1 and trace/v1, common/v1, resource/v1).
const OTLP_PROTO = `
syntax = "proto3";
package opentelemetry.proto.collector.trace.v1;
message AnyValue { string string_value = 1; int64 int_value = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message Span { bytes trace_id = 1; bytes span_id = 2; bytes parent_span_id = 4; string name = 5; int32 kind = 6; repeated KeyValue attributes = 9; }
message ScopeSpans { repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ExportTraceServiceResponse {}
service TraceService { rpc Export(ExportTraceServiceRequest) returns (ExportTraceServiceResponse); }
`;

describe('tracing over OTLP/gRPC', () => {
  let server: RunningGrpcServer;
  const received: unknown[] = [];

  before(async () => {
    const root = protobuf.parse(OTLP_PROTO, { keepCase: false }).root;
    const definition = serviceDefinition(root, 'opentelemetry.proto.collector.trace.v1.TraceService');
    server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [
        { definition, implementation: { Export: (request: unknown) => (received.push(request), {}) } },
      ],
    });
  });
  after(async () => {
    await server.close(100);
  });

  it('exports decision spans with TRACING_EXPORTER_PROTOCOL=grpc', async () => {
    const tracer = createTracer(
      loadTracingSettings(
        new EnvReader({
          TRACING_ENABLED: 'true',
          TRACING_EXPORTER_PROTOCOL: 'grpc',
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://${server.address}`,
        }),
      ),
    );
    tracer.decide({ method: 'ShouldRateLimit', domain: 'grpc-domain', descriptors: 1 }, () => ({
      overallCode: 1,
    }));
    await tracer.flush();
    await tracer.close();
    const requests = received as {
      resourceSpans: {
        resource: { attributes: KeyValue[] };
        scopeSpans: { spans: (OtlpSpan & { traceId: Buffer })[] }[];
      }[];
    }[];
    const spans = requests.flatMap((r) =>
      r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((s) => s.spans)),
    );
    assert.equal(spans.length, 1);
    assert.equal(spans[0]!.name, 'ShouldRateLimit');
    assert.equal(attr(spans[0]!.attributes, 'domain'), 'grpc-domain');
    assert.equal(attr(requests[0]!.resourceSpans[0]!.resource.attributes, 'service.name'), 'RateLimit');
  });
});

describe('tracing settings', () => {
  const load = (env: Record<string, string>) => loadTracingSettings(new EnvReader(env));

  it('has the spec defaults, with a random version 4 UUID as instance id', () => {
    const s = load({});
    assert.equal(s.enabled, false);
    assert.equal(s.protocol, 'http');
    assert.equal(s.serviceName, 'RateLimit');
    assert.equal(s.serviceNamespace, '');
    assert.equal(s.samplingRate, 1);
    assert.match(
      s.serviceInstanceId,
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    assert.notEqual(load({}).serviceInstanceId, s.serviceInstanceId);
    assert.equal(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }).endpoint, 'http://c:4318/v1/traces');
    assert.equal(
      load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', TRACING_EXPORTER_PROTOCOL: 'grpc' }).endpoint,
      'http://c:4317',
    );
    assert.deepEqual(load({ OTEL_EXPORTER_OTLP_HEADERS: 'api-key=s%20t,x=1' }).headers, {
      'api-key': 's t',
      x: '1',
    });
  });

  it('refuses bad values with the variable named', () => {
    for (const env of [
      { TRACING_ENABLED: 'yes' },
      { TRACING_ENABLED: '1' },
      { TRACING_EXPORTER_PROTOCOL: 'zipkin' },
      { TRACING_SAMPLING_RATE: '1.5' },
      { TRACING_SAMPLING_RATE: '-0.1' },
      { TRACING_SAMPLING_RATE: 'half' },
      { OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' },
      { OTEL_EXPORTER_OTLP_HEADERS: 'novalue' },
    ]) {
      assert.throws(() => load(env), SettingsError, JSON.stringify(env));
    }
  });

  it('ignores a malformed traceparent (starts a new trace)', () => {
    for (const bad of [
      'garbage',
      '00-00000000000000000000000000000000-b7ad6b7169203331-01',
      'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    ]) {
      assert.equal(trace.getSpanContext(parentContext(bad)), undefined, bad);
    }
    assert.equal(
      trace.getSpanContext(parentContext('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'))?.spanId,
      'b7ad6b7169203331',
    );
  });
});
