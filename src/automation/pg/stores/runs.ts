// Runs in PostgreSQL (docs/automation.md, "Several nodes (PostgreSQL)"). A run is a `runs` row:
// the record as json plus the columns the list indexes and the queue read (tenant, automation,
// status, trigger, batch, example, times, sample rank). The queue columns (queue_state, node,
// lease, attempt, cancel_requested) belong to run-queue.ts: this store never writes them, so an
// update of the record cannot undo a claim, and the queue reads `status` as this store wrote it.
// A list page is one SQL query: every filter in its WHERE, `tenant = $1` first, ordered by
// (sort key, id) with the cursor as a row comparison, so it is a range scan of the index that
// starts with (tenant, [filter column,] created_at | completed_at, id). Filters no index serves
// apply to a bounded number of rows read in that order (listScanLimit, as LmdbRunStore's).
// Record updates and events are group-committed (run-writes.ts).

import { decodeCursor, encodeCursor, type RunListPage, type RunListQuery } from '../../runs/list.js';
import type { RemovedRun, RunStore } from '../../runs/store.js';
import {
  TERMINAL,
  UNFINISHED_STATUSES,
  type RunDetail,
  type RunEvent,
  type RunRecord,
} from '../../runs/types.js';
import { KeyedReads } from '../keyed-reads.js';
import type { PgDatabase } from '../pool.js';
import { holdBlobs } from './blob-refs.js';
import {
  COLUMN_NAMES,
  eventsParam,
  insertEvents,
  recordValues,
  runHolder,
  sharedBlobs,
  statusLiterals,
} from './run-columns.js';
import { RunWriteQueue } from './run-writes.js';

/**
 * A WHERE clause under construction: conditions joined by AND, values numbered in order.
 * Residual conditions are those no index serves (the run's review and source ref, a substring
 * of the example id): a page with any of them scans a bounded number of rows (listQuery).
 */
class Where {
  readonly values: unknown[] = [];
  readonly parts: string[] = [];
  readonly residual: string[] = [];

  /** `$n` of a new parameter. */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  add(condition: string): void {
    this.parts.push(condition);
  }

  addResidual(condition: string): void {
    this.residual.push(condition);
  }
}

const and = (conditions: string[]) => (conditions.length > 0 ? conditions.join(' AND ') : 'true');

const REVIEW = "(list_fields -> 'review')";
const HAS_REVIEW = `jsonb_typeof(${REVIEW}) = 'object'`;

/** Adds the filters on indexed columns (all but the cursor and the sort key's presence). */
function addIndexed(w: Where, q: RunListQuery): void {
  w.add(`tenant = ${w.param(q.tenant)}`);
  // One value is an equality, so the planner can walk that column's index in (time, id)
  // order; with several it reads each value's range and sorts.
  const any = (column: string, values: string[] | undefined) => {
    if (values?.length === 1) w.add(`${column} = ${w.param(values[0])}`);
    else if (values) w.add(`${column} = ANY(${w.param(values)}::text[])`);
  };
  if (q.ids) w.add(`id = ANY(${w.param(q.ids)}::text[])`);
  any('type', q.types);
  any('automation_id', q.sources);
  any('status', q.statuses);
  any('trigger_type', q.triggers);
  any('triggered_by', q.triggeredBy);
  any('batch_id', q.batchIds);
  any('example_id', q.exampleIds);
  if (q.createdFrom !== undefined) w.add(`created_at >= ${w.param(q.createdFrom)}`);
  if (q.createdTo !== undefined) w.add(`created_at <= ${w.param(q.createdTo)}`);
  if (q.completedFrom !== undefined || q.completedTo !== undefined) w.add('completed_at IS NOT NULL');
  if (q.completedFrom !== undefined) w.add(`completed_at >= ${w.param(q.completedFrom)}`);
  if (q.completedTo !== undefined) w.add(`completed_at <= ${w.param(q.completedTo)}`);
  if (q.experiments === false) w.add('batch_id IS NULL');
  if (q.createdAfterExclusive !== undefined) w.add(`created_at > ${w.param(q.createdAfterExclusive)}`);
  if (q.sampleRate !== undefined) w.add(`sample_rank < ${w.param(q.sampleRate)}`);
}

