// The automation service's run metrics (docs/operations.md). The run service tells a RunObserver
// of each status change it records (a run starts executing, a run ends, a run is taken over from
// a node whose lease expired); the gauges (queue depth, busy pool threads, PostgreSQL pool) are
// read at scrape time. Automation slugs are tenant-chosen: the first AUTOMATION_LABELS keep
// their name as a label, later ones count under "_other". No run id is ever a label.

import { boundedLabel, RUN_BUCKETS, type MetricsRegistry } from '../../core/observe/index.js';
import type { RunRecord } from './types.js';

export const AUTOMATION_LABELS = 100;

/** What the run service reports; its hook points are listed in docs/operations.md. */
export interface RunObserver {
  /** The run's status became `running` (its startedAt is set). */
  started(run: RunRecord): void;
  /** The run's end was stored (completed, failed, cancelled). */
  ended(run: RunRecord): void;
  /** This node claimed a run whose previous node's lease expired. */
  takenOver(run: RunRecord): void;
}

export interface RunGauges {
  /** Runs waiting for a pool thread (here, or in the shared queue). */
  queueDepth(): number | Promise<number>;
  poolThreads(): number;
  poolBusy(): number;
  /** PostgreSQL's connection pool, when the service runs on PostgreSQL. */
  pgPool: (() => { total: number; idle: number; waiting: number }) | undefined;
}

export function runMetrics(metrics: MetricsRegistry, gauges: RunGauges): RunObserver {
  const automation = boundedLabel(AUTOMATION_LABELS);
  const started = metrics.counter('sluice_automation_runs_started_total', 'Runs that began executing', [
    'automation',
  ]);
  const ended = metrics.counter('sluice_automation_runs_ended_total', 'Runs that ended, by final status', [
    'automation',
    'status',
  ]);
  const duration = metrics.histogram(
    'sluice_automation_run_duration_seconds',
    'Time from a run starting to execute to its end (from its creation when it never started)',
    ['status'],
    RUN_BUCKETS,
  );
  const queueWait = metrics.histogram(
    'sluice_automation_run_queue_wait_seconds',
    'Time from a run being created to it starting to execute',
    [],
    RUN_BUCKETS,
  );
  const takeovers = metrics.counter(
    'sluice_automation_lease_takeovers_total',
    'Runs this node took over after the lease of the node running them expired',
  );
  metrics.gauge('sluice_automation_run_queue_depth', 'Runs waiting to execute', [], async (g) => {
    g.set({}, await gauges.queueDepth());
  });
  metrics.gauge('sluice_automation_pool_threads', 'Threads of the run pool', [], (g) =>
    g.set({}, gauges.poolThreads()),
  );
  metrics.gauge('sluice_automation_pool_threads_busy', 'Run pool threads executing a run', [], (g) =>
    g.set({}, gauges.poolBusy()),
  );
  const pgPool = gauges.pgPool;
  if (pgPool) {
    metrics.gauge(
      'sluice_automation_pg_pool_connections',
      'PostgreSQL pool connections: total open, idle, and callers waiting for one',
      ['state'],
      (g) => {
        const s = pgPool();
        g.set({ state: 'total' }, s.total);
        g.set({ state: 'idle' }, s.idle);
        g.set({ state: 'waiting' }, s.waiting);
      },
    );
  }
  return {
    started(run) {
      started.inc({ automation: automation(run.slug) });
      if (run.startedAt !== null) queueWait.observe({}, Math.max(0, run.startedAt - run.createdAt) / 1000);
    },
    ended(run) {
      ended.inc({ automation: automation(run.slug), status: run.status });
      const from = run.startedAt ?? run.createdAt;
      const to = run.completedAt ?? Date.now();
      duration.observe({ status: run.status }, Math.max(0, to - from) / 1000);
    },
    takenOver() {
      takeovers.inc();
    },
  };
}
