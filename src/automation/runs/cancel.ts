// Cancelling a run from this node. A run live here is stopped here: one not started yet ends at
// once, one in flight is asked to stop (its worker's signal aborts) and ends `cancelled` when it
// does. Any other run is cancelled through the queue: still queued, it leaves the queue and ends
// here; claimed by another node, that node is told and records the end.

import { RunFailure } from '../executor/failure.js';
import { notFound } from '../errors.js';
import type { Completion } from './completion.js';
import type { Engine } from './engine.js';
import type { RunRecorder } from './recorder.js';
import { QUEUED, TERMINAL, type RunRecord, type RunStatus } from './types.js';
import type { Waiters } from './waiters.js';

export interface CancelResult {
  run: RunRecord;
  state: 'cancelled' | 'requested' | 'already_terminal';
  wasStatus: RunStatus;
}

export class Cancels {
  constructor(
    private readonly e: Engine,
    private readonly recorder: RunRecorder,
    private readonly completion: Completion,
    private readonly waiters: Waiters,
  ) {}

  async cancel(id: string): Promise<CancelResult> {
    const active = this.e.active.get(id);
    if (!active) {
      const run = await this.e.store.get(id);
      if (!run) throw notFound(`run ${JSON.stringify(id)}`, 'id');
      if (!TERMINAL.has(run.status)) return this.cancelThroughQueue(run);
      return { run, state: 'already_terminal', wasStatus: run.status };
    }
    const wasStatus = active.record.status;
    if (TERMINAL.has(wasStatus)) return { run: active.record, state: 'already_terminal', wasStatus };
    if (QUEUED.has(wasStatus)) {
      // Not started: it ends now. If the worker was just picking it up, the pool's abort
      // terminates that worker, so nothing of this run keeps going.
      active.cancelledBeforeSubmit = true;
      // The request time is part of the run's timing whether or not it had started.
      active.record = { ...active.record, cancelRequestedAt: Date.now() };
      active.handle?.cancel('cancelled while queued');
      const done = this.waiters.waitFor(id, 0);
      await this.completion.finish(active, {
        kind: 'cancelled',
        error: new RunFailure('cancelled', 'cancelled before it started'),
      });
      return { run: await done, state: 'cancelled', wasStatus };
    }
    if (active.record.cancelRequestedAt === null) {
      this.recorder.change(active, { ...active.record, cancelRequestedAt: Date.now() });
      this.recorder.event(active, 'run.cancel_requested', { status: active.record.status });
      active.handle?.cancel('cancel requested');
    }
    return { run: active.record, state: 'requested', wasStatus };
  }

  /** A run this node does not hold, cancelled through the queue. */
  private async cancelThroughQueue(run: RunRecord): Promise<CancelResult> {
    const wasStatus = run.status;
    const outcome = await this.e.queue.cancel(run.id);
    if (outcome.state === 'finished') {
      const stored = await this.waiters.storedFinal(run.id, run);
      return { run: stored, state: 'already_terminal', wasStatus: stored.status };
    }
    if (outcome.state === 'unknown') throw notFound(`run ${JSON.stringify(run.id)}`, 'id');
    const now = Date.now();
    if (outcome.state === 'signalled')
      // The owning node stops it and records the end.
      return {
        run: { ...run, cancelRequestedAt: run.cancelRequestedAt ?? now },
        state: 'requested',
        wasStatus,
      };
    // Taken out of the queue before any node claimed it: it ends here.
    const next: RunRecord = {
      ...run,
      status: 'cancelled',
      cancelRequestedAt: run.cancelRequestedAt ?? now,
      completedAt: now,
      error: 'cancelled before it started',
      errorCode: 'cancelled',
    };
    await this.recorder.endUnclaimed(run, next);
    this.e.options.observer?.ended(next);
    return { run: next, state: 'cancelled', wasStatus };
  }
}
