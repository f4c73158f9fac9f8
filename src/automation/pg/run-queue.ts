// The run queue shared by every node on one PostgreSQL database (docs/automation.md, "Several
// nodes"). A queued run is a `runs` row with queue_state 'queued'; a node claims rows with
// SELECT … FOR UPDATE SKIP LOCKED, so concurrent claimers never block on, or both take, the
// same row. A claim is a lease on the database clock that the owning node renews on a timer;
// when a node dies its leases expire and another node's claim takes the run over (returned
// with `takeover`, the previous node and a new attempt number, which fences the old owner: its
// renew and complete no longer match). Nodes are woken by LISTEN/NOTIFY rather than by polling:
// a wake when runs are queued (and when a run ends while concurrency limits are set), a cancel
// addressed to the owning node, a done that any node waiting for the run hears. The one timer
// that reads the table looks for expired leases, which a dead node cannot announce.

import { EventEmitter } from 'node:events';
import { Client, type Notification } from 'pg';
import type { RunEnd, SharedRunQueue } from '../runs/queue.js';
import type { RunDetail, RunEvent, RunRecord } from '../runs/types.js';
import { mapDatabaseError, type PgDatabase, type Queryable } from './pool.js';
import { COLUMN_NAMES, eventsParam, recordValues, SET_COLUMNS, sharedBlobs } from './stores/run-columns.js';

const WAKE = 'sluice_run_wake';
const CANCEL = 'sluice_run_cancel';
const DONE = 'sluice_run_done';

const n = COLUMN_NAMES.length;

/** Claim rounds of one claim() with concurrency limits (see claim). */
const MAX_CLAIM_ROUNDS = 8;

// A new run's row (queued), detail and first events in one statement: one commit, whose wake
// goes out when it commits. The record columns are written as the run store writes them.
const CREATE_QUEUED = `WITH r AS (
    INSERT INTO runs (${COLUMN_NAMES.join(', ')}, queue_state, queued_at)
    VALUES (${COLUMN_NAMES.map((_, i) => `$${i + 1}`).join(', ')}, 'queued', clock_timestamp())
    RETURNING id),
  d AS (INSERT INTO run_details (run_id, detail) SELECT id, $${n + 1}::json FROM r),
  e AS (
    INSERT INTO run_events (run_id, seq, event)
    SELECT r.id, x.s, x.e FROM r, unnest($${n + 2}::integer[], $${n + 3}::json[]) AS x (s, e)),
  h AS (
    INSERT INTO blob_holds (holder, sha256)
    SELECT 'run:' || r.id, x.sha FROM r, unnest($${n + 4}::text[]) AS x (sha)
    ON CONFLICT DO NOTHING)
  SELECT pg_notify('${WAKE}', '') FROM r`;

/**
 * The end of a run: its record, queue state done, detail and last events, written only if the
 * row still names this node and attempt (claimed), in one statement (one commit); the done
 * notification goes out when it commits. `wake` adds a wake (concurrency limits: a slot freed).
 */
const completeWithSql = (wake: boolean) => `WITH done AS (
    UPDATE runs SET ${SET_COLUMNS}, queue_state = 'done', lease_expires_at = NULL
    WHERE id = $1 AND node = $${n + 1} AND attempt = $${n + 2} AND queue_state = 'claimed'
    RETURNING id),
  d AS (
    INSERT INTO run_details (run_id, detail) SELECT id, $${n + 3}::json FROM done
    ON CONFLICT (run_id) DO UPDATE SET detail = excluded.detail),
  e AS (
    INSERT INTO run_events (run_id, seq, event)
    SELECT done.id, x.s, x.e FROM done, unnest($${n + 4}::integer[], $${n + 5}::json[]) AS x (s, e)
    ON CONFLICT (run_id, seq) DO UPDATE SET event = excluded.event),
  h AS (
    INSERT INTO blob_holds (holder, sha256)
    SELECT 'run:' || done.id, x.sha FROM done, unnest($${n + 7}::text[]) AS x (sha)
    ON CONFLICT DO NOTHING)
  SELECT pg_notify('${DONE}', $${n + 6})${wake ? `, pg_notify('${WAKE}', '')` : ''} FROM done`;

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