/** Adds the filters no index serves: source ref, example id substring, review fields. */
function addResiduals(w: Where, q: RunListQuery): void {
  if (q.sourceRef !== undefined) {
    const r = w.param(q.sourceRef);
    const refs = [
      `list_fields ->> 'version' = ${r}`,
      `list_fields -> 'git' ->> 'requestedRef' = ${r}`,
      `list_fields -> 'git' ->> 'resolvedRef' = ${r}`,
      `list_fields -> 'git' ->> 'resolvedTag' = ${r}`,
    ];
    // A commit prefix counts from 7 characters (list.ts `matches`).
    if (q.sourceRef.length >= 7) refs.push(`starts_with(list_fields -> 'git' ->> 'commitSha', ${r})`);
    w.addResidual(`(${refs.join(' OR ')})`);
  }
  if (q.exampleIdContains !== undefined)
    w.addResidual(`strpos(coalesce(example_id, ''), ${w.param(q.exampleIdContains)}) > 0`);
  if (q.hasReview === true) w.addResidual(HAS_REVIEW);
  if (q.hasReview === false) w.addResidual(`NOT (${HAS_REVIEW})`);
  if (q.hasCorrections !== undefined)
    w.addResidual(
      `coalesce((${REVIEW} ->> 'hasCorrections')::boolean, false) = ${w.param(q.hasCorrections)}::boolean`,
    );
  if (q.reviewStatuses)
    w.addResidual(`${HAS_REVIEW} AND ${REVIEW} ->> 'status' = ANY(${w.param(q.reviewStatuses)}::text[])`);
  if (q.reviewVerdicts)
    w.addResidual(
      `${HAS_REVIEW} AND coalesce(${REVIEW} ->> 'verdict', 'nit') = ANY(${w.param(q.reviewVerdicts)}::text[])`,
    );
  if (q.reviewNoteContains !== undefined)
    w.addResidual(
      `strpos(lower(coalesce(${REVIEW} ->> 'note', '')), lower(${w.param(q.reviewNoteContains)})) > 0`,
    );
  if (q.search !== undefined) {
    // list.ts `searchMatches`: any of the three contains the term, ignoring case, or a metadata string.
    const t = `lower(${w.param(q.search)})`;
    // Metadata: any string at any depth (`strict $.**` visits every item once:
    // https://www.postgresql.org/docs/current/functions-json.html#FUNCTIONS-SQLJSON-PATH). `id` in
    // the subquery is the listed run's: neither run_details nor the path's rows have that column.
    // It is compared in the default collation, as run_details' key is indexed (runs.id is "C").
    const metadata =
      `EXISTS (SELECT 1 FROM run_details d, ` +
      `jsonb_path_query(d.detail::jsonb -> 'input' -> 'metadata', 'strict $.**') AS v ` +
      `WHERE d.run_id = id COLLATE "default" AND jsonb_typeof(v) = 'string' AND strpos(lower(v #>> '{}'), ${t}) > 0)`;
    w.addResidual(
      `(strpos(lower(id), ${t}) > 0 OR strpos(lower(coalesce(example_id, '')), ${t}) > 0 OR ` +
        `strpos(lower(coalesce(${REVIEW} ->> 'note', '')), ${t}) > 0 OR ${metadata})`,
    );
  }
  for (const [range, field] of [
    [q.reviewCreated, 'createdAt'],
    [q.reviewUpdated, 'updatedAt'],
    [q.reviewClosed, 'closedAt'],
  ] as const) {
    if (!range || (range[0] === undefined && range[1] === undefined)) continue;
    const value = `(${REVIEW} ->> '${field}')::numeric`;
    w.addResidual(`${HAS_REVIEW} AND ${value} IS NOT NULL`);
    if (range[0] !== undefined) w.addResidual(`${value} >= ${w.param(range[0])}`);
    if (range[1] !== undefined) w.addResidual(`${value} <= ${w.param(range[1])}`);
  }
}

interface Sql {
  text: string;
  values: unknown[];
}

