// The one place where what happens to a run is recorded: its events (each with the next seq, its
// time never before the last one's) and the changes of its record (status, timing, files). Every
// part of the run service goes through here; the end of a run is built here too, and written by
// the queue with the done state (completion.ts), or here for a run that ends without being
// claimed (a queued run cancelled).

import { track, type ActiveRun } from './engine.js';
import type { RunStore } from './store.js';
import type { RunEvent, RunRecord } from './types.js';

export type EventFields = Omit<RunEvent, 'seq' | 'type' | 'timestamp'>;

export class RunRecorder {
  constructor(private readonly store: RunStore) {}

  /** Appends the run's next event (a tracked write). */
  event(active: ActiveRun, type: string, extra: EventFields = {}, at?: string): void {
    track(active, this.store.appendEvent(active.record.id, this.nextEvent(active, type, extra, at)));
  }

  /** Replaces the live record and writes it through (a tracked write). */
  change(active: ActiveRun, next: RunRecord): void {
    const previous = active.record;
    active.record = next;
    track(active, this.store.update(previous, next));
  }

  /** The run's next event (its seq, its time never before the last one's), not yet written. */
  nextEvent(active: ActiveRun, type: string, extra: EventFields = {}, at?: string): RunEvent {
    // Worker and main-thread times interleave; the timeline never goes backwards.
    const ms = Math.max(at !== undefined ? Date.parse(at) : Date.now(), active.lastEventMs);
    active.lastEventMs = ms;
    return { seq: ++active.seq, type, timestamp: new Date(ms).toISOString(), ...extra };
  }

  /** The terminal event of a run ending as `next`, not yet written. */
  endEvent(active: ActiveRun, next: RunRecord): RunEvent {
    const type =
      next.status === 'completed'
        ? 'run.completed'
        : next.status === 'cancelled'
          ? 'run.cancelled'
          : 'run.failed';
    const extra: EventFields = { status: next.status };
    if (next.error) extra.message = next.error;
    if (next.errorCode) extra.metadata = { code: next.errorCode };
    return this.nextEvent(active, type, extra);
  }

  /** The end of a run no node claimed (taken out of the queue): its event, then its record. */
  async endUnclaimed(run: RunRecord, next: RunRecord): Promise<void> {
    const seq = (await this.store.lastEventSeq(run.id)) + 1;
    await this.store.appendEvent(run.id, {
      seq,
      type: 'run.cancelled',
      timestamp: new Date(next.completedAt ?? Date.now()).toISOString(),
      status: 'cancelled',
      message: next.error ?? '',
      metadata: { code: next.errorCode ?? null },
    });
    await this.store.update(run, next);
  }
}
