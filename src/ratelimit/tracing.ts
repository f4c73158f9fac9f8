// OpenTelemetry tracing of decisions: one span per ShouldRateLimit call (gRPC or /json) carrying
// the domain, exported over OTLP (HTTP/JSON or gRPC) in batches. The provider is kept local, not
// registered as the process-global one, so the three services in one process do not share or
// fight over global tracing state. With TRACING_ENABLED=false the decision runs without any
// tracing code in its path.
//
// A caller's W3C `traceparent` header (Envoy sends one when it traces) makes the decision span a
// child of the proxy's span; the sampler follows the parent's decision and otherwise samples
// TRACING_SAMPLING_RATE of the root spans.

import {
  context,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  TraceFlags,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as HttpExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import {
  ATTR_SERVICE_INSTANCE_ID,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_NAMESPACE,
} from '@opentelemetry/semantic-conventions';
import type { TracingSettings } from './settings/index.js';

export const DOMAIN_ATTRIBUTE = 'domain';
export const DESCRIPTORS_ATTRIBUTE = 'ratelimit.descriptors';
export const OVERALL_CODE_ATTRIBUTE = 'ratelimit.overall_code';

const CODE_NAMES: Record<number, string> = { 0: 'UNKNOWN', 1: 'OK', 2: 'OVER_LIMIT' };

export interface DecisionInfo {
  /** `ShouldRateLimit` for gRPC, `json` for the HTTP endpoint. */
  method: string;
  domain: string;
  descriptors: number;
  /** The caller's W3C traceparent header, if any. */
  traceparent?: string | undefined;
}

export interface Decided {
  overallCode: number;
}

export interface DecisionTracer {
  readonly enabled: boolean;
  /** Runs one decision inside a span; sync results stay sync. */
  decide<T extends Decided>(info: DecisionInfo, run: () => Promise<T>): Promise<T>;
  decide<T extends Decided>(info: DecisionInfo, run: () => T): T;
  decide<T extends Decided>(info: DecisionInfo, run: () => T | Promise<T>): T | Promise<T>;
  /** Exports the spans still buffered. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

class NoopTracer implements DecisionTracer {
  readonly enabled = false;
  decide<T extends Decided>(info: DecisionInfo, run: () => Promise<T>): Promise<T>;
  decide<T extends Decided>(info: DecisionInfo, run: () => T): T;
  decide<T extends Decided>(_info: DecisionInfo, run: () => T | Promise<T>): T | Promise<T> {
    return run();
  }
  async flush(): Promise<void> {}
  async close(): Promise<void> {}
}

const NOOP: DecisionTracer = new NoopTracer();

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The parent context of a W3C traceparent header; the root context when absent or malformed. */
export function parentContext(traceparent: string | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  const m = TRACEPARENT.exec(traceparent.trim().toLowerCase());
  if (!m || m[1] === 'ff' || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: m[2]!,
    spanId: m[3]!,
    traceFlags: parseInt(m[4]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
  });
}

function exporterFor(settings: TracingSettings): SpanExporter {
  const url = settings.endpoint;
  if (settings.protocol === 'grpc') return new GrpcExporter(url !== undefined ? { url } : {});
  return new HttpExporter({ ...(url !== undefined ? { url } : {}), headers: { ...settings.headers } });
}

class OtelDecisionTracer implements DecisionTracer {
  readonly enabled = true;
  private readonly tracer: Tracer;

  constructor(private readonly provider: NodeTracerProvider) {
    this.tracer = provider.getTracer('sluice-ratelimit');
  }

  decide<T extends Decided>(info: DecisionInfo, run: () => Promise<T>): Promise<T>;
  decide<T extends Decided>(info: DecisionInfo, run: () => T): T;
  decide<T extends Decided>(info: DecisionInfo, run: () => T | Promise<T>): T | Promise<T> {
    const span = this.tracer.startSpan(
      info.method,
      {
        kind: SpanKind.SERVER,
        attributes: { [DOMAIN_ATTRIBUTE]: info.domain, [DESCRIPTORS_ATTRIBUTE]: info.descriptors },
      },
      parentContext(info.traceparent),
    );
    let result: T | Promise<T>;
    try {
      // The span is active while the decision runs, so a store client's spans become children.
      result = context.with(trace.setSpan(context.active(), span), run);
    } catch (err) {
      fail(span, err);
      throw err;
    }
    if (result instanceof Promise) {
      return result.then(
        (value) => succeed(span, value),
        (err: unknown) => {
          fail(span, err);
          throw err;
        },
      );
    }
    return succeed(span, result);
  }

  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  close(): Promise<void> {
    return this.provider.shutdown();
  }
}

function succeed<T extends Decided>(span: Span, value: T): T {
  span.setAttribute(OVERALL_CODE_ATTRIBUTE, CODE_NAMES[value.overallCode] ?? String(value.overallCode));
  span.end();
  return value;
}

function fail(span: Span, err: unknown): void {
  const error = err instanceof Error ? err : new Error(String(err));
  span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
  span.end();
}

/** The tracer for TRACING_* settings; a no-op when tracing is disabled. */
export function createTracer(settings: TracingSettings, exporter?: SpanExporter): DecisionTracer {
  if (!settings.enabled) return NOOP;
  const attributes: Record<string, string> = {
    [ATTR_SERVICE_NAME]: settings.serviceName,
    [ATTR_SERVICE_INSTANCE_ID]: settings.serviceInstanceId,
  };
  if (settings.serviceNamespace !== '') attributes[ATTR_SERVICE_NAMESPACE] = settings.serviceNamespace;
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes(attributes),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRate) }),
    spanProcessors: [new BatchSpanProcessor(exporter ?? exporterFor(settings))],
  });
  return new OtelDecisionTracer(provider);
}