export interface ClaimedRun {
  runId: string;
  tenant: string;
  automationId: string;
  /** 1 for the first claim; each takeover adds one. */
  attempt: number;
  /** The run's lease had expired on another node (or an earlier process of this one). */
  takeover: boolean;
  previousNode: string | null;
  /** A cancel was asked for before this claim: stop it right away. */
  cancelRequested: boolean;
}

export type CancelOutcome =
  /** Still queued: taken out of the queue (done, with status cancelled, announced). */
  | { state: 'dequeued' }
  /** Claimed: the owning node was told. */
  | { state: 'signalled'; node: string }
  | { state: 'finished' }
  /** Never queued (the caller handles the run itself) or unknown. */
  | { state: 'not_queued' }
  | { state: 'unknown' };

export interface DoneEvent {
  runId: string;
  status: string;
}

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
}

interface Owned {
  attempt: number;
  cancelSignalled: boolean;
}

type ClaimRow = {
  id: string;
  tenant: string;
  automation_id: string;
  attempt: number;
  cancel_requested: boolean;
  previous_node?: string | null;
};

export class PgRunQueue extends EventEmitter<RunQueueEvents> {
  readonly nodeId: string;
  private readonly leaseSeconds: number;
  private readonly owned = new Map<string, Owned>();
  private readonly waiters = new Map<string, Set<(e: DoneEvent) => void>>();
  private listener: Client | undefined;
  private reconnectTimer: NodeJS.Timeout | undefined;
  private reconnectFailures = 0;
  private renewTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  private renewing: Promise<string[]> | undefined;
  /** When the last renewal succeeded (this process's clock), for self-fencing. */
  private renewedAt = Date.now();
  private wakePending = false;
  private closed = false;

  constructor(
    private readonly db: PgDatabase,
    private readonly options: RunQueueOptions,
  ) {
    super();
    this.nodeId = options.nodeId;
    this.leaseSeconds = options.leaseMs / 1000;
  }

  private get limited(): boolean {
    return (this.options.tenantConcurrency ?? 0) > 0 || (this.options.automationConcurrency ?? 0) > 0;
  }

  /** Connects the listening connection and starts the renewal and expiry timers. */
  async start(): Promise<void> {
    await this.connectListener();
    const renewEvery = this.options.renewEveryMs ?? this.options.leaseMs / 3;
    this.renewTimer = setInterval(() => {
      if (this.owned.size === 0) {
        this.renewedAt = Date.now();
        return;
      }
      this.renew().catch(() => {
        // Self-fencing: once the leases may have run out (measured from the last renewal that
        // succeeded, less one renewal period for the clocks' drift over it), another node may
        // take the runs over; this node gives them up first rather than run them twice.
        if (Date.now() - this.renewedAt < this.options.leaseMs - renewEvery) return;
        for (const id of [...this.owned.keys()]) {
          this.owned.delete(id);
          this.emit('lost', { runId: id });
        }
      });
    }, renewEvery);
    this.renewTimer.unref();
    this.expiryTimer = setInterval(
      () => this.checkExpired(),
      this.options.expiryCheckMs ?? this.options.leaseMs / 2,
    );
    this.expiryTimer.unref();
  }

