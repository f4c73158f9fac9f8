// Schedules in LMDB (one node): a named database of the automation service's environment. The
// one node is the only claimer; claims take turns in this process, so a tick is claimed once.
// A claim queues its run and then writes the advance: a process killed between the two writes
// fires that tick again at its next start (docs/automation.md, "Triggers").

import type { Database } from 'lmdb';
import type { AutomationDb } from '../../db.js';
import type { RunStore } from '../../runs/store.js';
import { TERMINAL } from '../../runs/statuses.js';
import {
  advanced,
  type ScheduleQueue,
  type ScheduleRecord,
  type ScheduleStore,
  type TickClaim,
  type TickOutcome,
} from './schedule.js';

export class LmdbScheduleStore implements ScheduleStore {
  private readonly schedules: Database<ScheduleRecord, string>;
  private turn: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: AutomationDb,
    private readonly runs: Pick<RunStore, 'get'>,
  ) {
    this.schedules = db.root.openDB<ScheduleRecord, string>({ name: 'cron-schedules' });
  }

  async get(automationId: string): Promise<ScheduleRecord | undefined> {
    return this.schedules.get(automationId);
  }

  update(
    automationId: string,
    change: (existing: ScheduleRecord | undefined) => ScheduleRecord | null | undefined,
  ): Promise<ScheduleRecord | null | undefined> {
    return this.db.root.transaction(() => {
      const next = change(this.schedules.get(automationId));
      if (next === null) this.schedules.removeSync(automationId);
      else if (next !== undefined) this.schedules.putSync(automationId, next);
      return next;
    });
  }

  async list(tenant?: string): Promise<ScheduleRecord[]> {
    const out: ScheduleRecord[] = [];
    for (const { value } of this.schedules.getRange())
      if (tenant === undefined || value.tenant === tenant) out.push(value);
    return out;
  }

  async due(now: number, limit: number): Promise<ScheduleRecord[]> {
    const all = await this.list();
    return all
      .filter((s) => s.nextFireAt !== null && s.nextFireAt <= now)
      .sort((a, b) => a.nextFireAt! - b.nextFireAt!)
      .slice(0, limit);
  }

  claim(
    automationId: string,
    fireAt: number,
    queue: ScheduleQueue,
    fn: (claim: TickClaim) => Promise<TickOutcome>,
  ): Promise<TickOutcome | undefined> {
    const mine = this.turn.then(async () => {
      const schedule = this.schedules.get(automationId);
      if (!schedule || schedule.nextFireAt !== fireAt) return undefined;
      const outcome = await fn({
        schedule,
        unfinished: async (runId) => {
          const run = await this.runs.get(runId);
          return run !== undefined && !TERMINAL.has(run.status);
        },
        createQueued: (run, detail, events) => queue.createQueued(run, detail, events),
      });
      // A sync may have changed the schedule meanwhile: the advance applies to what it wrote,
      // unless it moved the next tick (a new expression) or removed the schedule.
      await this.db.root.transaction(() => {
        const now = this.schedules.get(automationId);
        if (now && now.nextFireAt === fireAt) this.schedules.putSync(automationId, advanced(now, outcome));
      });
      return outcome;
    });
    this.turn = mine.catch(() => undefined);
    return mine;
  }
}
