// The parameters of the run queue's batch statements (queue/sql.ts createQueuedBatchSql and
// completeBatchSql): each run serialised once when it is handed over, then one array per record
// column and per event and hold field across the runs of a batch.

import type { RunDetail, RunEvent, RunRecord } from '../../runs/types.js';
import {
  COLUMN_NAMES,
  eventsParam,
  recordValues,
  sharedBlobs,
  type EventsParam,
} from '../stores/run-columns.js';

/** A new run serialised as createQueuedBatchSql takes it. */
export function newRun(record: RunRecord, detail: RunDetail, events: RunEvent[]): NewRun {
  return {
    values: recordValues(record),
    detail: JSON.stringify(detail),
    events: eventsParam(events),
    holds: sharedBlobs(record),
  };
}

/** The parameters of createQueuedBatchSql for `runs`: one array per column. */
export function createParams(runs: readonly NewRun[]): unknown[] {
  const { columns, ev, holds } = batchArrays(runs);
  return [...columns, runs.map((r) => r.detail), ...ev, ...holds];
}

/**
 * What the batch statements (createQueuedBatchSql, completeBatchSql) take of every run, one array
 * per record column, the (run id, seq, event) arrays of their events and the (run id, blob)
 * arrays of their blob holds.
 */
export function batchArrays(runs: readonly NewRun[]): {
  columns: unknown[][];
  ev: [string[], number[], string[]];
  holds: [string[], string[]];
} {
  const columns: unknown[][] = COLUMN_NAMES.map(() => []);
  const ev: [string[], number[], string[]] = [[], [], []];
  const holds: [string[], string[]] = [[], []];
  for (const r of runs) {
    const id = r.values[0] as string;
    r.values.forEach((v, c) => columns[c]!.push(v));
    addEvents(ev, id, r.events);
    for (const sha of r.holds) {
      holds[0].push(id);
      holds[1].push(sha);
    }
  }
  return { columns, ev, holds };
}

/** A new run as its statement takes it (createQueued). */
export interface NewRun {
  values: unknown[];
  detail: string;
  events: EventsParam;
  holds: string[];
}

/**
 * A new run as createMany takes it: claimed by this node or queued; durable: a synchronous
 * commit; bound: CreateOptions.maxQueued.
 */
export interface NewCreate extends NewRun {
  claimed: boolean;
  durable: boolean;
  bound: number | undefined;
}

/** The end of an owned run as its statement takes it (completeWith). */
export interface OwnedEnd extends NewRun {
  attempt: number;
  payload: string;
  blobs: { sha256: string; content: Buffer }[];
}

/** Appends a run's events to the (run id, seq, event) arrays of a batch. */
export function addEvents(
  to: [string[], number[], string[]],
  runId: string,
  [seqs, json]: EventsParam,
): void {
  seqs.forEach((seq, i) => {
    to[0].push(runId);
    to[1].push(seq);
    to[2].push(json[i]!);
  });
}
