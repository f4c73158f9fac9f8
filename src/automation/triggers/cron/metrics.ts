// Schedule metrics (docs/operations.md): ticks fired, skipped (by reason: a bounded set of error
// codes and "overlap"), missed by catch-up, and claims that failed and stay due.

import type { MetricsRegistry } from '../../../core/observe/index.js';

export interface CronMetrics {
  fired(): void;
  skipped(reason: string): void;
  missed(n: number): void;
  failed(): void;
}

/** Skip reasons kept as labels; any other code counts as "refused". */
const REASONS = new Set([
  'overlap',
  'too_many_queued_runs',
  'automation_archived',
  'invalid_input',
  'not_found',
]);

export function cronMetrics(metrics: MetricsRegistry): CronMetrics {
  const ticks = metrics.counter(
    'sluice_automation_schedule_ticks_total',
    'Schedule ticks this node claimed, by outcome (fired, skipped, missed) and skip reason',
    ['outcome', 'reason'],
  );
  const failures = metrics.counter(
    'sluice_automation_schedule_claim_failures_total',
    'Schedule tick claims that failed (the tick stays due and is tried again)',
  );
  return {
    fired: () => ticks.inc({ outcome: 'fired', reason: '' }),
    skipped: (reason) => ticks.inc({ outcome: 'skipped', reason: REASONS.has(reason) ? reason : 'refused' }),
    missed: (n) => ticks.inc({ outcome: 'missed', reason: 'catchup' }, n),
    failed: () => failures.inc(),
  };
}