  /** Queues a run whose row exists (in `q`'s transaction when given: the wake goes out at commit). */
  async enqueue(runId: string, q: Queryable = this.db): Promise<boolean> {
    const { rowCount } = await run(() =>
      q.query(
        `WITH queued AS (
           UPDATE runs SET queue_state = 'queued', queued_at = clock_timestamp(), node = NULL,
             lease_expires_at = NULL
           WHERE id = $1 AND (queue_state IS NULL OR queue_state = 'queued')
           RETURNING id)
         SELECT pg_notify('${WAKE}', '') FROM queued`,
        [runId],
      ),
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * How many runs wait in the queue for any node, counted up to `bound` (the cap callers compare
   * against), so a long queue costs no more than that many entries of the runs_queued index.
   */
  async queuedCount(bound: number): Promise<number> {
    const { rows } = await run(() =>
      this.db.query<{ n: string }>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM runs WHERE queue_state = 'queued' LIMIT $1) AS waiting`,
        [bound],
      ),
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Queues stored runs that were never queued: a node stores a run, then queues it in a second
   * statement, and a database outage (or the node's end) between the two leaves the run
   * unqueued. Queueing twice is harmless (enqueue keeps a queued or claimed run as it is), so
   * runs being started right now on another node may be queued here too. Returns how many.
   */
  async requeueStranded(): Promise<number> {
    const { rows } = await run(() =>
      this.db.query<{ n: string }>(
        `WITH stranded AS (
           UPDATE runs SET queue_state = 'queued', queued_at = clock_timestamp()
           WHERE queue_state IS NULL AND status IN ('created', 'pending') AND NOT cancel_requested
           RETURNING id)
         SELECT count(*) AS n, pg_notify('${WAKE}', '') FROM stranded HAVING count(*) > 0`,
      ),
    );
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
    const mine = [...this.owned.keys()];
    const first = await this.db.transaction(async (tx) => {
      const taken = await tx.query<ClaimRow>(
        `WITH expired AS (
           SELECT id, node FROM runs
           WHERE queue_state = 'claimed' AND lease_expires_at < clock_timestamp() AND NOT (id = ANY($4::text[]))
           ORDER BY lease_expires_at
           LIMIT $3
           FOR UPDATE SKIP LOCKED)
         UPDATE runs r SET node = $1, lease_expires_at = clock_timestamp() + make_interval(secs => $2),
           attempt = r.attempt + 1
         FROM expired e WHERE r.id = e.id
         RETURNING r.id, r.tenant, r.automation_id, r.attempt, r.cancel_requested, e.node AS previous_node`,
        [this.nodeId, this.leaseSeconds, limit, mine],
      );
      const room = limit - taken.rows.length;
      const fresh =
        room <= 0
          ? { rows: [], more: false }
          : this.limited
            ? await this.claimLimited(tx, room)
            : { rows: await this.claimAny(tx, room), more: false };
      return {
        claimed: [
          ...taken.rows.map((r) => toClaimed(r, true)),
          ...fresh.rows.map((r) => toClaimed({ ...r, previous_node: null }, false)),
        ],
        more: fresh.more,
      };
    });
    const claimed = first.claimed;
    this.own(claimed);
    // Bounded: a round that claims nothing while its window is full (another node's claims
    // committed between its hint and its count) is followed by a few more at most; the next
    // wake goes on from there.
    for (
      let more = first.more, round = 1;
      more && round < MAX_CLAIM_ROUNDS && claimed.length < limit && !this.closed;
      round++
    ) {
      const room = limit - claimed.length;
      let next: { rows: ClaimRow[]; more: boolean };
      try {
        next = await this.db.transaction((tx) => this.claimLimited(tx, room));
      } catch {
        // What earlier rounds claimed is committed and this node's; the next wake tries again.
        break;
      }
      const got = next.rows.map((r) => toClaimed({ ...r, previous_node: null }, false));
      this.own(got);
      claimed.push(...got);
      more = next.more;
    }
    return claimed;
  }

  private own(claimed: ClaimedRun[]): void {
    for (const c of claimed)
      this.owned.set(c.runId, { attempt: c.attempt, cancelSignalled: c.cancelRequested });
  }

  private async claimAny(tx: Queryable, room: number): Promise<ClaimRow[]> {
    const { rows } = await tx.query<ClaimRow>(
      `WITH next AS (
         SELECT id FROM runs WHERE queue_state = 'queued'
         ORDER BY queued_at, id
         LIMIT $3
         FOR UPDATE SKIP LOCKED)
       UPDATE runs r SET queue_state = 'claimed', node = $1,
         lease_expires_at = clock_timestamp() + make_interval(secs => $2), attempt = r.attempt + 1
       FROM next WHERE r.id = next.id
       RETURNING r.id, r.tenant, r.automation_id, r.attempt, r.cancel_requested`,
      [this.nodeId, this.leaseSeconds, room],
    );
    return rows;
  }

  /**
   * With limits: lock a window of queued rows, then take an advisory transaction lock per tenant
   * and automation among them (in one global order, so two claimers never wait on each other in
   * a cycle), count what runs now, and claim what fits. A claimer that counts after another
   * waits for its lock, which it holds until commit, so it sees those claims: the count and the
   * claim are one atomic step across nodes. The window leaves out the queued runs of tenants and
   * automations already at their limit (read before the locks, so only a hint: the count decides),
   * so that runs over a limit at the head of the queue, however many, do not hide the runs
   * behind them. `more`: the window was full and not all of `room` was claimed, so a round with
   * a fresh hint may find more.
   */
  private async claimLimited(tx: Queryable, room: number): Promise<{ rows: ClaimRow[]; more: boolean }> {
    const tenantLimit = this.options.tenantConcurrency ?? 0;
    const automationLimit = this.options.automationConcurrency ?? 0;
    const size = Math.max(room * 4, 64);
    const window = await tx.query<{ id: string; tenant: string; automation_id: string }>(
      `WITH full_tenants AS (
         SELECT tenant FROM runs WHERE $2::int > 0 AND queue_state = 'claimed'
         GROUP BY tenant HAVING count(*) >= $2::int),
       full_automations AS (
         SELECT automation_id FROM runs WHERE $3::int > 0 AND queue_state = 'claimed'
         GROUP BY automation_id HAVING count(*) >= $3::int)
       SELECT id, tenant, automation_id FROM runs
       WHERE queue_state = 'queued'
         AND tenant NOT IN (SELECT tenant FROM full_tenants)
         AND automation_id NOT IN (SELECT automation_id FROM full_automations)
       ORDER BY queued_at, id
       LIMIT $1
       FOR UPDATE OF runs SKIP LOCKED`,
      [size, tenantLimit, automationLimit],
    );
    if (window.rows.length === 0) return { rows: [], more: false };
    const tenants = [...new Set(window.rows.map((r) => r.tenant))];
    const automations = [...new Set(window.rows.map((r) => r.automation_id))];
    const keys = [
      ...(tenantLimit > 0 ? tenants.map((t) => `sluice:run-queue:tenant:${t}`) : []),
      ...(automationLimit > 0 ? automations.map((a) => `sluice:run-queue:automation:${a}`) : []),
    ].sort();
    await tx.query(
      `SELECT count(pg_advisory_xact_lock(hashtextextended(k, 0)))
       FROM (SELECT k FROM unnest($1::text[]) AS k ORDER BY k) AS sorted`,
      [keys],
    );
    const running = await tx.query<{ kind: string; key: string; n: string }>(
      `SELECT 't' AS kind, tenant AS key, count(*) AS n FROM runs
         WHERE queue_state = 'claimed' AND tenant = ANY($1::text[]) GROUP BY tenant
       UNION ALL
       SELECT 'a', automation_id, count(*) FROM runs
         WHERE queue_state = 'claimed' AND automation_id = ANY($2::text[]) GROUP BY automation_id`,
      [tenantLimit > 0 ? tenants : [], automationLimit > 0 ? automations : []],
    );
    const count = new Map(running.rows.map((r) => [`${r.kind}:${r.key}`, Number(r.n)]));
    const pick: string[] = [];
    for (const r of window.rows) {
      if (pick.length >= room) break;
      const t = `t:${r.tenant}`;
      const a = `a:${r.automation_id}`;
      if (tenantLimit > 0 && (count.get(t) ?? 0) >= tenantLimit) continue;
      if (automationLimit > 0 && (count.get(a) ?? 0) >= automationLimit) continue;
      count.set(t, (count.get(t) ?? 0) + 1);
      count.set(a, (count.get(a) ?? 0) + 1);
      pick.push(r.id);
    }
    const more = window.rows.length === size && pick.length < room;
    if (pick.length === 0) return { rows: [], more };
    const { rows } = await tx.query<ClaimRow>(
      `UPDATE runs SET queue_state = 'claimed', node = $1,
         lease_expires_at = clock_timestamp() + make_interval(secs => $2), attempt = attempt + 1
       WHERE id = ANY($3::text[])
       RETURNING id, tenant, automation_id, attempt, cancel_requested`,
      [this.nodeId, this.leaseSeconds, pick],
    );
    return { rows, more };
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
    const { rows } = await run(() =>
      this.db.query<{ id: string; attempt: number; cancel_requested: boolean }>(
        `UPDATE runs SET lease_expires_at = clock_timestamp() + make_interval(secs => $3)
         WHERE id = ANY($1::text[]) AND node = $2 AND queue_state = 'claimed'
         RETURNING id, attempt, cancel_requested`,
        [ids, this.nodeId, this.leaseSeconds],
      ),
    );
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
        this.emit('lost', { runId: id });
      } else if (row.cancel_requested) this.signalCancel(id);
    }
    return lost;
  }

  /**
   * Marks a run this node owns done and announces it (to waiters on every node). False when the
   * node no longer owns it (taken over): the caller must not report its outcome.
   */
  async complete(runId: string, status: string, q: Queryable = this.db): Promise<boolean> {
    const owned = this.owned.get(runId);
    if (!owned) return false;
    const { rowCount } = await run(() =>
      q.query(
        `WITH done AS (
           UPDATE runs SET queue_state = 'done', lease_expires_at = NULL
           WHERE id = $1 AND node = $2 AND attempt = $3 AND queue_state = 'claimed'
           RETURNING id)
         SELECT pg_notify('${DONE}', $4)${this.limited ? `, pg_notify('${WAKE}', '')` : ''} FROM done`,
        [runId, this.nodeId, owned.attempt, JSON.stringify({ r: runId, s: status })],
      ),
    );
    this.owned.delete(runId);
    return (rowCount ?? 0) > 0;
  }

  /**
   * Stores a new run (record, detail, first events, as PgRunStore.create) and queues it, in one
   * statement: one commit instead of the create's and the enqueue's.
   */
  async createQueued(record: RunRecord, detail: RunDetail, events: RunEvent[]): Promise<void> {
    await run(() =>
      this.db.query(CREATE_QUEUED, [
        ...recordValues(record),
        JSON.stringify(detail),
        ...eventsParam(events),
        sharedBlobs(record),
      ]),
    );
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
    const owned = this.owned.get(runId);
    if (!owned) return false;
    const values = [
      ...recordValues(end.record),
      this.nodeId,
      owned.attempt,
      JSON.stringify(end.detail),
      ...eventsParam(end.events),
      JSON.stringify({ r: runId, s: status }),
      sharedBlobs(end.record, 'output'),
    ];
    const { rowCount } = await run(() => this.db.query(completeWithSql(this.limited), values));
    let done = (rowCount ?? 0) > 0;
    if (!done) {
      const again = await run(() =>
        this.db.query(
          `SELECT 1 FROM runs WHERE id = $1 AND node = $2 AND attempt = $3 AND queue_state = 'done'`,
          [runId, this.nodeId, owned.attempt],
        ),
      );
      done = (again.rowCount ?? 0) > 0;
    }
    this.owned.delete(runId);
    return done;
  }

  /** Puts a run this node owns back in the queue (e.g. when the node shuts down before running it). */
  async release(runId: string): Promise<boolean> {
    const owned = this.owned.get(runId);
    if (!owned) return false;
    const { rowCount } = await run(() =>
      this.db.query(
        `WITH back AS (
           UPDATE runs SET queue_state = 'queued', queued_at = clock_timestamp(), node = NULL,
             lease_expires_at = NULL
           WHERE id = $1 AND node = $2 AND attempt = $3 AND queue_state = 'claimed'
           RETURNING id)
         SELECT pg_notify('${WAKE}', '') FROM back`,
        [runId, this.nodeId, owned.attempt],
      ),
    );
    this.owned.delete(runId);
    return (rowCount ?? 0) > 0;
  }

  /**
   * Stops renewing a run this node owns without touching its row (the database may be down):
   * its lease lapses and a claim takes it over, on any node, this one included.
   */
  forget(runId: string): void {
    this.owned.delete(runId);
  }

  /** Asks for a run's cancellation, from any node. */
  async cancel(runId: string): Promise<CancelOutcome> {
    return this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ queue_state: string | null; node: string | null }>(
        'SELECT queue_state, node FROM runs WHERE id = $1 FOR UPDATE',
        [runId],
      );
      const row = rows[0];
      if (!row) return { state: 'unknown' };
      switch (row.queue_state) {
        case 'queued':
          await tx.query(`UPDATE runs SET queue_state = 'done', cancel_requested = true WHERE id = $1`, [
            runId,
          ]);
          await tx.query('SELECT pg_notify($1, $2)', [DONE, JSON.stringify({ r: runId, s: 'cancelled' })]);
          return { state: 'dequeued' };
        case 'claimed':
          await tx.query('UPDATE runs SET cancel_requested = true WHERE id = $1', [runId]);
          await tx.query('SELECT pg_notify($1, $2)', [CANCEL, JSON.stringify({ r: runId, n: row.node })]);
          return { state: 'signalled', node: row.node ?? '' };
        case 'done':
          return { state: 'finished' };
        default:
          await tx.query('UPDATE runs SET cancel_requested = true WHERE id = $1', [runId]);
          return { state: 'not_queued' };
      }
    });
  }

  /**
   * Resolves once the run is done, whichever node ran it: from its done notification, or from
   * its row when it was done already (or finished while this node's listener was reconnecting).
   */
  async waitForDone(runId: string): Promise<DoneEvent> {
    let resolve!: (e: DoneEvent) => void;
    const done = new Promise<DoneEvent>((r) => (resolve = r));
    let set = this.waiters.get(runId);
    if (!set) this.waiters.set(runId, (set = new Set()));
    set.add(resolve);
    try {
      await this.checkDone([runId]);
    } catch (err) {
      set.delete(resolve);
      if (set.size === 0) this.waiters.delete(runId);
      throw err;
    }
    return done;
  }

  /** Runs this node owns now. */
  ownedRuns(): string[] {
    return [...this.owned.keys()];
  }

  /** Stops the timers and the listener. Owned runs stay claimed until their leases expire. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewTimer);
    clearInterval(this.expiryTimer);
    clearTimeout(this.reconnectTimer);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
  }

  private async checkDone(ids: string[]): Promise<void> {
    const { rows } = await run(() =>
      this.db.query<{ id: string; status: string }>(
        "SELECT id, status FROM runs WHERE id = ANY($1::text[]) AND queue_state = 'done'",
        [ids],
      ),
    );
    for (const r of rows) this.resolveWaiters({ runId: r.id, status: r.status });
  }

  private resolveWaiters(event: DoneEvent): void {
    const set = this.waiters.get(event.runId);
    if (!set) return;
    this.waiters.delete(event.runId);
    for (const resolve of set) resolve(event);
  }

  private signalCancel(runId: string): void {
    const owned = this.owned.get(runId);
    if (!owned || owned.cancelSignalled) return;
    owned.cancelSignalled = true;
    this.emit('cancel', { runId });
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
    if (msg.channel === WAKE) return this.wake();
    let payload: { r?: unknown; s?: unknown; n?: unknown };
    try {
      payload = JSON.parse(msg.payload ?? '') as typeof payload;
    } catch {
      return;
    }
    if (typeof payload.r !== 'string') return;
    if (msg.channel === CANCEL && payload.n === this.nodeId) this.signalCancel(payload.r);
    else if (msg.channel === DONE) {
      const event = { runId: payload.r, status: typeof payload.s === 'string' ? payload.s : 'unknown' };
      this.resolveWaiters(event);
      this.emit('done', event);
    }
  }

  private checkExpired(): void {
    if (this.closed) return;
    this.db
      .query<{ expired: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM runs WHERE queue_state = 'claimed'
           AND lease_expires_at < clock_timestamp() AND NOT (id = ANY($1::text[]))) AS expired`,
        [[...this.owned.keys()]],
      )
      .then(
        ({ rows }) => {
          if (rows[0]?.expired) this.wake();
        },
        () => undefined,
      );
  }

  private async connectListener(): Promise<void> {
    const client = new Client({
      connectionString: this.options.listenUrl ?? this.db.options.url,
      keepAlive: true,
      application_name: `sluice-run-queue:${this.nodeId}`,
    });
    let gone = false;
    const lost = (err?: Error) => {
      if (gone) return;
      gone = true;
      if (this.listener === client) this.listener = undefined;
      client.end().catch(() => undefined);
      if (this.closed) return;
      this.emit('disconnected', err ?? new Error('the listening connection ended'));
      this.scheduleReconnect();
    };
    client.on('error', lost);
    client.on('end', () => lost());
    client.on('notification', (msg) => this.onNotification(msg));
    try {
      await client.connect();
      await client.query(`LISTEN ${WAKE}; LISTEN ${CANCEL}; LISTEN ${DONE}`);
    } catch (err) {
      gone = true;
      await client.end().catch(() => undefined);
      throw mapDatabaseError(err);
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.listener = client;
    this.reconnectFailures = 0;
    this.emit('listening');
    // Notifications sent while no connection listened are lost: claim, look for cancels of
    // owned runs and for runs that waiters wait for, as if each had been heard.
    this.wake();
    void this.catchUp();
  }

  private async catchUp(): Promise<void> {
    try {
      const waiting = [...this.waiters.keys()];
      if (waiting.length > 0) await this.checkDone(waiting);
      if (this.owned.size > 0) await this.renew();
    } catch {
      // The next renewal or reconnect tries again.
    }
  }

  private scheduleReconnect(): void {
    if (this.closed || this.reconnectTimer) return;
    const max = this.options.maxReconnectDelayMs ?? 2000;
    const delay = Math.min(max, 50 * 2 ** this.reconnectFailures);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      this.connectListener().catch((err: Error) => {
        this.reconnectFailures++;
        if (this.closed) return;
        this.emit('disconnected', err);
        this.scheduleReconnect();
      });
    }, delay);
    this.reconnectTimer.unref();
  }
}