/** The query's conditions, its sort key column and directions. */
function listWhere(q: RunListQuery, residual = true) {
  const cursor = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined;
  const key = q.sort === 'completedAt' ? 'completed_at' : 'created_at';
  const w = new Where();
  addIndexed(w, q);
  if (residual) addResiduals(w, q);
  if (q.sort === 'completedAt') w.add('completed_at IS NOT NULL');
  if (cursor)
    w.add(
      `(${key}, id) ${q.order === 'desc' ? '<' : '>'} (${w.param(cursor.sortKey)}::bigint, ${w.param(cursor.id)}::text)`,
    );
  const dir = q.order === 'desc' ? 'DESC' : 'ASC';
  return {
    w,
    key,
    dir,
    rev: q.order === 'desc' ? 'ASC' : 'DESC',
    offset: cursor ? 0 : Math.max(0, q.offset ?? 0),
  };
}

/**
 * The run list query (exported for the EXPLAIN test): rows are the page's records with their
 * sort key `k` and id, at most `limit + 1` (the extra one says a next page exists). With
 * residual conditions and a scan limit, they apply to the first `scanLimit` rows that match
 * the indexed ones: the scan stops when the page is full or at the limit, whichever is first
 * (the subquery is read lazily, in index order).
 */
export function listQuery(q: RunListQuery, scanLimit?: number): Sql {
  const { w, key, dir, offset } = listWhere(q);
  const bounded = w.residual.length > 0 && scanLimit !== undefined && !q.ids;
  const source = bounded
    ? `(SELECT * FROM runs WHERE ${and(w.parts)} ORDER BY ${key} ${dir}, id ${dir} LIMIT ${w.param(scanLimit)}) AS r`
    : 'runs';
  const where = bounded ? and(w.residual) : and([...w.parts, ...w.residual]);
  const text =
    `SELECT record, ${key} AS k, id FROM ${source} WHERE ${where} ORDER BY ${key} ${dir}, id ${dir} ` +
    `LIMIT ${w.param(q.limit + 1)}${offset > 0 ? ` OFFSET ${w.param(offset)}` : ''}`;
  return { text, values: w.values };
}

/**
 * For a bounded page that came out short: the last of the first `scanLimit` rows matching the
 * indexed conditions and how many there are (fewer than the limit: the scan reached the end).
 */
function scanEndQuery(q: RunListQuery, scanLimit: number): Sql {
  const { w, key, dir, rev } = listWhere(q, false);
  const text = `SELECT k, id, count(*) OVER () AS n FROM (
      SELECT ${key} AS k, id FROM runs WHERE ${and(w.parts)} ORDER BY ${key} ${dir}, id ${dir}
      LIMIT ${w.param(scanLimit)}) AS r
    ORDER BY k ${rev}, id ${rev} LIMIT 1`;
  return { text, values: w.values };
}

/** Whether listQuery bounds the scan of `q`. */
const isBounded = (q: RunListQuery) => !q.ids && listWhere(q).w.residual.length > 0;

type ListRow = { record: RunRecord; k: string; id: string };

export interface PgRunStoreOptions {
  /**
   * A list page with conditions no index serves reads at most this many runs even if it is not
   * full (its cursor then points where it stopped), as LmdbRunStore's listScanLimit.
   */
  listScanLimit?: number;
  /** Whether this node runs the run now (its lease); its progress writes commit asynchronously. */
  runningHere?: (runId: string) => boolean;
}

export class PgRunStore implements RunStore {
  private readonly scanLimit: number;
  /** Record updates and events, sent in batches (group commit). */
  private readonly writes: RunWriteQueue;
  /** Reads by id: concurrent ones share statements (keyed-reads.ts). */
  private readonly records: KeyedReads<RunRecord>;
  private readonly details: KeyedReads<RunDetail>;

  constructor(
    private readonly db: PgDatabase,
    options: PgRunStoreOptions = {},
  ) {
    this.scanLimit = options.listScanLimit ?? 20_000;
    this.writes = new RunWriteQueue(db, options.runningHere);
    this.records = new KeyedReads(db, 'SELECT id AS k, record AS v FROM runs WHERE id = ANY($1::text[])');
    this.details = new KeyedReads(
      db,
      'SELECT run_id AS k, detail AS v FROM run_details WHERE run_id = ANY($1::text[])',
    );
  }

  get(id: string): Promise<RunRecord | undefined> {
    return this.records.one(id);
  }

  getDetail(id: string): Promise<RunDetail | undefined> {
    return this.details.one(id);
  }

