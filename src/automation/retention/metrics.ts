// The retention metrics of the automation service (docs/operations.md "Data lifecycle"), fed by
// the runner after each pass. The only label is the kind of thing removed, one of REMOVAL_KINDS.

import type { MetricsRegistry } from '../../core/observe/index.js';
import { REMOVAL_KINDS, type PassResult } from './pass.js';

/** What the runner reports after each pass; `at` is the service clock's time (epoch ms). */
export interface RetentionObserver {
  passed(result: PassResult, at: number): void;
  failed(at: number): void;
}

export function retentionMetrics(metrics: MetricsRegistry): RetentionObserver {
  const name = (suffix: string) => `sluice_automation_retention_${suffix}`;
  const byKind = ['kind'] as const;
  const removed = metrics.counter(
    name('removed_total'),
    'Things retention removed, by kind (blobs: bytes only)',
    byKind,
  );
  const removedBytes = metrics.counter(
    name('removed_bytes_total'),
    'Bytes retention removed, by kind',
    byKind,
  );
  const passes = metrics.counter(name('passes_total'), 'Retention passes this node ran');
  // Several nodes: a node that finds another collecting bounds only its own caches and folders.
  const skipped = metrics.counter(name('skipped_total'), 'Retention passes left to another node');
  const errors = metrics.counter(name('errors_total'), 'Retention passes that failed');
  let lastAt = 0;
  metrics.gauge(
    name('last_pass_timestamp_seconds'),
    'When the last retention pass of this node ended (service clock; 0 before the first)',
    [],
    (gauge) => gauge.set({}, lastAt / 1000),
  );
  // Every kind shows from the first scrape, 0 until something goes.
  for (const kind of REMOVAL_KINDS) {
    removed.inc({ kind }, 0);
    removedBytes.inc({ kind }, 0);
  }
  return {
    passed(result, at) {
      for (const kind of REMOVAL_KINDS) {
        removed.inc({ kind }, result.removed[kind].records);
        removedBytes.inc({ kind }, result.removed[kind].bytes);
      }
      (result.collected ? passes : skipped).inc();
      lastAt = at;
    },
    failed(at) {
      errors.inc();
      lastAt = at;
    },
  };
}
