// The leases of the runs one node owns in the PostgreSQL run queue: the runs it claimed and the
// attempt of each (which fences it: a row that no longer names this node and attempt was taken
// over), renewed together on a timer, with self-fencing when renewals keep failing; and the one
// timer that reads the table, looking for other nodes' expired leases (a dead node cannot
// announce them).

import { mapDatabaseError, type PgDatabase } from '../pool.js';
import { ANY_EXPIRED, RENEW } from './sql.js';

interface Owned {
  attempt: number;
  cancelSignalled: boolean;
}

export interface LeaseOptions {
  nodeId: string;
  leaseMs: number;
  /** How often owned leases are renewed (default: a third of the lease). */
  renewEveryMs?: number | undefined;
  /** How often to look for other nodes' expired leases (default: half the lease). */
  expiryCheckMs?: number | undefined;
}

export interface LeaseEvents {
  /** A run this node owned is no longer its own (taken over, or given up by self-fencing). */
  lost(runId: string): void;
  /** A cancel was asked for a run this node owns (read back by a renewal). */
  cancel(runId: string): void;
  /** Another node's lease expired: a claim can take its run over. */
  expired(): void;
}

export class Leases {
  private readonly owned = new Map<string, Owned>();
  private renewTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<string[]> | undefined;
  /** When the last renewal succeeded (this process's clock), for self-fencing. */
  private renewedAt = Date.now();
  private stopped = false;

  constructor(
    private readonly db: PgDatabase,
    private readonly options: LeaseOptions,
    private readonly events: LeaseEvents,
  ) {}

  get leaseSeconds(): number {
    return this.options.leaseMs / 1000;
  }

  start(): void {
    const { leaseMs } = this.options;
    const renewEvery = this.options.renewEveryMs ?? leaseMs / 3;
    this.renewTimer = setInterval(() => {
      if (this.owned.size === 0) {
        this.renewedAt = Date.now();
        return;
      }
      this.renew().catch(() => {
        // Self-fencing: once the leases may have run out (measured from the last renewal that
        // succeeded, less one renewal period for the clocks' drift over it), another node may
        // take the runs over; this node gives them up first rather than run them twice.
        if (Date.now() - this.renewedAt < leaseMs - renewEvery) return;
        for (const id of [...this.owned.keys()]) {
          this.owned.delete(id);
          this.events.lost(id);
        }
      });
    }, renewEvery);
    this.renewTimer.unref();
    this.expiryTimer = setInterval(() => this.checkExpired(), this.options.expiryCheckMs ?? leaseMs / 2);
    this.expiryTimer.unref();
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.renewTimer);
    clearInterval(this.expiryTimer);
  }

  own(runs: readonly { runId: string; attempt: number; cancelRequested: boolean }[]): void {
    for (const c of runs) this.owned.set(c.runId, { attempt: c.attempt, cancelSignalled: c.cancelRequested });
  }

  /** The attempt this node holds the run under; undefined when it does not own the run. */
  attempt(runId: string): number | undefined {
    return this.owned.get(runId)?.attempt;
  }

  /** Stops holding the run (completed, released, or forgotten). */
  drop(runId: string): void {
    this.owned.delete(runId);
  }

  ids(): string[] {
    return [...this.owned.keys()];
  }

  get size(): number {
    return this.owned.size;
  }

  /** Emits `cancel` for an owned run, once. */
  signalCancel(runId: string): void {
    const owned = this.owned.get(runId);
    if (!owned || owned.cancelSignalled) return;
    owned.cancelSignalled = true;
    this.events.cancel(runId);
  }

  /**
   * Extends the lease of every run this node owns; resolves with the runs it no longer owns
   * (taken over after their lease expired), each also announced as `lost`.
   */
  renew(): Promise<string[]> {
    this.renewing ??= this.renewOwned().finally(() => (this.renewing = undefined));
    return this.renewing;
  }

  private async renewOwned(): Promise<string[]> {
    const ids = [...this.owned.keys()];
    if (ids.length === 0) return [];
    const startedAt = Date.now();
    let rows: { id: string; attempt: number; cancel_requested: boolean }[];
    try {
      ({ rows } = await this.db.query<{ id: string; attempt: number; cancel_requested: boolean }>(RENEW, [
        ids,
        this.options.nodeId,
        this.leaseSeconds,
      ]));
    } catch (err) {
      throw mapDatabaseError(err);
    }
    this.renewedAt = startedAt;
    const kept = new Map(rows.map((r) => [r.id, r]));
    const lost: string[] = [];
    for (const id of ids) {
      const owned = this.owned.get(id);
      if (!owned) continue; // completed meanwhile
      const row = kept.get(id);
      if (!row || row.attempt !== owned.attempt) {
        this.owned.delete(id);
        lost.push(id);
        this.events.lost(id);
      } else if (row.cancel_requested) this.signalCancel(id);
    }
    return lost;
  }

  private checkExpired(): void {
    if (this.stopped) return;
    this.db.query<{ expired: boolean }>(ANY_EXPIRED, [[...this.owned.keys()]]).then(
      ({ rows }) => {
        if (rows[0]?.expired) this.events.expired();
      },
      () => undefined,
    );
  }
}
