// Group commit of the PostgreSQL run store (docs/automation.md, "The stores on PostgreSQL"), by
// the batcher (../batcher.ts). A run reports in bursts (started, each step's start and end, an
// output file), so the store sends record updates and events as they come while no write is in
// flight, and those handed over meanwhile wait and go together as one statement (one commit)
// when it ends. Each caller's promise resolves when the statement holding its write commits and
// rejects if it fails.
//
// Writes go out in the order they were handed over; within a batch, several updates of the same
// run keep the last record (an update replaces the whole record) and the last detail given, and
// several events of the same (run, seq) the last one, which is what sending them one by one in
// that order leaves stored. A batch that fails for another reason than an unreachable database
// (a detail of a run that does not exist) is sent again one write at a time, so only the writes
// that fail are rejected.
//
// A batch made only of writes of runs this node is running (it holds their lease) acknowledges
// nothing to a client: it commits without waiting for its WAL flush (`synchronous_commit = off`
// for that transaction, https://www.postgresql.org/docs/current/wal-async-commit.html). The run's
// end commits synchronously, which flushes the WAL up to its own record and so every earlier
// asynchronous commit with it; a PostgreSQL crash before can lose such progress only of a run
// that had not ended, and nobody was answered about it (docs/automation.md, the crash table).
// Any other write (a run not running here: a cancelled queued run's end, a retry link, an event
// after the end) commits synchronously.
//
// Writes of a run running here are held for PROGRESS_HOLD_MS before they are handed to the
// batcher. A run that ends within it has them taken out by its end (`take`) and written in the
// end's own statement: a short run costs no progress statement at all, and its end does not wait
// for one. Held writes of runs still running then go together. A held write of a run no longer
// running here when the hold runs out (its lease was lost) is dropped: the node that holds the run
// now writes its record, and runs it again from the start.

import type { RunEvent } from '../../runs/types.js';
import { Batcher } from '../batcher.js';
import type { Queryable } from '../pool.js';
import { COLUMN_NAMES, COLUMN_TYPES, eventsParam, runHolder } from './run-columns.js';

interface Write {
  runId: string;
  /** A record update: the record's column values (recordValues) and its detail as json, if given. */
  record?: unknown[];
  detail?: string;
  /** Serialised when the write is sent: an event a run's end takes is serialised once, by the end. */
  events?: RunEvent[];
  /** Blobs the run holds from now on (its output files in the blob store). */
  holds?: string[];
}

const n = COLUMN_NAMES.length;
const BATCH = `WITH u AS (
    UPDATE runs r SET ${COLUMN_NAMES.slice(1)
      .map((c) => `${c} = x.${c}`)
      .join(', ')}
    FROM unnest(${COLUMN_TYPES.map((t, i) => `$${i + 1}::${t}[]`).join(', ')}) AS x (${COLUMN_NAMES.join(', ')})
    WHERE r.id = x.id),
  d AS (
    INSERT INTO run_details (run_id, detail) SELECT * FROM unnest($${n + 1}::text[], $${n + 2}::json[])
    ON CONFLICT (run_id) DO UPDATE SET detail = excluded.detail),
  e AS (
    INSERT INTO run_events (run_id, seq, event)
    SELECT * FROM unnest($${n + 3}::text[], $${n + 4}::integer[], $${n + 5}::json[])
    ON CONFLICT (run_id, seq) DO UPDATE SET event = excluded.event),
  h AS (
    INSERT INTO blob_holds (holder, sha256) SELECT * FROM unnest($${n + 6}::text[], $${n + 7}::text[])
    ON CONFLICT DO NOTHING)
  SELECT 1`;

/** BATCH committing without waiting for its WAL flush (the setting is this transaction's only). */
const BATCH_ASYNC = BATCH.replace(/SELECT 1$/, "SELECT set_config('synchronous_commit', 'off', true)");

