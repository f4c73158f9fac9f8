// Where runs are kept. Callers depend on the RunStore interface; every method is async because
// an implementation may answer from a remote database. LmdbRunStore keeps the record (small,
// read by listings), its detail (input, steps, trace, usage), its events keyed (runId, seq) so
// they read back in order, and secondary index entries (field, value, tenant, createdAt, id)
// that list queries scan instead of the whole table. The tenant in the key keeps a listing
// inside the caller's tenant: it never reads another tenant's runs, and its cursor never points
// at one. An index entry's value is the run's sampleRank, so sample_rate skips runs without
// reading them.

import type { AutomationDb } from '../db.js';
import type { KeptFile } from './queue.js';
import {
  decodeCursor,
  encodeCursor,
  matches,
  type MetadataOf,
  type RunListPage,
  type RunListQuery,
} from './list.js';
import { TERMINAL, UNFINISHED_STATUSES, type RunDetail, type RunEvent, type RunRecord } from './types.js';

export interface RunStore {
  /** A run of any tenant (callers that answer a tenant check its `tenant`). */
  get(id: string): Promise<RunRecord | undefined>;
  getDetail(id: string): Promise<RunDetail | undefined>;
  /** Record, detail and first events together; committed before it resolves. */
  create(run: RunRecord, detail: RunDetail, events: RunEvent[]): Promise<void>;
  /** Replaces the record (and the detail when given); `previous` is the record as stored. */
  update(previous: RunRecord, next: RunRecord, detail?: RunDetail): Promise<void>;
  appendEvent(runId: string, event: RunEvent): Promise<void>;
  /**
   * The run's events handed over (appendEvent) and not yet sent, taken out for the caller to
   * write with the run's end (RunQueue.completeWith); the writes of the run not yet sent go with
   * them (the end's record and detail replace theirs) and their promises resolve now. Empty for a
   * store that sends every write at once (LMDB: its writes commit in order, so the end joins them).
   */
  takeUnwritten(runId: string): RunEvent[];
  /**
   * True when writes commit in the order they were issued (one writer working through one
   * queue, as lmdb-js does): a write issued later never lands before an earlier one, so the end
   * of a run need not wait for the run's earlier writes to commit first (completion.ts).
   */
  readonly ordered?: boolean;
  /** The run's events in seq order; empty for an unknown run. */
  events(runId: string): Promise<RunEvent[]>;
  /**
   * The bytes of an output file stored with its run's end (RunEnd.files: kept off the disk by
   * the worker), by its path in the run's record; undefined when none is stored under it (always,
   * on a backend whose shared stores take every output file).
   */
  keptFile(runId: string, path: string): Promise<Buffer | undefined>;
  /** The highest event seq of the run, 0 when it has none. */
  lastEventSeq(runId: string): Promise<number>;
  /** Runs of every tenant not in a terminal state, oldest first (createdAt, then id). */
  unfinished(): Promise<RunRecord[]>;
  /**
   * One page of the tenant's runs matching the query (see list.ts), in (sort key, id) order.
   * `nextCursor` is an opaque string, null when no run follows; a page may hold fewer than
   * `limit` runs while a next page still exists (an implementation may bound the work per
   * page). An unreadable cursor rejects with CursorError.
   */
  list(query: RunListQuery): Promise<RunListPage>;
  /**
   * Removes an ended run that has no review, all together: record, detail, events, index entries
   * and (PostgreSQL) its blob holds. Resolves with the removed record and the blobs its holds
   * named (the caller deletes those nothing else holds), or undefined when the run is unknown,
   * not ended or reviewed (docs/operations.md "Data lifecycle").
   */
  removeEnded(id: string): Promise<RemovedRun | undefined>;
}

export interface RemovedRun {
  run: RunRecord;
  /** The sha256 of each blob the run held (none on LMDB: run files live in its folder). */
  released: string[];
}

export type IndexKey = [string, string, string, number, string];

