// The in-process run queue (one node, LMDB): the RunQueue port over the run store. A queued run
// is stored (status `pending`) and its id kept in this process's queue; claims take the oldest
// queued runs that the concurrency limits allow; an owned run's end is written to the store and
// its waiters told. Nothing else shares the runs, so a claim is never lost to another node: a run
// given up (forget) is taken over by this node's next claim, as a lapsed lease would be. At start,
// runs a previous process left queued are queued again, and runs it was executing are handed back
// as interrupted (they end failed: their worker died with the process).
//
// A new run is queued as soon as its commit is issued, not once it is done: its execution
// overlaps the commit (the claimant has the record from admission, engine.ts `admitted`), and
// createQueued still resolves only once the run is committed, so what an answer acknowledges is
// stored. lmdb-js commits in the order writes were issued, so whatever the run writes later
// (events, its end) lands with or after its creation. If that commit fails the run is taken back
// out: dropped from the queue, or given up by the node executing it (its end is never written).

import {
  QueueFullError,
  type ClaimedState,
  type CreateOptions,
  type QueueCancel,
  type QueueClaim,
  type QueueRecovery,
  type RunEnd,
  type RunQueue,
} from './queue.js';
import type { LmdbRunStore } from './store.js';
import { QUEUED, TERMINAL, type RunDetail, type RunEvent, type RunRecord } from './types.js';

/** What the queue needs of the run store: the LMDB store's reads, its create and its end. */
export type LocalQueueStore = Pick<
  LmdbRunStore,
  'create' | 'createDeferred' | 'flush' | 'end' | 'get' | 'unfinished'
>;

/**
 * How long a synchronously started run's creation is held back for its end to be written with it
 * (LmdbRunStore.createDeferred): longer than a quick run takes, short enough that a run list
 * shows a longer one as it runs.
 */
const DEFERRED_FLUSH_MS = 50;

export interface LocalQueueOptions {
  /** Running runs per tenant / per automation on this node; 0: no limit. */
  tenantConcurrency: number;
  automationConcurrency: number;
  /** See DEFERRED_FLUSH_MS. */
  deferredFlushMs?: number;
}

interface Entry {
  runId: string;
  tenant: string;
  automationId: string;
  /** Set for a run given up by its holder: the next claim takes it over. */
  previousNode?: string;
  /**
   * A run created by this process, as it was created: its claim hands it over (QueueClaim
   * `stored`) instead of the claimant reading back what was just written.
   */
  stored?: ClaimedState;
}

interface Owned extends Entry {
  attempt: number;
  cancelSignalled: boolean;
}

export class LocalRunQueue implements RunQueue {
  readonly nodeId = 'local';
  private readonly queued: Entry[] = [];
  private readonly owned = new Map<string, Owned>();
  /** Claims so far per run (the attempt of the next is one more). */
  private readonly attempts = new Map<string, number>();
  private readonly cancelAsked = new Set<string>();
  /** Runs whose creation failed to commit while one of them was claimed: never ended, dropped. */
  private readonly unstored = new Set<string>();
  private readonly waiters = new Map<
    string,
    Set<{ resolve: (end: RunRecord | undefined) => void; reject: (e: Error) => void }>
  >();
  private readonly listeners = {
    wake: [] as (() => void)[],
    cancel: [] as ((runId: string) => void)[],
    lost: [] as ((runId: string) => void)[],
  };
  private wakePending = false;
  private closed = false;

  constructor(
    private readonly store: LocalQueueStore,
    private readonly options: LocalQueueOptions,
  ) {}

  async createQueued(
    run: RunRecord,
    detail: RunDetail,
    events: RunEvent[],
    options: CreateOptions = {},
  ): Promise<void> {
    if (options.maxQueued !== undefined && this.queued.length >= options.maxQueued)
      throw new QueueFullError(this.queued.length);
    const committed = options.endAcknowledged
      ? this.store.createDeferred(run, detail, events, this.options.deferredFlushMs ?? DEFERRED_FLUSH_MS)
      : this.store.create(run, detail, events);
    const last = events[events.length - 1];
    this.queued.push({
      runId: run.id,
      tenant: run.tenant,
      automationId: run.automationId,
      // The claimant adds to its detail while the creation may still be encoding this one: its
      // own arrays, so nothing it adds reaches the stored creation.
      stored: {
        record: run,
        detail: {
          ...detail,
          steps: [...detail.steps],
          trace: [...detail.trace],
          usage: { ...detail.usage, tokens: { ...detail.usage.tokens } },
        },
        lastSeq: last?.seq ?? 0,
        lastEventMs: last ? Date.parse(last.timestamp) : run.createdAt,
      },
    });
    this.wake();
    if (options.endAcknowledged) {
      // Written with its end (or flushed): a failed write takes the run back as below.
      committed.catch(() => this.takeBack(run.id));
      return;
    }
    try {
      await committed;
    } catch (err) {
      this.takeBack(run.id);
      throw err;
    }
  }

