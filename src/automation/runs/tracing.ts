// One trace per run: the start request's span (on the node that admitted the run) is the root
// of the run's own spans, or a child of the caller's W3C `traceparent`. Its context is stored in
// the run record as a traceparent string, so the node that claims the run, this one or another
// on PostgreSQL, starts its execution span as that span's child; the run's steps are child spans
// of the execution, and the worker's events are events on it. The run's `debug.traceId` is the
// trace's id. Spans carry ids, names, statuses, counts and error codes only: never the run's
// input, output, step output or event metadata (docs/security.md).

import { NO_TRACING, traceIdOf, type TraceSpan, type Tracing } from '../../core/tracing/index.js';
import type { StepReport } from '../executor/protocol.js';
import type { RunRecord } from './types.js';

export { NO_TRACING, type Tracing };

/** The trace id the API shows for a run: its trace's when it was traced, else its id. */
export function runTraceId(run: RunRecord): string {
  return traceIdOf(run.traceparent) ?? run.id;
}

export class RunTracing {
  constructor(
    private readonly tracing: Tracing,
    private readonly nodeId: () => string,
  ) {}

  /** The start request's span, continuing the caller's traceparent; undefined with tracing off. */
  startRequest(traceparent: string | undefined, target: string): TraceSpan | undefined {
    if (!this.tracing.enabled) return undefined;
    return this.tracing.startSpan('run.start', {
      kind: 'server',
      attributes: { 'automation.target': target.slice(0, 256), 'automation.node': this.nodeId() },
      parent: traceparent,
      startTime: undefined,
    });
  }

  /** Names the admitted run on its start span. */
  admitted(span: TraceSpan | undefined, record: RunRecord): void {
    span?.setAttributes(runAttributes(record));
    span?.addEvent('run.queued', {}, undefined);
  }

  /** The execution span of a run claimed by this node, a child of its start span. */
  execution(record: RunRecord, attempt: number, takeover: boolean): TraceSpan | undefined {
    if (!this.tracing.enabled) return undefined;
    return this.tracing.startSpan('run.execute', {
      kind: 'consumer',
      attributes: {
        ...runAttributes(record),
        'automation.node': this.nodeId(),
        'automation.attempt': attempt,
        'automation.takeover': takeover,
      },
      parent: record.traceparent,
      startTime: undefined,
    });
  }

  /** A worker event (its type only) on the execution span. */
  event(span: TraceSpan | undefined, type: string, at: string): void {
    span?.addEvent(type.slice(0, 128), {}, timeOf(at));
  }

  /** A finished step as a child span of the execution, with its own start and end. */
  step(span: TraceSpan | undefined, step: StepReport): void {
    if (!span) return;
    const child = this.tracing.startSpan(`step ${step.name.slice(0, 128)}`, {
      kind: 'internal',
      attributes: {
        'automation.step.name': step.name.slice(0, 256),
        'automation.step.index': step.index,
        'automation.step.status': step.status,
        'automation.step.duration_ms': step.durationMs,
      },
      parent: span,
      startTime: timeOf(step.startedAt),
    });
    if (step.status === 'failed') child.fail(new Error(`step ${step.name} failed`));
    child.end(timeOf(step.completedAt));
  }

  /** Ends the execution span with the run's end as recorded. */
  ended(span: TraceSpan | undefined, record: RunRecord): void {
    if (!span) return;
    span.setAttributes({ 'automation.status': record.status });
    if (record.errorCode) span.setAttributes({ 'automation.error_code': record.errorCode });
    if (record.status === 'failed') span.fail(new Error(record.errorCode ?? 'failed'));
    span.end(undefined);
  }

  /** Ends the execution span of a run this node gave up (another node runs it). */
  abandoned(span: TraceSpan | undefined): void {
    span?.setAttributes({ 'automation.abandoned': true });
    span?.end(undefined);
  }
}

function runAttributes(record: RunRecord): Record<string, string> {
  return {
    'automation.run_id': record.id,
    'automation.type': record.type,
    'automation.slug': record.slug,
    'automation.version': record.version,
  };
}

function timeOf(iso: string): number | undefined {
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : undefined;
}
