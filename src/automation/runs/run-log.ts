// Run lines for the operator's log (docs/deployment.md, "Health and monitoring"): one info line
// when a run starts executing and one when its end is stored, beside the metrics the same
// observer feeds. Ids are fine in a log line (never in a metric label); inputs and outputs are
// never logged.

import type { Logger } from '../../core/log.js';
import type { RunObserver } from './metrics.js';
import type { RunRecord } from './types.js';

function fields(run: RunRecord): Record<string, unknown> {
  return {
    run: run.id,
    tenant: run.tenant,
    automation: run.slug,
    version: run.version,
    trigger: run.trigger.type,
  };
}

/** `observer`, and a log line for each run that starts, ends or is taken over. */
export function loggedRuns(observer: RunObserver, log: Logger): RunObserver {
  return {
    started(run) {
      observer.started(run);
      log.info(
        { ...fields(run), queuedMs: run.startedAt === null ? null : run.startedAt - run.createdAt },
        'run started',
      );
    },
    ended(run) {
      observer.ended(run);
      const from = run.startedAt ?? run.createdAt;
      log.info(
        {
          ...fields(run),
          status: run.status,
          durationMs: run.completedAt === null ? null : run.completedAt - from,
          ...(run.errorCode ? { errorCode: run.errorCode } : {}),
        },
        'run ended',
      );
    },
    takenOver(run) {
      observer.takenOver(run);
      log.info(fields(run), 'run taken over from a node whose lease expired');
    },
  };
}
