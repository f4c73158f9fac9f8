// The columns of a `runs` row that hold the record (never the queue's: run-queue.ts owns
// those), and the events' parameters: what the run store's statements, its group commit
// (run-writes.ts) and the run queue's statements that write a run together with its queue state
// (create-and-enqueue, the fenced end) share, so the record is written the same way by all.

import type { RunEvent, RunRecord, RunStatus } from '../../runs/types.js';
import type { Queryable } from '../pool.js';

/**
 * The row's id and columns other than the queue's, in the order COLUMN_NAMES names them. The
 * record is serialised here, when the caller hands it over: a caller may change its object
 * while the statement waits for a connection.
 */
export function recordValues(run: RunRecord): unknown[] {
  return [
    run.id,
    run.tenant,
    run.automationId,
    run.type,
    run.status,
    run.trigger.type,
    run.trigger.by,
    run.batchId ?? null,
    run.exampleId ?? null,
    run.createdAt,
    run.completedAt,
    run.sampleRank,
    JSON.stringify(run),
    listFields(run),
  ];
}

/** The list_fields column: what the review and source-ref filters read, without U+0000. */
function listFields(run: RunRecord): string {
  const { review, version, git } = run;
  return JSON.stringify({ review, version, git }, (_key, value: unknown) =>
    typeof value === 'string' ? value.replaceAll('\u0000', '\uFFFD') : value,
  );
}

/**
 * A list of statuses (runs/statuses.ts) as SQL literals for `status IN (…)`: written into the
 * statement's text, so a predicate can match a partial index's.
 */
export function statusLiterals(statuses: readonly RunStatus[]): string {
  return statuses.map((s) => `'${s}'`).join(', ');
}

export const COLUMN_NAMES = [
  'id',
  'tenant',
  'automation_id',
  'type',
  'status',
  'trigger_type',
  'triggered_by',
  'batch_id',
  'example_id',
  'created_at',
  'completed_at',
  'sample_rank',
  'record',
  'list_fields',
];

/** The SQL types of COLUMN_NAMES, for arrays of them (`unnest($n::type[])`). */
export const COLUMN_TYPES = [
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'bigint',
  'bigint',
  'float8',
  'json',
  'jsonb',
];

/** `UPDATE runs SET …` of every record column; id is $1. */
export const SET_COLUMNS = COLUMN_NAMES.slice(1)
  .map((c, i) => `${c} = $${i + 2}`)
  .join(', ');

/**
 * A statement that replaces the run's record columns (never its queue columns), made when
 * called; run it with `q` (a transaction's client or the pool).
 */
export function runRecordWriter(run: RunRecord): (q: Queryable) => Promise<unknown> {
  const values = recordValues(run);
  return (q) => q.query(`UPDATE runs SET ${SET_COLUMNS} WHERE id = $1`, values);
}

export type EventsParam = [seqs: number[], events: string[]];

/**
 * Events as parallel arrays of seqs and json texts, the last of each seq (one INSERT … ON
 * CONFLICT cannot touch a row twice). The seq is a parameter of its own: a json operator on
 * the event would fail on one holding U+0000.
 */
export function eventsParam(events: RunEvent[]): EventsParam {
  const last = [...new Map(events.map((e) => [e.seq, e])).values()];
  return [last.map((e) => e.seq), last.map((e) => JSON.stringify(e))];
}

/** Inserts events (from eventsParam), replacing one of the same seq (as LMDB's put does). */
export async function insertEvents(q: Queryable, runId: string, [seqs, events]: EventsParam): Promise<void> {
  await q.query(
    `INSERT INTO run_events (run_id, seq, event)
     SELECT $1, s, e FROM unnest($2::integer[], $3::json[]) AS x (s, e)
     ON CONFLICT (run_id, seq) DO UPDATE SET event = excluded.event`,
    [runId, seqs, events],
  );
}

/** The holder name of a run's blobs in `blob_holds` (migration 002). */
export const runHolder = (runId: string) => `run:${runId}`;

/** The sha256 of the run's files that are in the blob store (of one role when given). */
export function sharedBlobs(run: RunRecord, role?: 'input' | 'output'): string[] {
  const out: string[] = [];
  for (const f of run.files) if (f.sha256 && (role === undefined || f.role === role)) out.push(f.sha256);
  return out;
}
