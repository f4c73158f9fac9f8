// A registered schedule and the port of the stores that keep them (store.ts: LMDB, one node;
// pg-store.ts: PostgreSQL, shared by every node). A schedule is one per automation, registered
// by the sync of a release whose manifest names `triggers.cron` and removed by the sync of one
// that does not (registration.ts); the scheduler (scheduler.ts) claims its ticks.

import type { AutomationType } from '../../registry/manifest.js';
import type { RunDetail, RunEvent, RunRecord } from '../../runs/types.js';
import type { CronTrigger } from './trigger.js';

export interface ScheduleRecord {
  automationId: string;
  type: AutomationType;
  slug: string;
  /** The tenant of the key that synced the release: scheduled runs are this tenant's. */
  tenant: string;
  /** The release whose manifest named the schedule. */
  version: string;
  commit: string;
  trigger: CronTrigger;
  /** Epoch ms of the next tick to claim; null when the expression has no further tick. */
  nextFireAt: number | null;
  lastFireAt: number | null;
  lastRunId: string | null;
  /** Ticks that started a run, ticks skipped (overlap, or the run could not start), ticks dropped by catch-up. */
  fired: number;
  skipped: number;
  missed: number;
  lastSkippedAt: number | null;
  lastSkipReason: string | null;
  registeredAt: number;
}

/** What claiming a tick did: written with the claim (one commit on PostgreSQL). */
export interface TickOutcome {
  /** The tick the claim fired or skipped (a catch-up may move past older ticks: `missed`). */
  tick: number;
  nextFireAt: number | null;
  /** Older ticks passed over (catch-up). */
  missed: number;
  fired?: { runId: string };
  skipped?: { reason: string };
}

export interface TickClaim {
  /** The schedule as stored when claimed (locked until the claim ends, on PostgreSQL). */
  schedule: ScheduleRecord;
  /** The run is still queued or executing. */
  unfinished(runId: string): Promise<boolean>;
  /** Stores and queues the scheduled run inside the claim. */
  createQueued(run: RunRecord, detail: RunDetail, events: RunEvent[]): Promise<void>;
}

/** How a store queues a run where it cannot do so in its own commit (LMDB). */
export interface ScheduleQueue {
  createQueued(run: RunRecord, detail: RunDetail, events: RunEvent[]): Promise<void>;
}

export interface ScheduleStore {
  get(automationId: string): Promise<ScheduleRecord | undefined>;
  /**
   * Registers, replaces or removes the automation's schedule: `change` gets the stored one (read
   * under a lock, so no claim commits in between) and returns the new record, null to remove
   * it, or undefined to leave it.
   */
  update(
    automationId: string,
    change: (existing: ScheduleRecord | undefined) => ScheduleRecord | null | undefined,
  ): Promise<ScheduleRecord | null | undefined>;
  /** Every schedule (of `tenant` when given), by automation id. */
  list(tenant?: string): Promise<ScheduleRecord[]>;
  /** Up to `limit` schedules with a tick at or before `now`, earliest first (a hint: claim decides). */
  due(now: number, limit: number): Promise<ScheduleRecord[]>;
  /**
   * Claims the schedule's tick at `fireAt` and runs `fn` holding it; the outcome `fn` returns is
   * written with the claim (on PostgreSQL: the row is taken FOR UPDATE SKIP LOCKED and the run
   * `fn` queues is in the same transaction). Undefined when the tick is not there to claim:
   * another node holds or fired it, or a sync replaced the schedule. A throwing `fn` writes
   * nothing and the tick stays due.
   */
  claim(
    automationId: string,
    fireAt: number,
    queue: ScheduleQueue,
    fn: (claim: TickClaim) => Promise<TickOutcome>,
  ): Promise<TickOutcome | undefined>;
}

/** The record after a claim's outcome. */
export function advanced(s: ScheduleRecord, o: TickOutcome): ScheduleRecord {
  return {
    ...s,
    nextFireAt: o.nextFireAt,
    missed: s.missed + o.missed,
    ...(o.fired ? { fired: s.fired + 1, lastFireAt: o.tick, lastRunId: o.fired.runId } : {}),
    ...(o.skipped ? { skipped: s.skipped + 1, lastSkippedAt: o.tick, lastSkipReason: o.skipped.reason } : {}),
  };
}
