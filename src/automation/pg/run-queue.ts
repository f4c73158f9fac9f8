// The run queue shared by every node on one PostgreSQL database (docs/automation.md, "Several
// nodes"). A queued run is a `runs` row with queue_state 'queued'; a node claims rows with
// SELECT … FOR UPDATE SKIP LOCKED, so concurrent claimers never block on, or both take, the
// same row. A claim is a lease on the database clock that the owning node renews on a timer;
// when a node dies its leases expire and another node's claim takes the run over (returned
// with `takeover`, the previous node and a new attempt number, which fences the old owner: its
// renew and complete no longer match). Nodes are woken by LISTEN/NOTIFY rather than by polling:
// a wake when runs are queued (and when a run ends while concurrency limits are set), a cancel
// addressed to the owning node, a done that any node waiting for the run hears. The pieces:
// queue/sql.ts (statements), queue/claim.ts (claims under limits), queue/leases.ts (renewal,
// self-fencing, expiry checks), listener.ts (the LISTEN connection).

import { EventEmitter } from 'node:events';
import type { Notification } from 'pg';
import { QueueFullError, type CreateOptions, type QueueCancel, type RunEnd } from '../runs/queue.js';
import type { RunDetail, RunEvent, RunRecord } from '../runs/types.js';
import { PgListener } from './listener.js';
import { REGISTRY_CHANNEL } from './registry-cache.js';
import { DatabaseUnavailableError, mapDatabaseError, type PgDatabase, type Queryable } from './pool.js';
import { Batcher } from './batcher.js';
import { DEFAULT_CHUNK_BYTES } from './blob-store.js';
import { claimAndRead, claimExpired, claimQueued, type ClaimedRun, type Claimer } from './queue/claim.js';
import { DoneWaiters, type DoneEvent } from './queue/done-waiters.js';
import { Leases } from './queue/leases.js';
import * as sql from './queue/sql.js';
import { eventsParam, recordValues, sharedBlobs } from './stores/run-columns.js';
import { batchArrays, createParams, newRun, type NewCreate, type OwnedEnd } from './queue/batch-params.js';

export type { ClaimedRun } from './queue/claim.js';

/**
 * Output files of at most this many bytes are stored by their run's end, in its statement (one
 * chunk of the blob store; see RunEnd.blobs).
 */
export const END_BLOB_BYTES = DEFAULT_CHUNK_BYTES;

/** Claim rounds of one claim() with concurrency limits (see claim). */
const MAX_CLAIM_ROUNDS = 8;

export interface RunQueueOptions {
  /** This node's name in the `node` column (AUTOMATION_NODE_ID); unique per running process. */
  nodeId: string;
  /** How long a claim lasts without renewal (AUTOMATION_RUN_LEASE). */
  leaseMs: number;
  /** How often owned leases are renewed (default: a third of the lease). */
  renewEveryMs?: number;
  /** How often to look for other nodes' expired leases (default: half the lease). */
  expiryCheckMs?: number;
  /** Running runs per tenant / per automation across every node; 0 or absent: no limit. */
  tenantConcurrency?: number;
  automationConcurrency?: number;
  /** The listening connection's URL (default: the pool's). */
  listenUrl?: string;
  /** Longest pause between attempts to reconnect the listening connection. */
  maxReconnectDelayMs?: number;
}

export type CancelOutcome = QueueCancel;

export type { DoneEvent } from './queue/done-waiters.js';

export interface RunQueueEvents {
  /** Runs may be claimable: queued, a slot freed, a lease expired, or the listener reconnected. */
  wake: [];
  /** A cancel for a run this node owns. */
  cancel: [{ runId: string }];
  /** A run finished (on any node). */
  done: [DoneEvent];
  /** A run this node owned was taken over (its lease expired): stop running it. */
  lost: [{ runId: string }];
  /** The listening connection is up (again); notifications flow. */
  listening: [];
  /** The listening connection broke or could not connect; it keeps trying. */
  disconnected: [Error];
  /** The registry was written (REGISTRY_CHANNEL, on any node): the automation id. */
  registry: [string];
}

export class PgRunQueue extends EventEmitter<RunQueueEvents> {
  readonly nodeId: string;
  private readonly leases: Leases;
  private readonly claimer: Claimer;
  private readonly done: DoneWaiters;
  private listener: PgListener | undefined;
  /** Statements of one kind handed over while one is in flight go together (queue/batcher.ts). */
  private readonly creates = new Batcher<NewCreate, boolean>((runs) => this.createMany(runs));
  private readonly ends = new Batcher<OwnedEnd, boolean>((ends) => this.completeMany(ends));
  private readonly counts = new Batcher<number, number>((bounds) => this.countQueued(bounds));
  private wakePending = false;
  private closed = false;
  /** The listening connection listens: no notification is being missed. */
  private listening = false;