export const INDEXED_FIELDS = ['source', 'status', 'type', 'trigger', 'by', 'batch', 'example'] as const;
export type IndexedField = (typeof INDEXED_FIELDS)[number] | 'all' | 'done';

export function indexKeys(run: RunRecord): IndexKey[] {
  const c = run.createdAt;
  const t = run.tenant;
  const keys: IndexKey[] = [
    ['all', '', t, c, run.id],
    ['source', run.automationId, t, c, run.id],
    ['status', run.status, t, c, run.id],
    ['type', run.type, t, c, run.id],
    ['trigger', run.trigger.type, t, c, run.id],
    ['by', run.trigger.by, t, c, run.id],
  ];
  if (run.batchId) keys.push(['batch', run.batchId, t, c, run.id]);
  if (run.exampleId) keys.push(['example', run.exampleId, t, c, run.id]);
  if (run.completedAt !== null) keys.push(['done', '', t, run.completedAt, run.id]);
  return keys;
}

const sameKey = (a: IndexKey, b: IndexKey) =>
  a[0] === b[0] && a[1] === b[1] && a[2] === b[2] && a[3] === b[3] && a[4] === b[4];

function single(values: string[] | undefined): string | undefined {
  return values && values.length === 1 ? values[0] : undefined;
}

/** The most selective single-valued filter that has an index; `all` otherwise. */
function chooseIndex(q: RunListQuery): [string, string] {
  if (q.sort === 'completedAt') return ['done', ''];
  const candidates: [string, string | undefined][] = [
    ['batch', single(q.batchIds)],
    ['example', single(q.exampleIds)],
    ['source', single(q.sources)],
    ['by', single(q.triggeredBy)],
    ['status', single(q.statuses)],
    ['trigger', single(q.triggers)],
    ['type', single(q.types)],
  ];
  for (const [name, value] of candidates) if (value !== undefined) return [name, value];
  return ['all', ''];
}

const MAX_KEY = '\uffff';
const byId = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface LmdbRunStoreOptions {
  /**
   * A list page stops after this many index entries even if it is not full (its cursor then
   * points where it stopped), which bounds the cost of a page with rare matches.
   */
  listScanLimit?: number;
}

/**
 * A run whose creation is held in memory (LmdbRunStore.createDeferred): what has been written of
 * it since, applied here, until it is written in one transaction (its end, or a flush).
 */
interface DeferredRun {
  run: RunRecord;
  detail: RunDetail;
  events: RunEvent[];
  timer: NodeJS.Timeout;
  /** Settles with the commit that writes it. */
  committed: Promise<void>;
  settle: (written: Promise<void>) => void;
}

export class LmdbRunStore implements RunStore {
  // lmdb-js commits its write queue in order, batching what is issued together into one
  // transaction (the lmdb-js README: "Transactions", "Ordering").
  readonly ordered = true;
  private readonly scanLimit: number;
  private readonly deferred = new Map<string, DeferredRun>();
  /** Per run, the record of its last write issued and not yet committed (`write`). */
  private readonly issued = new Map<string, RunRecord>();
  /** A run's input metadata for a list's `search` (read only when its record does not match). */
  private readonly metadataOf: MetadataOf = (run) =>
    (this.deferred.get(run.id)?.detail ?? (this.db.runDetails.get(run.id) as RunDetail | undefined))?.input
      .metadata;

  constructor(
    readonly db: AutomationDb,
    options: LmdbRunStoreOptions = {},
  ) {
    this.scanLimit = options.listScanLimit ?? 20_000;
  }

  private read(id: string): RunRecord | undefined {
    return this.db.runs.get(id) as RunRecord | undefined;
  }

  async get(id: string): Promise<RunRecord | undefined> {
    return this.deferred.get(id)?.run ?? this.read(id);
  }

  async getDetail(id: string): Promise<RunDetail | undefined> {
    return this.deferred.get(id)?.detail ?? (this.db.runDetails.get(id) as RunDetail | undefined);
  }