/** The batch's parameters: records as one array per column, details, events, each merged. */
function batchParams(batch: Write[]): unknown[] {
  const records = new Map<string, unknown[]>();
  const details = new Map<string, string>();
  const events = new Map<string, Map<number, string>>();
  for (const w of batch) {
    if (w.record) records.set(w.runId, w.record);
    if (w.detail !== undefined) details.set(w.runId, w.detail);
    if (w.events) {
      let mine = events.get(w.runId);
      if (!mine) events.set(w.runId, (mine = new Map()));
      const [seqs, json] = eventsParam(w.events);
      seqs.forEach((seq, i) => mine.set(seq, json[i]!));
    }
  }
  // Rows are updated in id order, so two batches (of two nodes) that update the same runs lock
  // them in the same order and never wait on each other in a cycle.
  const columns: unknown[][] = COLUMN_NAMES.map(() => []);
  for (const id of [...records.keys()].sort()) records.get(id)!.forEach((v, c) => columns[c]!.push(v));
  const eventRuns: string[] = [];
  const seqs: number[] = [];
  const json: string[] = [];
  for (const [runId, mine] of events)
    for (const [seq, e] of mine) {
      eventRuns.push(runId);
      seqs.push(seq);
      json.push(e);
    }
  const holders: string[] = [];
  const held: string[] = [];
  for (const w of batch)
    for (const sha256 of w.holds ?? []) {
      holders.push(runHolder(w.runId));
      held.push(sha256);
    }
  return [...columns, [...details.keys()], [...details.values()], eventRuns, seqs, json, holders, held];
}

/**
 * How long writes of a run running here are held before they are sent (see above). Other nodes
 * see a running run's progress (its status, events) this much later at most.
 */
export const PROGRESS_HOLD_MS = 100;

/** A held write, settled when it is sent, taken by its run's end, or dropped. */
interface Held {
  write: Write;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class RunWriteQueue {
  private readonly batcher: Batcher<Write, undefined>;
  /** Held writes by run, in the order they were handed over. */
  private readonly held = new Map<string, Held[]>();
  private holdTimer: NodeJS.Timeout | undefined;

  /** `runningHere(runId)`: whether this node runs the run now (its writes acknowledge nothing). */
  constructor(
    db: Queryable,
    private readonly runningHere: (runId: string) => boolean = () => false,
  ) {
    this.batcher = new Batcher<Write, undefined>(async (batch) => {
      const unacknowledged = batch.every((w) => runningHere(w.runId));
      await db.query(unacknowledged ? BATCH_ASYNC : BATCH, batchParams(batch));
      return batch.map(() => undefined);
    });
  }

  /**
   * Resolves once the write is committed (with the others of its batch), or, for a run running
   * here, once it is taken by the run's end (`take`) or dropped with the run (see above).
   */
  write(w: Write): Promise<void> {
    if (!this.runningHere(w.runId)) return this.batcher.submit(w);
    return new Promise<void>((resolve, reject) => {
      let list = this.held.get(w.runId);
      if (!list) this.held.set(w.runId, (list = []));
      list.push({ write: w, resolve, reject });
      this.holdTimer ??= setTimeout(() => this.flushHeld(), PROGRESS_HOLD_MS);
    });
  }

  /**
   * The run's held writes, taken out for its end to write: their events, in the order handed
   * over (their record and detail updates are the end's to replace). Their promises resolve now.
   */
  take(runId: string): RunEvent[] {
    const list = this.held.get(runId);
    if (!list) return [];
    this.held.delete(runId);
    for (const h of list) h.resolve();
    return list.flatMap((h) => h.write.events ?? []);
  }

  /** Sends every held write (the hold ran out). */
  flushHeld(): void {
    clearTimeout(this.holdTimer);
    this.holdTimer = undefined;
    const all = [...this.held.values()].flat();
    this.held.clear();
    for (const h of all) {
      if (!this.runningHere(h.write.runId)) h.resolve();
      else this.batcher.submit(h.write).then(h.resolve, h.reject);
    }
  }
}