  create(run: RunRecord, detail: RunDetail, events: RunEvent[]): Promise<void> {
    const values = recordValues(run);
    const detailJson = JSON.stringify(detail);
    const eventsJson = eventsParam(events);
    return this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO runs (${COLUMN_NAMES.join(', ')}) VALUES (${COLUMN_NAMES.map((_, i) => `$${i + 1}`).join(', ')})`,
        values,
      );
      await tx.query('INSERT INTO run_details (run_id, detail) VALUES ($1, $2)', [run.id, detailJson]);
      if (events.length > 0) await insertEvents(tx, run.id, eventsJson);
      await holdBlobs(tx, runHolder(run.id), sharedBlobs(run));
    });
  }

  update(_previous: RunRecord, next: RunRecord, detail?: RunDetail): Promise<void> {
    // The indexes follow the columns, so unlike LMDB nothing depends on `previous`.
    return this.writes.write({
      runId: next.id,
      record: recordValues(next),
      ...(detail ? { detail: JSON.stringify(detail) } : {}),
      // Output files put in the blob store (several nodes) are held by the run from now on.
      holds: sharedBlobs(next, 'output'),
    });
  }

  appendEvent(runId: string, event: RunEvent): Promise<void> {
    return this.writes.write({ runId, events: [event] });
  }

  takeUnwritten(runId: string): RunEvent[] {
    return this.writes.take(runId);
  }

  /** None: with PostgreSQL every output file goes to the shared blob store (RunSharing). */
  keptFile(): Promise<Buffer | undefined> {
    return Promise.resolve(undefined);
  }

  async events(runId: string): Promise<RunEvent[]> {
    const { rows } = await this.db.query<{ event: RunEvent }>(
      'SELECT event FROM run_events WHERE run_id = $1 ORDER BY seq',
      [runId],
    );
    return rows.map((r) => r.event);
  }

  async lastEventSeq(runId: string): Promise<number> {
    const { rows } = await this.db.query<{ seq: number | null }>(
      'SELECT max(seq) AS seq FROM run_events WHERE run_id = $1',
      [runId],
    );
    return rows[0]?.seq ?? 0;
  }

  removeEnded(id: string): Promise<RemovedRun | undefined> {
    // One statement decides: a review inserted meanwhile either commits first (the run stays)
    // or waits for this delete and then fails its reference to the run.
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ record: RunRecord }>(
        `DELETE FROM runs r WHERE id = $1 AND status = ANY($2::text[])
           AND NOT EXISTS (SELECT 1 FROM reviews v
             WHERE v.tenant = r.tenant AND v.run_id = r.id COLLATE "default")
         RETURNING record`,
        [id, [...TERMINAL]],
      );
      const run = rows[0]?.record;
      if (!run) return undefined;
      const held = await tx.query<{ sha256: string }>(
        'DELETE FROM blob_holds WHERE holder = $1 RETURNING sha256',
        [runHolder(id)],
      );
      return { run, released: held.rows.map((r) => r.sha256) };
    });
  }

  async unfinished(): Promise<RunRecord[]> {
    // The predicate matches the partial index runs_unfinished, so this reads only those rows.
    const { rows } = await this.db.query<{ record: RunRecord }>(
      `SELECT record FROM runs WHERE status IN (${statusLiterals(UNFINISHED_STATUSES)})
       ORDER BY created_at, id`,
    );
    return rows.map((r) => r.record);
  }

  async list(q: RunListQuery): Promise<RunListPage> {
    const { text, values } = listQuery(q, this.scanLimit);
    const { rows } = await this.db.query<ListRow>(text, values);
    const page = rows.slice(0, q.limit);
    const runs = page.map((r) => r.record);
    const last = page[page.length - 1];
    if (rows.length > q.limit && last) return { runs, nextCursor: encodeCursor(Number(last.k), last.id) };
    if (!isBounded(q)) return { runs, nextCursor: null };
    const end = scanEndQuery(q, this.scanLimit);
    const read = (await this.db.query<{ k: string; id: string; n: string }>(end.text, end.values)).rows[0];
    const stopped = read !== undefined && Number(read.n) >= this.scanLimit;
    return { runs, nextCursor: stopped ? encodeCursor(Number(read.k), read.id) : null };
  }
}