  /**
   * A run written whole (record, detail, index entries, events) in one batch (`write`).
   */
  create(
    run: RunRecord,
    detail: RunDetail,
    events: RunEvent[],
    files: readonly KeptFile[] = [],
  ): Promise<void> {
    return this.write(run, () => {
      void this.db.runs.put(run.id, run);
      void this.db.runDetails.put(run.id, detail);
      for (const key of indexKeys(run)) void this.db.runIndex.put(key, run.sampleRank);
      for (const e of events) void this.db.events.put([run.id, e.seq], e);
      this.putFiles(run.id, files);
    });
  }

  private putFiles(runId: string, files: readonly KeptFile[]): void {
    for (const f of files) void this.db.runFiles.put([runId, f.path], f.content);
  }

  /** The keys of the run's kept files (a path may hold any character, so no end key is named). */
  private keptKeys(runId: string): [string, string][] {
    const keys: [string, string][] = [];
    for (const key of this.db.runFiles.getKeys({ start: [runId, ''] })) {
      if (key[0] !== runId) break;
      keys.push(key);
    }
    return keys;
  }

  keptFile(runId: string, path: string): Promise<Buffer | undefined> {
    return Promise.resolve(this.db.runFiles.get([runId, path]));
  }

  /**
   * Writes of a run's record as one batch: lmdb-js writes the operations issued inside `batch`
   * in one transaction (the lmdb-js README, `eventTurnBatching`: "explicitly batched together
   * (with transaction, batch, ifVersion)"), and, unlike `transaction(callback)`, its write
   * thread need not hand the transaction back to this thread to run a callback before it
   * commits. Values are encoded here, as the operations are issued. Until it commits, `record`
   * is what the run's next write moves index entries from: lmdb-js applies writes in the order
   * they are issued, so that is the record as stored when the next one applies.
   */
  private write(record: RunRecord, operations: () => void): Promise<void> {
    this.issued.set(record.id, record);
    const settled = () => {
      if (this.issued.get(record.id) === record) this.issued.delete(record.id);
    };
    return this.db.root.batch(operations).then(settled, (err: unknown) => {
      settled();
      throw err;
    });
  }

  /** The record as stored once every write issued so far has applied. */
  private current(id: string): RunRecord | undefined {
    return this.issued.get(id) ?? this.read(id);
  }

  /**
   * A run whose creation need not be committed before it executes (a synchronous start: what
   * its answer acknowledges is its end). It is kept here, and what is written of it meanwhile
   * (record changes, events) is applied here, so that its end writes all of it in one
   * transaction (`end`). A run still unended after `flushMs` is written as it is then (listings
   * see it from then on); so is one whose creation must be acknowledged after all (`flush`).
   * Reads of this store see it throughout; a run scan (`list`, `unfinished`) sees it once it is
   * written. Nothing is lost that was acknowledged: if the process dies before the write, the
   * start was never answered. The returned promise settles with the commit that writes it.
   */
  createDeferred(run: RunRecord, detail: RunDetail, events: RunEvent[], flushMs: number): Promise<void> {
    let settle!: (written: Promise<void>) => void;
    const committed = new Promise<void>((resolve, reject) => {
      settle = (written) => void written.then(resolve, reject);
    });
    committed.catch(() => undefined);
    const timer = setTimeout(() => void this.flush(run.id), flushMs);
    timer.unref();
    this.deferred.set(run.id, { run, detail, events: [...events], timer, committed, settle });
    return committed;
  }

  /** Writes a deferred run as it is now (see createDeferred); resolves once it is committed. */
  flush(id: string): Promise<void> {
    const d = this.deferred.get(id);
    if (!d) return Promise.resolve();
    this.deferred.delete(id);
    clearTimeout(d.timer);
    d.settle(this.create(d.run, d.detail, d.events));
    return d.committed;
  }

  /** Every deferred run written (the service closes). */
  async flushAll(): Promise<void> {
    await Promise.all([...this.deferred.keys()].map((id) => this.flush(id)));
  }