  committed(runId: string): Promise<void> {
    return this.store.flush(runId);
  }

  /**
   * Queued as by createQueued: a claim here costs no statement, and a queued run executes while
   * its creation commits (see above), so claiming it in the creation would gain nothing.
   */
  async createClaimed(
    run: RunRecord,
    detail: RunDetail,
    events: RunEvent[],
    options?: CreateOptions,
  ): Promise<undefined> {
    await this.createQueued(run, detail, events, options);
    return undefined;
  }

  /** A run whose creation did not commit leaves the queue, or the node executing it drops it. */
  private takeBack(runId: string): void {
    const at = this.queued.findIndex((e) => e.runId === runId);
    if (at >= 0) {
      this.queued.splice(at, 1);
      this.resolveWaiters(runId);
      return;
    }
    if (!this.owned.has(runId)) return;
    this.unstored.add(runId);
    for (const l of this.listeners.lost) l(runId);
  }

  queuedCount(bound: number): Promise<number> {
    return Promise.resolve(Math.min(bound, this.queued.length));
  }

  claim(limit: number): Promise<QueueClaim[]> {
    if (limit <= 0 || this.closed) return Promise.resolve([]);
    const { tenantConcurrency: tenantLimit, automationConcurrency: automationLimit } = this.options;
    // Counts of the runs held, only when a limit needs them.
    const limited = tenantLimit > 0 || automationLimit > 0;
    const count = new Map<string, number>();
    const add = (key: string) => count.set(key, (count.get(key) ?? 0) + 1);
    if (limited)
      for (const o of this.owned.values()) {
        add(`t:${o.tenant}`);
        add(`a:${o.automationId}`);
      }
    const claims: QueueClaim[] = [];
    const taken = new Set<Entry>();
    // Runs given up first (as expired leases are taken over first), then the oldest queued.
    const givenUp = this.queued.some((e) => e.previousNode !== undefined);
    for (const takeovers of givenUp ? [true, false] : [false]) {
      for (const entry of this.queued) {
        if (claims.length >= limit) break;
        if ((entry.previousNode !== undefined) !== takeovers) continue;
        if (limited) {
          const t = `t:${entry.tenant}`;
          const a = `a:${entry.automationId}`;
          if (tenantLimit > 0 && (count.get(t) ?? 0) >= tenantLimit) continue;
          if (automationLimit > 0 && (count.get(a) ?? 0) >= automationLimit) continue;
          add(t);
          add(a);
        }
        taken.add(entry);
        claims.push(this.take(entry));
      }
    }
    if (taken.size > 0) {
      // The claimed entries out, in one pass, the rest kept in order.
      let kept = 0;
      for (const e of this.queued) if (!taken.has(e)) this.queued[kept++] = e;
      this.queued.length = kept;
    }
    return Promise.resolve(claims);
  }

  /** A queued run made this node's (claim): its attempt counted, its claim built. */
  private take(entry: Entry): QueueClaim {
    const attempt = (this.attempts.get(entry.runId) ?? 0) + 1;
    this.attempts.set(entry.runId, attempt);
    const cancelRequested = this.cancelAsked.has(entry.runId);
    const { stored, ...held } = entry;
    this.owned.set(entry.runId, { ...held, attempt, cancelSignalled: cancelRequested });
    const claim: QueueClaim = {
      runId: entry.runId,
      attempt,
      takeover: entry.previousNode !== undefined,
      previousNode: entry.previousNode ?? null,
      cancelRequested,
    };
    if (stored) claim.stored = stored;
    return claim;
  }

  async completeWith(runId: string, status: string, end: RunEnd): Promise<boolean> {
    if (!this.owned.has(runId) || this.unstored.has(runId)) return false;
    void status;
    try {
      // One transaction, shared with the ends (and other writes) issued in the same turn.
      await this.store.end(end.record, end.detail, end.events, end.files);
    } catch (err) {
      this.done(runId);
      throw err;
    }
    // Committed: waiters get the end as written, with no read of it.
    this.done(runId, end.record);
    return true;
  }

