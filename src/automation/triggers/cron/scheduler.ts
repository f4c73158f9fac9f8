// Fires the ticks of registered schedules (docs/automation.md, "Triggers"). Every node runs a
// scheduler; the store's claim makes each tick one node's (store.ts, pg-store.ts). A node looks
// for due schedules when the earliest tick it knows of comes, at least every AUTOMATION_CRON_POLL
// (a schedule another node registered), and when a sync here registers one.
//
// A claimed tick: when older ticks were missed (the service was down, or every node busy), only
// the latest AUTOMATION_CRON_CATCHUP of them are fired, oldest first, and the rest are counted
// as missed. With overlap "skip" a tick is skipped while the schedule's previous run is still
// queued or executing. Otherwise its run starts with the schedule's input, as the tenant that
// synced the release, trigger `cron`, no user; the run is stored and queued inside the claim.

import type { Logger } from '../../../core/log.js';
import { ApiError } from '../../errors.js';
import type { RunRecord } from '../../runs/types.js';
import type { StartRunRequest } from '../../runs/service.js';
import type { CronMetrics } from './metrics.js';
import type { ScheduleQueue, ScheduleRecord, ScheduleStore, TickClaim, TickOutcome } from './schedule.js';
import { expressionOf } from './trigger.js';

/** Most missed ticks counted one by one in a catch-up (beyond it: counted as this many). */
const MISSED_COUNT_LIMIT = 1000;
/** Schedules claimed per look; a full batch is followed by another look at once. */
const DUE_BATCH = 100;
/** Pause before looking again at a tick another node holds (its claim commits or rolls back). */
const HELD_RETRY_MS = 100;
/** Longest timer (setTimeout's limit is 2^31-1 ms). */
const MAX_SLEEP_MS = 2 ** 31 - 1;

export interface SchedulerOptions {
  store: ScheduleStore;
  queue: ScheduleQueue;
  start(req: StartRunRequest): Promise<RunRecord>;
  catchup: number;
  pollMs: number;
  log: Logger;
  metrics: CronMetrics;
  /** Epoch ms; tests move it. */
  now?: () => number;
}

export interface FiredTick {
  automationId: string;
  outcome: TickOutcome;
}

export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = true;
  private closed = false;
  /** A claim of the last look failed: the next look waits a poll interval, not HELD_RETRY_MS. */
  private failing = false;
  private readonly now: () => number;

  constructor(private readonly o: SchedulerOptions) {
    this.now = o.now ?? Date.now;
  }

  start(): void {
    this.stopped = false;
    this.wake();
  }

  /** Looks for due ticks now (a schedule was registered or changed). */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.running = this.loop().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.wake();
      }
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.closed = true;
    clearTimeout(this.timer);
    await this.running;
  }

  private async loop(): Promise<void> {
    let delay = this.o.pollMs;
    try {
      this.failing = false;
      await this.fireDue();
      const next = (await this.o.store.due(Number.MAX_SAFE_INTEGER, 1))[0]?.nextFireAt;
      // A tick still due here is held by another node's claim: look again shortly, no spinning.
      if (next !== undefined && next !== null) {
        const wait = next - this.now();
        if (wait > 0) delay = Math.min(delay, wait);
        else if (!this.failing) delay = HELD_RETRY_MS;
      }
    } catch (err) {
      this.o.log.warn({ err }, 'schedules could not be read or claimed; trying again');
    }
    if (this.stopped) return;
    this.timer = setTimeout(() => this.wake(), Math.min(delay, MAX_SLEEP_MS));
    this.timer.unref();
  }

  /** Claims every tick due at the clock's now (more than one per schedule after a gap, up to the catch-up). */
  async fireDue(): Promise<FiredTick[]> {
    const fired: FiredTick[] = [];
    for (;;) {
      const now = this.now();
      const due = await this.o.store.due(now, DUE_BATCH);
      let progressed = false;
      for (const s of due) {
        if (this.closed) break;
        const outcome = await this.fire(s, now);
        if (outcome) {
          fired.push({ automationId: s.automationId, outcome });
          progressed = true;
        }
      }
      // Ticks others hold stay due until they commit: no spinning on them.
      if (!progressed || due.length === 0) return fired;
    }
  }

  private async fire(s: ScheduleRecord, now: number): Promise<TickOutcome | undefined> {
    const fireAt = s.nextFireAt;
    if (fireAt === null) return undefined;
    let outcome: TickOutcome | undefined;
    try {
      outcome = await this.o.store.claim(s.automationId, fireAt, this.o.queue, (c) =>
        this.onClaim(c, fireAt, now),
      );
    } catch (err) {
      this.failing = true;
      this.o.metrics.failed();
      this.o.log.warn(
        { err, automation: s.automationId, tick: new Date(fireAt).toISOString() },
        'schedule tick not fired; it stays due',
      );
      return undefined;
    }
    if (outcome) this.report(s, outcome);
    return outcome;
  }

  private async onClaim(c: TickClaim, fireAt: number, now: number): Promise<TickOutcome> {
    const s = c.schedule;
    const expr = expressionOf(s.trigger);
    // The latest `catchup` ticks not after now, from the claimed one on, oldest first.
    const recent = expr
      .latest(this.o.catchup, now)
      .filter((t) => t >= fireAt)
      .reverse();
    const tick = recent[0] ?? fireAt;
    const missed = tick > fireAt ? countBetween(expr.nextTicks(MISSED_COUNT_LIMIT, fireAt), fireAt, tick) : 0;
    const base = { tick, nextFireAt: expr.next(tick), missed };
    if (s.trigger.overlap === 'skip' && s.lastRunId !== null && (await c.unfinished(s.lastRunId)))
      return { ...base, skipped: { reason: 'overlap' } };
    try {
      const run = await this.o.start({
        target: s.automationId,
        input: s.trigger.input,
        principal: { tenant: s.tenant, user: '' },
        trigger: 'cron',
        metadata: { schedule: { tick: new Date(tick).toISOString() } },
        createQueued: (run, detail, events) => c.createQueued(run, detail, events),
      });
      return { ...base, fired: { runId: run.id } };
    } catch (err) {
      // Refused for good (archived, input no longer valid, queue full): the tick is skipped and
      // recorded; anything else (the database down) leaves it due.
      if (err instanceof ApiError && err.status < 500) return { ...base, skipped: { reason: err.code } };
      throw err;
    }
  }

  private report(s: ScheduleRecord, o: TickOutcome): void {
    const fields = {
      automation: s.automationId,
      package: `${s.type}s/${s.slug}`,
      tenant: s.tenant,
      tick: new Date(o.tick).toISOString(),
      next: o.nextFireAt === null ? null : new Date(o.nextFireAt).toISOString(),
    };
    if (o.missed > 0) {
      this.o.metrics.missed(o.missed);
      this.o.log.info({ ...fields, missed: o.missed }, 'schedule caught up: older ticks not fired');
    }
    if (o.fired) {
      this.o.metrics.fired();
      this.o.log.debug({ ...fields, run: o.fired.runId }, 'schedule tick fired');
    } else if (o.skipped) {
      this.o.metrics.skipped(o.skipped.reason);
      this.o.log.info(
        { ...fields, reason: o.skipped.reason, previousRun: s.lastRunId },
        'schedule tick skipped',
      );
    }
  }
}

/** Ticks in [from, to) among `ticks` (all after `from`), plus `from` itself. */
function countBetween(ticks: number[], from: number, to: number): number {
  return 1 + ticks.filter((t) => t > from && t < to).length;
}