  /** Moves index entries whose key changed (status, completion). */
  update(previous: RunRecord, next: RunRecord, detail?: RunDetail): Promise<void> {
    const d = this.deferred.get(next.id);
    if (d) {
      d.run = next;
      if (detail) d.detail = detail;
      // An end recorded this way (a queued run cancelled) is not kept waiting.
      return TERMINAL.has(next.status) ? this.flush(next.id) : d.committed;
    }
    return this.write(next, () => this.replace(previous, next, detail));
  }

  /**
   * The end of a run in one batch: its last events, its record (index entries moved from the
   * record as stored once every write issued before has applied) and its detail. Ends of runs
   * finishing together share one commit (lmdb-js commits what is issued in the same event turn
   * together).
   */
  end(
    next: RunRecord,
    detail: RunDetail,
    events: RunEvent[],
    files: readonly KeptFile[] = [],
  ): Promise<void> {
    const d = this.deferred.get(next.id);
    if (d) {
      // Created, changed and ended in one transaction: the record and detail written once.
      this.deferred.delete(next.id);
      clearTimeout(d.timer);
      d.settle(this.create(next, detail, [...d.events, ...events], files));
      return d.committed;
    }
    const previous = this.current(next.id) ?? next;
    return this.write(next, () => {
      for (const e of events) void this.db.events.put([next.id, e.seq], e);
      this.putFiles(next.id, files);
      this.replace(previous, next, detail);
    });
  }

  /** Inside a batch: the record replaced, index entries whose key changed moved. */
  private replace(previous: RunRecord, next: RunRecord, detail: RunDetail | undefined): void {
    // At most nine keys a side: compared pairwise, with no strings built for them.
    const before = indexKeys(previous);
    const after = indexKeys(next);
    for (const k of before) if (!after.some((a) => sameKey(a, k))) void this.db.runIndex.remove(k);
    for (const k of after)
      if (!before.some((b) => sameKey(b, k))) void this.db.runIndex.put(k, next.sampleRank);
    void this.db.runs.put(next.id, next);
    if (detail) void this.db.runDetails.put(next.id, detail);
  }

  takeUnwritten(): RunEvent[] {
    return [];
  }

  async appendEvent(runId: string, event: RunEvent): Promise<void> {
    const d = this.deferred.get(runId);
    if (d) {
      // Written with the run (nothing is acknowledged of it before that): nothing to wait for.
      d.events.push(event);
      return;
    }
    await this.db.events.put([runId, event.seq], event);
  }

  async events(runId: string): Promise<RunEvent[]> {
    const d = this.deferred.get(runId);
    if (d) return [...d.events];
    const out: RunEvent[] = [];
    for (const { value } of this.db.events.getRange({
      start: [runId, 0],
      end: [runId, Number.MAX_SAFE_INTEGER],
    })) {
      out.push(value as RunEvent);
    }
    return out;
  }

  async lastEventSeq(runId: string): Promise<number> {
    const d = this.deferred.get(runId);
    if (d) return d.events.reduce((m, e) => Math.max(m, e.seq), 0);
    for (const { key } of this.db.events.getRange({
      start: [runId, Number.MAX_SAFE_INTEGER],
      end: [runId, 0],
      reverse: true,
      limit: 1,
    })) {
      return key[1];
    }
    return 0;
  }

  removeEnded(id: string): Promise<RemovedRun | undefined> {
    if (this.deferred.has(id)) return Promise.resolve(undefined);
    // Read again inside the transaction: a review saved meanwhile keeps the run.
    return this.db.root.transaction(() => {
      const run = this.read(id);
      if (!run || !TERMINAL.has(run.status) || run.review !== null) return undefined;
      const events = [...this.db.events.getKeys({ start: [id, 0], end: [id, Number.MAX_SAFE_INTEGER] })];
      for (const key of events) this.db.events.removeSync(key);
      for (const key of this.keptKeys(id)) this.db.runFiles.removeSync(key);
      for (const key of indexKeys(run)) this.db.runIndex.removeSync(key);
      this.db.runDetails.removeSync(id);
      this.db.runs.removeSync(id);
      return { run, released: [] };
    });
  }

