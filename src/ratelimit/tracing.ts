// OpenTelemetry tracing of decisions: one span per ShouldRateLimit call (gRPC or /json) carrying
// the domain, exported over OTLP (HTTP/JSON or gRPC) in batches by the shared provider of
// src/core/tracing. The provider is kept local, not registered as the process-global one, so the
// three services in one process do not share or fight over global tracing state. With TRACING_ENABLED=false the decision runs without any
// tracing code in its path.
//
// A caller's W3C `traceparent` header (Envoy sends one when it traces) makes the decision span a
// child of the proxy's span; the sampler follows the parent's decision and otherwise samples
// TRACING_SAMPLING_RATE of the root spans.

import { context, SpanKind, SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { createTracerProvider, parentContext, type TracingSettings } from '../core/tracing/index.js';

export { parentContext };

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
  return new OtelDecisionTracer(createTracerProvider(settings, exporter));
}