  constructor(
    private readonly db: PgDatabase,
    private readonly options: RunQueueOptions,
  ) {
    super();
    this.nodeId = options.nodeId;
    this.done = new DoneWaiters(db);
    this.leases = new Leases(
      db,
      {
        nodeId: options.nodeId,
        leaseMs: options.leaseMs,
        renewEveryMs: options.renewEveryMs,
        expiryCheckMs: options.expiryCheckMs,
      },
      {
        lost: (runId) => this.emit('lost', { runId }),
        cancel: (runId) => this.emit('cancel', { runId }),
        expired: () => this.wake(),
      },
    );
    this.claimer = {
      nodeId: options.nodeId,
      leaseSeconds: options.leaseMs / 1000,
      tenantLimit: options.tenantConcurrency ?? 0,
      automationLimit: options.automationConcurrency ?? 0,
    };
  }

  private get limited(): boolean {
    return this.claimer.tenantLimit > 0 || this.claimer.automationLimit > 0;
  }

  /** Connects the listening connection and starts the renewal and expiry timers. */
  async start(): Promise<void> {
    const max = this.options.maxReconnectDelayMs ?? 2000;
    const listener = new PgListener({
      url: this.options.listenUrl ?? this.db.options.url,
      applicationName: `sluice-run-queue:${this.nodeId}`,
      // The registry's channel too: the node's registry cache shares this connection.
      channels: [sql.WAKE, sql.CANCEL, sql.DONE, REGISTRY_CHANNEL],
      onNotification: (msg) => this.onNotification(msg),
      onListening: () => {
        this.listening = true;
        this.emit('listening');
        // Notifications sent while no connection listened are lost: claim, look for cancels of
        // owned runs and for runs that waiters wait for, as if each had been heard.
        this.wake();
        void this.catchUp();
      },
      onDisconnected: (err) => {
        this.listening = false;
        this.done.disconnected();
        this.emit('disconnected', err);
      },
      reconnectDelayMs: (failures) => Math.min(max, 50 * 2 ** failures),
    });
    await listener.start();
    if (this.closed) return listener.close();
    this.listener = listener;
    this.leases.start();
  }

  /** Queues a run whose row exists (in `q`'s transaction when given: the wake goes out at commit). */
  async enqueue(runId: string, q: Queryable = this.db): Promise<boolean> {
    const { rowCount } = await run(() => q.query(sql.ENQUEUE, [runId]));
    return (rowCount ?? 0) > 0;
  }

  /**
   * How many runs wait in the queue for any node, counted up to `bound` (the cap callers compare
   * against), so a long queue costs no more than that many entries of the runs_queued index.
   */
  queuedCount(bound: number): Promise<number> {
    // Callers that ask while a count is in flight share the next one (counted up to their
    // largest bound): the count is a bound check that was never atomic with the start anyway.
    return this.counts.submit(bound);
  }

  private async countQueued(bounds: number[]): Promise<number[]> {
    const max = Math.max(...bounds);
    const { rows } = await run(() => this.db.query<{ n: string }>(sql.QUEUED_COUNT, [max]));
    const n = Number(rows[0]?.n ?? 0);
    return bounds.map((b) => Math.min(n, b));
  }

