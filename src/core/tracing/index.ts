// OpenTelemetry trace export shared by the three services: one tracer provider per service built
// from its TRACING_* settings (settings.ts), exported over OTLP (HTTP/JSON or gRPC) in batches.
// Providers are kept local, not registered as the process-global one, so services in one
// process do not share or fight over global tracing state. With tracing disabled a service gets
// NO_TRACING and its request paths run no tracing code.
//
// Services other than the rate limit service use the small span interface below (TraceSpan), so
// they need no OpenTelemetry import: a span is started from an incoming W3C `traceparent`, from
// another span, or as a new trace, and can hand its own context on as a `traceparent` string (an
// automation run carries it in its record to the node that executes it).

import {
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
import type { TracingSettings } from './settings.js';

export { loadTracingSettings, type TracingSettings } from './settings.js';

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

/** The trace id of a W3C traceparent, undefined when it is not a valid one. */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return trace.getSpanContext(parentContext(traceparent))?.traceId;
}

function exporterFor(settings: TracingSettings): SpanExporter {
  const url = settings.endpoint;
  if (settings.protocol === 'grpc') return new GrpcExporter(url !== undefined ? { url } : {});
  return new HttpExporter({ ...(url !== undefined ? { url } : {}), headers: { ...settings.headers } });
}

/** The tracer provider of enabled TRACING_* settings; `exporter` replaces the OTLP one. */
export function createTracerProvider(settings: TracingSettings, exporter?: SpanExporter): NodeTracerProvider {
  const attributes: Record<string, string> = {
    [ATTR_SERVICE_NAME]: settings.serviceName,
    [ATTR_SERVICE_INSTANCE_ID]: settings.serviceInstanceId,
  };
  if (settings.serviceNamespace !== '') attributes[ATTR_SERVICE_NAMESPACE] = settings.serviceNamespace;
  return new NodeTracerProvider({
    resource: resourceFromAttributes(attributes),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(settings.samplingRate) }),
    spanProcessors: [new BatchSpanProcessor(exporter ?? exporterFor(settings))],
  });
}

export type SpanAttributes = Record<string, string | number | boolean>;
export type TraceSpanKind = 'server' | 'internal' | 'consumer';

export interface StartSpanOptions {
  kind: TraceSpanKind;
  attributes: SpanAttributes;
  /** An incoming W3C traceparent, a span of this service, or undefined for a new trace. */
  parent: string | TraceSpan | undefined;
  /** Epoch milliseconds; now when undefined. */
  startTime: number | undefined;
}

export interface TraceSpan {
  /** 32 hex digits (all zeros for a span of disabled tracing). */
  readonly traceId: string;
  /** This span's context as a W3C traceparent, to make it the parent elsewhere. */
  readonly traceparent: string;
  setAttributes(attributes: SpanAttributes): void;
  addEvent(name: string, attributes: SpanAttributes, time: number | undefined): void;
  /** Marks the span failed with the error's message. */
  fail(error: unknown): void;
  /** Ends the span (at `time`, epoch milliseconds, or now); later calls do nothing. */
  end(time: number | undefined): void;
}

export interface Tracing {
  readonly enabled: boolean;
  startSpan(name: string, options: StartSpanOptions): TraceSpan;
  /** Exports the spans still buffered. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

const KINDS: Record<TraceSpanKind, SpanKind> = {
  server: SpanKind.SERVER,
  internal: SpanKind.INTERNAL,
  consumer: SpanKind.CONSUMER,
};

class OtelSpan implements TraceSpan {
  private ended = false;
  constructor(readonly span: Span) {}

  get traceId(): string {
    return this.span.spanContext().traceId;
  }

  get traceparent(): string {
    // The W3C trace-context header, version 00 (parentContext reads it back).
    const { traceId, spanId, traceFlags } = this.span.spanContext();
    return `00-${traceId}-${spanId}-${(traceFlags & TraceFlags.SAMPLED).toString(16).padStart(2, '0')}`;
  }

  setAttributes(attributes: SpanAttributes): void {
    this.span.setAttributes(attributes);
  }

  addEvent(name: string, attributes: SpanAttributes, time: number | undefined): void {
    this.span.addEvent(name, attributes, time);
  }

  fail(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    this.span.setStatus({ code: SpanStatusCode.ERROR, message });
  }

  end(time: number | undefined): void {
    if (this.ended) return;
    this.ended = true;
    this.span.end(time);
  }
}

class OtelTracing implements Tracing {
  readonly enabled = true;
  private readonly tracer: Tracer;

  constructor(
    private readonly provider: NodeTracerProvider,
    scope: string,
  ) {
    this.tracer = provider.getTracer(scope);
  }

  startSpan(name: string, options: StartSpanOptions): TraceSpan {
    const parent = options.parent;
    const ctx =
      parent instanceof OtelSpan
        ? trace.setSpan(ROOT_CONTEXT, parent.span)
        : typeof parent === 'string'
          ? parentContext(parent)
          : ROOT_CONTEXT;
    const span = this.tracer.startSpan(
      name,
      {
        kind: KINDS[options.kind],
        attributes: options.attributes,
        ...(options.startTime !== undefined ? { startTime: options.startTime } : {}),
      },
      ctx,
    );
    return new OtelSpan(span);
  }

  flush(): Promise<void> {
    return this.provider.forceFlush();
  }

  close(): Promise<void> {
    return this.provider.shutdown();
  }
}

const NOOP_SPAN: TraceSpan = {
  traceId: '00000000000000000000000000000000',
  traceparent: '',
  setAttributes() {},
  addEvent() {},
  fail() {},
  end() {},
};

/** Tracing switched off: spans that record nothing. */
export const NO_TRACING: Tracing = {
  enabled: false,
  startSpan: () => NOOP_SPAN,
  flush: async () => {},
  close: async () => {},
};

/**
 * The tracing of a service for its TRACING_* settings (NO_TRACING when disabled); `scope` names
 * the instrumentation (the tracer name), `exporter` replaces the OTLP one.
 */
export function createTracing(settings: TracingSettings, scope: string, exporter?: SpanExporter): Tracing {
  if (!settings.enabled) return NO_TRACING;
  return new OtelTracing(createTracerProvider(settings, exporter), scope);
}