function toClaimed(r: ClaimRow, takeover: boolean): ClaimedRun {
  return {
    runId: r.id,
    tenant: r.tenant,
    automationId: r.automation_id,
    attempt: r.attempt,
    takeover,
    previousNode: r.previous_node ?? null,
    cancelRequested: r.cancel_requested,
  };
}

/** Runs a statement, turning connection failures into database_unavailable. */
async function run<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw mapDatabaseError(err);
  }
}

/** The run service's view of the queue (src/automation/runs/queue.ts). */
export function queuePort(queue: PgRunQueue): SharedRunQueue {
  return {
    nodeId: queue.nodeId,
    enqueue: (runId) => queue.enqueue(runId),
    queuedCount: (bound) => queue.queuedCount(bound),
    claim: (limit) => queue.claim(limit),
    complete: (runId, status) => queue.complete(runId, status),
    createQueued: (run, detail, events) => queue.createQueued(run, detail, events),
    completeWith: (runId, status, end) => queue.completeWith(runId, status, end),
    release: (runId) => queue.release(runId),
    forget: (runId) => queue.forget(runId),
    renew: () => queue.renew(),
    cancel: (runId) => queue.cancel(runId),
    waitForDone: (runId) => queue.waitForDone(runId),
    onWake: (listener) => void queue.on('wake', listener),
    onCancel: (listener) => void queue.on('cancel', (e) => listener(e.runId)),
    onLost: (listener) => void queue.on('lost', (e) => listener(e.runId)),
  };
}