  /**
   * Queues stored runs that were never queued (stored, then an outage or the node's end before
   * the queueing statement: runs stored by a version that did not store and queue in one
   * statement). Queueing twice is harmless (enqueue keeps a queued or claimed run as it is).
   * Returns how many.
   */
  async requeueStranded(): Promise<number> {
    const { rows } = await run(() => this.db.query<{ n: string }>(sql.REQUEUE_STRANDED));
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Claims up to `limit` runs: expired leases first (takeovers), then the oldest queued runs
   * that the concurrency limits allow. With limits, a round whose window filled up but that
   * claimed less than asked is followed by another (a transaction each): its window no longer
   * holds the tenants and automations that reached their limit.
   */
  async claim(limit: number): Promise<ClaimedRun[]> {
    if (limit <= 0 || this.closed) return [];
    // Never in an end's statement: a claim on its own commits without waiting for a WAL flush,
    // so the thread that a run's end frees takes its next run while that end commits.
    const mine = this.leases.ids();
    if (!this.limited) {
      const claimed = await run(() => claimAndRead(this.db, this.claimer, limit, mine));
      this.leases.own(claimed);
      return claimed;
    }
    const first = await this.db.transaction(async (tx) => {
      const taken = await claimExpired(tx, this.claimer, limit, mine);
      const room = limit - taken.length;
      const fresh = room <= 0 ? { claimed: [], more: false } : await claimQueued(tx, this.claimer, room);
      return { claimed: [...taken, ...fresh.claimed], more: fresh.more };
    });
    const claimed = first.claimed;
    this.leases.own(claimed);
    // Bounded: a round that claims nothing while its window is full (another node's claims
    // committed between its hint and its count) is followed by a few more at most; the next
    // wake goes on from there.
    for (
      let more = first.more, round = 1;
      more && round < MAX_CLAIM_ROUNDS && claimed.length < limit && !this.closed;
      round++
    ) {
      const room = limit - claimed.length;
      let next: { claimed: ClaimedRun[]; more: boolean };
      try {
        next = await this.db.transaction((tx) => claimQueued(tx, this.claimer, room));
      } catch {
        // What earlier rounds claimed is committed and this node's; the next wake tries again.
        break;
      }
      this.leases.own(next.claimed);
      claimed.push(...next.claimed);
      more = next.more;
    }
    return claimed;
  }

  /** Whether this node holds the run's lease (runs it now). */
  runsHere(runId: string): boolean {
    return this.leases.attempt(runId) !== undefined;
  }

  /**
   * Extends the lease of every run this node owns; resolves with the runs it no longer owns
   * (taken over after their lease expired), each also announced as `lost`.
   */
  renew(): Promise<string[]> {
    return this.leases.renew();
  }

  /**
   * Marks a run this node owns done and announces it (to waiters on every node). False when the
   * node no longer owns it (taken over): the caller must not report its outcome.
   */
  async complete(runId: string, status: string, q: Queryable = this.db): Promise<boolean> {
    const attempt = this.leases.attempt(runId);
    if (attempt === undefined) return false;
    const { rowCount } = await run(() =>
      q.query(sql.completeSql(this.limited), [
        runId,
        this.nodeId,
        attempt,
        JSON.stringify({ r: runId, s: status }),
      ]),
    );
    this.leases.drop(runId);
    return (rowCount ?? 0) > 0;
  }

  /**
   * Stores a new run (record, detail, first events, as PgRunStore.create) and queues it, in one
   * statement: one commit instead of the create's and the enqueue's.
   */
  async createQueued(
    record: RunRecord,
    detail: RunDetail,
    events: RunEvent[],
    options: CreateOptions = {},
  ): Promise<void> {
    // Serialised now: the caller may change its objects while the statement waits.
    await this.created(record.id, {
      ...newRun(record, detail, events),
      claimed: false,
      durable: !options.answeredAtEnd,
      bound: options.maxQueued,
    });
  }

  /**
   * Stores a new run claimed by this node (attempt 1, a fresh lease) in the same statement as
   * other new runs: the run is never queued, so it costs no wake and no claim statement. With
   * concurrency limits it is stored and queued instead (undefined): only a claim counts what
   * runs under the limits across nodes.
   */
  async createClaimed(
    record: RunRecord,
    detail: RunDetail,
    events: RunEvent[],
    options: CreateOptions = {},
  ): Promise<ClaimedRun | undefined> {
    if (this.limited || this.closed) {
      await this.createQueued(record, detail, events, options);
      return undefined;
    }
    await this.created(record.id, {
      ...newRun(record, detail, events),
      claimed: true,
      durable: !options.answeredAtEnd,
      bound: undefined,
    });
    const claim: ClaimedRun = {
      runId: record.id,
      tenant: record.tenant,
      automationId: record.automationId,
      attempt: 1,
      takeover: false,
      previousNode: null,
      cancelRequested: false,
    };
    // Held from its commit on; a cancel asked for before this line is read by the next renewal.
    this.leases.own([claim]);
    return claim;
  }

  /**
   * Stores a new run in the next create statement. Remembered in `heard` from before the
   * statement is sent, so that its done notification, which comes after the commit, is kept.
   */
  private async created(runId: string, run: NewCreate): Promise<void> {
    if (this.listening) this.done.storing(runId);
    let stored: boolean;
    try {
      stored = await this.creates.submit(run);
    } catch (err) {
      this.done.notStored(runId);
      throw err;
    }
    if (!stored) {
      this.done.notStored(runId);
      throw new QueueFullError(run.bound ?? 0);
    }
  }

  /**
   * New runs handed over together, in one statement (createQueuedBatchSql); its commit waits for
   * its WAL flush unless every run of it is answered at its end only (see `committed`).
   */
  private async createMany(runs: NewCreate[]): Promise<boolean[]> {
    const durable = runs.some((r) => r.durable);
    // One bound per statement: the smallest asked for (every start asks AUTOMATION_MAX_QUEUED_RUNS).
    const bounds = runs.flatMap((r) => (r.bound === undefined ? [] : [r.bound]));
    const { rows } = await run(() =>
      this.db.query<{ id: string }>(sql.createQueuedBatchSql(!durable), [
        ...createParams(runs),
        runs.map((r) => r.claimed),
        this.nodeId,
        this.claimer.leaseSeconds,
        runs.map((r) => r.bound !== undefined),
        bounds.length > 0 ? Math.min(...bounds) : null,
      ]),
    );
    if (rows.length === runs.length) return runs.map(() => true);
    const stored = new Set(rows.map((r) => r.id));
    return runs.map((r) => stored.has(r.values[0] as string));
  }

  /**
   * complete() with the run's end written in the same commit (its record, detail and last
   * events), all on the condition that the row still names this node and attempt: that condition
   * is the lease check, atomic with the write (a takeover that locked the row first changes node
   * and attempt, so nothing is written; one that comes after finds the run done). False when the
   * node no longer owns the run; true also when this node had completed it already (a retry
   * after a commit whose answer was lost).
   */
  async completeWith(runId: string, status: string, end: RunEnd): Promise<boolean> {
    // Every output file of a run here went to the blob store (throughSharedStores), so none is
    // left to store with the record; refused rather than dropped, should that ever change.
    if (end.files?.length) throw new Error('the PostgreSQL queue stores output files as blobs only');
    const attempt = this.leases.attempt(runId);
    if (attempt === undefined) return false;
    const submitted = this.ends.submit({
      values: recordValues(end.record),
      attempt,
      detail: JSON.stringify(end.detail),
      payload: JSON.stringify({ r: runId, s: status }),
      events: eventsParam(end.events),
      holds: sharedBlobs(end.record, 'output'),
      blobs: end.blobs ?? [],
    });
    const record = submitted.then(
      (ok) => (ok ? end.record : undefined),
      () => undefined,
    );
    this.done.endHandedOver(runId, record);
    const done = await submitted;
    this.leases.drop(runId);
    return done;
  }

  /**
   * Resolves once the run's creation is durable. A run answered at its end only may have been
   * created with an asynchronous commit: a statement that writes (a key share lock of the run's
   * row) commits waiting for its WAL flush, which flushes every earlier commit with it. It is sent
   * whatever the run's creation was (one statement, on an answer that is not the run's end: a
   * 202, or a node closing), so this node keeps no list of runs not yet flushed. A run that is not
   * there (PostgreSQL crashed and lost its creation, which was answered to nobody) fails as
   * database_unavailable.
   */
  async committed(runId: string): Promise<void> {
    const { rowCount } = await run(() => this.db.query(sql.FLUSH_RUN, [runId]));
    if ((rowCount ?? 0) === 0) throw new DatabaseUnavailableError('run_not_stored');
  }

  /**
   * Ends of owned runs handed over together, in one statement (completeBatchSql); for each,
   * whether it is done by this node (written now, or by an earlier try whose answer was lost).
   */
  private async completeMany(ends: OwnedEnd[]): Promise<boolean[]> {
    const { columns, ev, holds } = batchArrays(ends);
    const ids = ends.map((e) => e.values[0] as string);
    const attempts = ends.map((e) => e.attempt);
    // Output content, once per sha256 (runs of one statement may have written the same file).
    const blobs = new Map<string, { id: string; content: Buffer }>();
    for (const e of ends)
      for (const b of e.blobs) blobs.set(b.sha256, { id: e.values[0] as string, content: b.content });
    const params = [
      ...columns,
      this.nodeId,
      attempts,
      ends.map((e) => e.detail),
      ends.map((e) => e.payload),
      ...ev,
      ...holds,
      [...blobs.values()].map((b) => b.id),
      [...blobs.keys()],
      [...blobs.values()].map((b) => b.content),
      END_BLOB_BYTES,
    ];
    const { rows } = await run(() =>
      this.db.query<{ id: string }>(sql.completeBatchSql(this.limited), params),
    );
    const done = new Set(rows.map((r) => r.id));
    const missing = ids.filter((id) => !done.has(id));
    if (missing.length > 0) {
      const again = await run(() =>
        this.db.query<{ id: string }>(sql.DONE_BY_MANY, [
          missing,
          this.nodeId,
          missing.map((id) => attempts[ids.indexOf(id)]),
        ]),
      );
      for (const r of again.rows) done.add(r.id);
    }
    return ids.map((id) => done.has(id));
  }

  /** Puts a run this node owns back in the queue (e.g. when the node shuts down before running it). */
  async release(runId: string): Promise<boolean> {
    const attempt = this.leases.attempt(runId);
    if (attempt === undefined) return false;
    const { rowCount } = await run(() => this.db.query(sql.RELEASE, [runId, this.nodeId, attempt]));
    this.leases.drop(runId);
    return (rowCount ?? 0) > 0;
  }

  /**
   * Stops renewing a run this node owns without touching its row (the database may be down):
   * its lease lapses and a claim takes it over, on any node, this one included.
   */
  forget(runId: string): void {
    this.leases.drop(runId);
  }

  /** Asks for a run's cancellation, from any node. */
  async cancel(runId: string): Promise<CancelOutcome> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ queue_state: string | null; node: string | null }>(sql.CANCEL_LOCK, [
        runId,
      ]);
      const row = rows[0];
      if (!row) return { state: 'unknown' };
      switch (row.queue_state) {
        case 'queued':
          await tx.query(sql.CANCEL_DEQUEUE, [runId]);
          await tx.query(sql.NOTIFY, [sql.DONE, JSON.stringify({ r: runId, s: 'cancelled' })]);
          return { state: 'dequeued' };
        case 'claimed':
          await tx.query(sql.CANCEL_FLAG, [runId]);
          await tx.query(sql.NOTIFY, [sql.CANCEL, JSON.stringify({ r: runId, n: row.node })]);
          return { state: 'signalled', node: row.node ?? '' };
        case 'done':
          return { state: 'finished' };
        default:
          await tx.query(sql.CANCEL_FLAG, [runId]);
          return { state: 'not_queued' };
      }
    });
  }

  /**
   * Resolves once the run is done, whichever node ran it: from its done notification, or from
   * its row when it was done already (or finished while this node's listener was reconnecting).
   */
  waitForDone(runId: string): Promise<DoneEvent> {
    return this.done.waitForDone(runId);
  }

  /**
   * The final record of a run whose end this node wrote (awaiting that end's answer when its
   * done notification came first), taken once; undefined for any other run.
   */
  async endWrittenHere(runId: string): Promise<RunRecord | undefined> {
    return this.done.endWrittenHere(runId);
  }

  /** Runs this node owns now. */
  ownedRuns(): string[] {
    return this.leases.ids();
  }

  /** Stops the timers and the listener. Owned runs stay claimed until their leases expire. */
  async close(): Promise<void> {
    this.closed = true;
    this.leases.stop();
    const listener = this.listener;
    this.listener = undefined;
    await listener?.close();
  }

  private wake(): void {
    // Many notifications in one turn make one wake: a claim takes all that is there.
    if (this.wakePending || this.closed) return;
    this.wakePending = true;
    setImmediate(() => {
      this.wakePending = false;
      if (!this.closed) this.emit('wake');
    });
  }

  private onNotification(msg: Notification): void {
    if (msg.channel === sql.WAKE) return this.wake();
    if (msg.channel === REGISTRY_CHANNEL) return void this.emit('registry', msg.payload ?? '');
    let payload: { r?: unknown; s?: unknown; n?: unknown };
    try {
      payload = JSON.parse(msg.payload ?? '') as typeof payload;
    } catch {
      return;
    }
    if (typeof payload.r !== 'string') return;
    if (msg.channel === sql.CANCEL && payload.n === this.nodeId) this.leases.signalCancel(payload.r);
    else if (msg.channel === sql.DONE) {
      const event = { runId: payload.r, status: typeof payload.s === 'string' ? payload.s : 'unknown' };
      this.done.heardDone(event);
      this.emit('done', event);
    }
  }

  private async catchUp(): Promise<void> {
    try {
      await this.done.catchUp();
      if (this.leases.size > 0) await this.renew();
    } catch {
      // The next renewal or reconnect tries again.
    }
  }
}

/**
 * Stores a new run and queues it (as PgRunQueue.createQueued) on `q`: inside a caller's
 * transaction, the run is stored and queued with whatever else that transaction writes (a
 * schedule's tick claim), and the wake goes out when it commits.
 */
export async function createQueuedIn(
  q: Queryable,
  record: RunRecord,
  detail: RunDetail,
  events: RunEvent[],
): Promise<void> {
  await run(() =>
    q.query(sql.createQueuedBatchSql(false), [
      ...createParams([newRun(record, detail, events)]),
      [false],
      null,
      0,
      [false],
      null,
    ]),
  );
}

/** Runs a statement, turning connection failures into database_unavailable. */
async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapDatabaseError(err);
  }
}
