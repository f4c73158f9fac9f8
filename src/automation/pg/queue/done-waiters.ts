// Waiting for runs to be done, on whichever node: a waiter is answered by the run's done
// notification, or by its row when it was done already (or finished while the listening
// connection was reconnecting). Two shortcuts spare reads: a run this node stored while it
// listened cannot have its notification missed (`heard`), and a run whose end this node wrote is
// answered with that end's record (`endsHere`).

import type { RunRecord } from '../../runs/types.js';
import { TERMINAL, type RunStatus } from '../../runs/statuses.js';
import { Batcher } from '../batcher.js';
import { mapDatabaseError, type PgDatabase } from '../pool.js';
import * as sql from './sql.js';

/** A run is done: its end status as the done notification names it. */
export interface DoneEvent {
  runId: string;
  status: string;
}

/** Runs stored here whose done notification is remembered for a later waiter (see `heard`). */
const MAX_HEARD = 10_000;

export class DoneWaiters {
  private readonly waiters = new Map<string, Set<(e: DoneEvent) => void>>();
  /**
   * Runs this node stored while it listened, the listening connection unbroken since: their
   * done notification cannot have been missed, so a waiter needs no read of the row. The value
   * is the run's done event once heard (kept for a waiter that comes after it). Only the newest
   * MAX_HEARD are kept; a waiter for any other run reads the row as before.
   */
  private readonly heard = new Map<string, DoneEvent | undefined>();
  /**
   * Ends this node handed over (the newest MAX_HEARD): the run's final record once its end is
   * committed here, undefined when it was not written. A waiter that hears the done notification
   * (which may come before the end statement's answer) takes the record from here, not a read.
   */
  private readonly endsHere = new Map<string, Promise<RunRecord | undefined>>();
  /** Runs asked about together are read in one statement. */
  private readonly checks = new Batcher<string, undefined>((ids) => this.checkMany(ids));

  constructor(private readonly db: PgDatabase) {}

  /**
   * A run this node is about to store while it listens: remembered from before its statement is
   * sent, so that its done notification, which comes after the commit, is kept.
   */
  storing(runId: string): void {
    this.heard.set(runId, undefined);
    if (this.heard.size > MAX_HEARD) this.heard.delete(this.heard.keys().next().value!);
  }

  /** The run was not stored after all. */
  notStored(runId: string): void {
    this.heard.delete(runId);
  }

  /** This node handed over the run's end: its record once committed, undefined if not written. */
  endHandedOver(runId: string, record: Promise<RunRecord | undefined>): void {
    this.endsHere.delete(runId);
    this.endsHere.set(runId, record);
    if (this.endsHere.size > MAX_HEARD) this.endsHere.delete(this.endsHere.keys().next().value!);
  }

  /** The listening connection broke: notifications may be missed from now on. */
  disconnected(): void {
    this.heard.clear();
  }

  /** A done notification. */
  heardDone(event: DoneEvent): void {
    if (this.heard.has(event.runId)) this.heard.set(event.runId, event);
    this.resolve(event);
  }

  /** Resolves once the run is done, whichever node ran it. */
  async waitForDone(runId: string): Promise<DoneEvent> {
    let resolve!: (e: DoneEvent) => void;
    const done = new Promise<DoneEvent>((r) => (resolve = r));
    let set = this.waiters.get(runId);
    if (!set) this.waiters.set(runId, (set = new Set()));
    set.add(resolve);
    if (this.heard.has(runId)) {
      // Stored here while listening: its done notification was heard or is still to come (a
      // broken connection clears `heard`, and the reconnect reads the rows of every waiter's run).
      const event = this.heard.get(runId);
      this.heard.delete(runId);
      if (event) this.resolve(event);
      return done;
    }
    try {
      await this.checks.submit(runId);
    } catch (err) {
      set.delete(resolve);
      if (set.size === 0) this.waiters.delete(runId);
      throw err;
    }
    return done;
  }

  /**
   * The final record of a run whose end this node wrote (awaiting that end's answer when its
   * done notification came first), taken once; undefined for any other run.
   */
  endWrittenHere(runId: string): Promise<RunRecord | undefined> | undefined {
    const record = this.endsHere.get(runId);
    if (record) this.endsHere.delete(runId);
    return record;
  }

  /** After a reconnect: the rows of every waiter's run are read (notifications were missed). */
  async catchUp(): Promise<void> {
    const waiting = [...this.waiters.keys()];
    if (waiting.length > 0) await Promise.all(waiting.map((id) => this.checks.submit(id)));
  }

  /** Runs asked about together, read in one statement; their waiters hear those that are done. */
  private async checkMany(ids: string[]): Promise<undefined[]> {
    let rows: { id: string; status: string }[];
    try {
      ({ rows } = await this.db.query<{ id: string; status: string }>(sql.DONE_AMONG, [[...new Set(ids)]]));
    } catch (err) {
      throw mapDatabaseError(err);
    }
    // A run taken off the queue (queue_state done) whose status column is not an end yet (a
    // cancelled queued run, before its record is written) is not answered from the row: its
    // waiters hear the done notification, which carries the end status.
    for (const r of rows)
      if (TERMINAL.has(r.status as RunStatus)) this.resolve({ runId: r.id, status: r.status });
    return ids.map(() => undefined);
  }

  private resolve(event: DoneEvent): void {
    const set = this.waiters.get(event.runId);
    if (!set) return;
    this.waiters.delete(event.runId);
    for (const resolve of set) resolve(event);
  }
}