  async unfinished(): Promise<RunRecord[]> {
    const out: RunRecord[] = [];
    for (const status of UNFINISHED_STATUSES) {
      for (const { key } of this.db.runIndex.getRange({
        start: ['status', status, ''],
        end: ['status', status, MAX_KEY],
      })) {
        const run = this.read(String(key[4]));
        if (run) out.push(run);
      }
    }
    return out.sort((a, b) => a.createdAt - b.createdAt || byId(a.id, b.id));
  }

  /**
   * One index range scan in (sort key, id) order with the remaining filters applied to each
   * record. The cursor is the last (sort key, id) returned, so a page never repeats or skips a
   * run while others are being added.
   */
  async list(q: RunListQuery): Promise<RunListPage> {
    const cursor = q.cursor !== undefined ? decodeCursor(q.cursor) : undefined;
    const sortOf = (r: RunRecord) => (q.sort === 'completedAt' ? (r.completedAt ?? 0) : r.createdAt);
    const desc = q.order === 'desc';
    let toSkip = cursor ? 0 : (q.offset ?? 0);
    const page: RunRecord[] = [];

    if (q.ids) {
      const found = q.ids
        .map((id) => this.read(id))
        .filter((r): r is RunRecord => r !== undefined)
        .filter(
          (r) => matches(r, q, this.metadataOf) && (q.sort !== 'completedAt' || r.completedAt !== null),
        );
      found.sort((a, b) => (sortOf(a) - sortOf(b) || byId(a.id, b.id)) * (desc ? -1 : 1));
      const after = cursor
        ? found.filter((r) => {
            const cmp = sortOf(r) - cursor.sortKey || byId(r.id, cursor.id);
            return desc ? cmp < 0 : cmp > 0;
          })
        : found.slice(toSkip);
      const rows = after.slice(0, q.limit);
      const last = rows[rows.length - 1];
      return {
        runs: rows,
        nextCursor: after.length > q.limit && last ? encodeCursor(sortOf(last), last.id) : null,
      };
    }

    const [name, value] = chooseIndex(q);
    const t = q.tenant;
    const lo = (q.sort === 'completedAt' ? q.completedFrom : q.createdFrom) ?? 0;
    const hi = (q.sort === 'completedAt' ? q.completedTo : q.createdTo) ?? Number.MAX_SAFE_INTEGER;
    const range = desc
      ? {
          start: cursor ? [name, value, t, cursor.sortKey, cursor.id] : [name, value, t, hi, MAX_KEY],
          end: [name, value, t, lo, ''],
          reverse: true,
        }
      : {
          start: cursor ? [name, value, t, cursor.sortKey, cursor.id] : [name, value, t, lo, ''],
          end: [name, value, t, hi, MAX_KEY],
          reverse: false,
        };

    let scanned = 0;
    let lastKey: (string | number)[] | undefined;
    let full = false;
    for (const { key, value: rank } of this.db.runIndex.getRange(range)) {
      if (cursor && key[3] === cursor.sortKey && key[4] === cursor.id) continue;
      if (full) {
        // One more index entry exists past the page, so a next page may exist.
        const last = page[page.length - 1]!;
        return { runs: page, nextCursor: encodeCursor(sortOf(last), last.id) };
      }
      lastKey = key;
      scanned++;
      const sampledOut = q.sampleRate !== undefined && typeof rank === 'number' && !(rank < q.sampleRate);
      const run = sampledOut ? undefined : this.read(String(key[4]));
      if (run && matches(run, q, this.metadataOf)) {
        if (toSkip > 0) toSkip--;
        else {
          page.push(run);
          if (page.length >= q.limit) full = true;
        }
      }
      if (!full && scanned >= this.scanLimit) {
        return { runs: page, nextCursor: encodeCursor(Number(lastKey[3]), String(lastKey[4])) };
      }
    }
    return { runs: page, nextCursor: null };
  }
}