  release(runId: string): Promise<boolean> {
    const owned = this.owned.get(runId);
    if (!owned) return Promise.resolve(false);
    this.owned.delete(runId);
    if (this.unstored.delete(runId)) {
      this.done(runId);
      return Promise.resolve(true);
    }
    this.queued.push({ runId, tenant: owned.tenant, automationId: owned.automationId });
    this.wake();
    return Promise.resolve(true);
  }

  forget(runId: string): void {
    const owned = this.owned.get(runId);
    if (!owned) return;
    this.owned.delete(runId);
    if (this.unstored.delete(runId)) return this.done(runId);
    this.queued.push({
      runId,
      tenant: owned.tenant,
      automationId: owned.automationId,
      previousNode: this.nodeId,
    });
    this.wake();
  }

  async cancel(runId: string): Promise<QueueCancel> {
    const at = this.queued.findIndex((e) => e.runId === runId);
    if (at >= 0) {
      this.queued.splice(at, 1);
      this.cancelAsked.delete(runId);
      this.resolveWaiters(runId);
      return { state: 'dequeued' };
    }
    const owned = this.owned.get(runId);
    if (owned) {
      if (!owned.cancelSignalled) {
        owned.cancelSignalled = true;
        for (const l of this.listeners.cancel) l(runId);
      }
      return { state: 'signalled', node: this.nodeId };
    }
    const run = await this.store.get(runId);
    if (!run) return { state: 'unknown' };
    if (TERMINAL.has(run.status)) return { state: 'finished' };
    this.cancelAsked.add(runId);
    return { state: 'not_queued' };
  }

  async waitForDone(runId: string): Promise<RunRecord | undefined> {
    if (this.closed) throw new Error('the run queue is closed');
    const done = new Promise<RunRecord | undefined>((resolve, reject) => {
      let set = this.waiters.get(runId);
      if (!set) this.waiters.set(runId, (set = new Set()));
      set.add({ resolve, reject });
    });
    // Ended before the waiter was registered: its end is stored.
    if (!this.queued.some((e) => e.runId === runId) && !this.owned.has(runId)) {
      const run = await this.store.get(runId);
      if (!run || TERMINAL.has(run.status)) this.resolveWaiters(runId);
    }
    return done;
  }

  async recover(): Promise<QueueRecovery> {
    let requeued = 0;
    const interrupted: QueueClaim[] = [];
    for (const run of await this.store.unfinished()) {
      const entry = { runId: run.id, tenant: run.tenant, automationId: run.automationId };
      if (QUEUED.has(run.status)) {
        this.queued.push(entry);
        requeued++;
        continue;
      }
      const attempt = (this.attempts.get(run.id) ?? 0) + 1;
      this.attempts.set(run.id, attempt);
      this.owned.set(run.id, { ...entry, attempt, cancelSignalled: false });
      interrupted.push({
        runId: run.id,
        attempt,
        takeover: false,
        previousNode: null,
        cancelRequested: false,
      });
    }
    if (requeued > 0) this.wake();
    return { requeued, interrupted };
  }

  onWake(listener: () => void): void {
    this.listeners.wake.push(listener);
  }

  onCancel(listener: (runId: string) => void): void {
    this.listeners.cancel.push(listener);
  }

  onLost(listener: (runId: string) => void): void {
    this.listeners.lost.push(listener);
  }

  /** Stops claiming; waiters still waiting are told the queue is gone. */
  close(): void {
    this.closed = true;
    for (const [runId, set] of this.waiters) {
      this.waiters.delete(runId);
      for (const w of set) w.reject(new Error('the run queue is closed'));
    }
  }

  /** `end`: the run's final record, when it is what was just committed. */
  private done(runId: string, end?: RunRecord): void {
    this.owned.delete(runId);
    this.attempts.delete(runId);
    this.cancelAsked.delete(runId);
    this.resolveWaiters(runId, end);
    // A slot freed: runs held back by a limit may be claimable now.
    if (this.options.tenantConcurrency > 0 || this.options.automationConcurrency > 0) this.wake();
  }

  private resolveWaiters(runId: string, end?: RunRecord): void {
    const set = this.waiters.get(runId);
    if (!set) return;
    this.waiters.delete(runId);
    for (const w of set) w.resolve(end);
  }

  private wake(): void {
    // Many wakes in one turn make one: a claim takes all that is there.
    if (this.wakePending || this.closed) return;
    this.wakePending = true;
    setImmediate(() => {
      this.wakePending = false;
      if (!this.closed) for (const l of this.listeners.wake) l();
    });
  }
}
