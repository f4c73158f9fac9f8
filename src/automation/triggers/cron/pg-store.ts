// Schedules in PostgreSQL, shared by every node (migration 003). Exactly one node claims each
// tick: the claim locks the schedule's row FOR UPDATE SKIP LOCKED on the condition that its
// next_fire_at still names the tick, queues the tick's run on the same transaction (the queue's
// createQueuedIn) and moves next_fire_at on before it commits. A node that finds the row locked
// skips it; one that comes after the commit finds next_fire_at moved. A node killed mid-claim
// rolls back with its connection, and the tick is still due for the others.

import { createQueuedIn } from '../../pg/run-queue.js';
import type { PgDatabase } from '../../pg/pool.js';
import { advanced } from './schedule.js';
import type { ScheduleQueue, ScheduleRecord, ScheduleStore, TickClaim, TickOutcome } from './schedule.js';

const LOCK_TICK = `SELECT record FROM automation_schedules
  WHERE automation_id = $1 AND next_fire_at = $2 FOR UPDATE SKIP LOCKED`;
const UNFINISHED = `SELECT 1 FROM runs WHERE id = $1 AND queue_state IN ('queued', 'claimed')`;
const ADVANCE = 'UPDATE automation_schedules SET next_fire_at = $2, record = $3 WHERE automation_id = $1';

export class PgScheduleStore implements ScheduleStore {
  constructor(private readonly db: PgDatabase) {}

  async get(automationId: string): Promise<ScheduleRecord | undefined> {
    const { rows } = await this.db.query<{ record: ScheduleRecord }>(
      'SELECT record FROM automation_schedules WHERE automation_id = $1',
      [automationId],
    );
    return rows[0]?.record;
  }

  update(
    automationId: string,
    change: (existing: ScheduleRecord | undefined) => ScheduleRecord | null | undefined,
  ): Promise<ScheduleRecord | null | undefined> {
    // FOR UPDATE (waiting, unlike a claim): a claim in flight commits its advance first.
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ record: ScheduleRecord }>(
        'SELECT record FROM automation_schedules WHERE automation_id = $1 FOR UPDATE',
        [automationId],
      );
      const next = change(rows[0]?.record);
      if (next === null)
        await tx.query('DELETE FROM automation_schedules WHERE automation_id = $1', [automationId]);
      else if (next !== undefined)
        await tx.query(
          `INSERT INTO automation_schedules (automation_id, tenant, next_fire_at, record) VALUES ($1, $2, $3, $4)
           ON CONFLICT (automation_id) DO UPDATE SET tenant = excluded.tenant,
             next_fire_at = excluded.next_fire_at, record = excluded.record`,
          [automationId, next.tenant, next.nextFireAt, JSON.stringify(next)],
        );
      return next;
    });
  }

  async list(tenant?: string): Promise<ScheduleRecord[]> {
    const { rows } =
      tenant === undefined
        ? await this.db.query<{ record: ScheduleRecord }>(
            'SELECT record FROM automation_schedules ORDER BY automation_id',
          )
        : await this.db.query<{ record: ScheduleRecord }>(
            'SELECT record FROM automation_schedules WHERE tenant = $1 ORDER BY automation_id',
            [tenant],
          );
    return rows.map((r) => r.record);
  }

  async due(now: number, limit: number): Promise<ScheduleRecord[]> {
    const { rows } = await this.db.query<{ record: ScheduleRecord }>(
      `SELECT record FROM automation_schedules WHERE next_fire_at <= $1 ORDER BY next_fire_at LIMIT $2`,
      [now, limit],
    );
    return rows.map((r) => r.record);
  }

  async claim(
    automationId: string,
    fireAt: number,
    _queue: ScheduleQueue,
    fn: (claim: TickClaim) => Promise<TickOutcome>,
  ): Promise<TickOutcome | undefined> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ record: ScheduleRecord }>(LOCK_TICK, [automationId, fireAt]);
      const schedule = rows[0]?.record;
      if (!schedule) return undefined;
      const outcome = await fn({
        schedule,
        unfinished: async (runId) => ((await tx.query(UNFINISHED, [runId])).rowCount ?? 0) > 0,
        createQueued: (run, detail, events) => createQueuedIn(tx, run, detail, events),
      });
      const next = advanced(schedule, outcome);
      await tx.query(ADVANCE, [automationId, next.nextFireAt, JSON.stringify(next)]);
      return outcome;
    });
  }
}
