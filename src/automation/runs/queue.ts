// The run queue port. The run service runs every run through it, whichever adapter is behind
// it: the in-process queue (local-queue.ts: LMDB, one node) or the PostgreSQL queue shared by
// several nodes (src/automation/pg/run-queue.ts). A started run is stored and queued in one
// step; a node claims runs while its pool has room, holds each under a lease (fenced by its
// attempt), and ends it with a write that succeeds only while the run is still its own.

import { CodedError } from '../../core/errors.js';
import type { RunDetail, RunEvent, RunRecord } from './types.js';

export interface QueueClaim {
  runId: string;
  /** 1 for the first claim; each takeover adds one. */
  attempt: number;
  /** The run's lease had expired on another node: it is run again here. */
  takeover: boolean;
  previousNode: string | null;
  /** A cancel was asked for before the claim. */
  cancelRequested: boolean;
  /**
   * What the claim read of the run together with claiming it, when the adapter reads it in the
   * same round trip (PostgreSQL): the claiming node then reads nothing more to run it.
   */
  stored?: ClaimedState;
}

/** A claimed run as stored: its record, detail, and its last event's seq and time (ms). */
export interface ClaimedState {
  record: RunRecord;
  detail: RunDetail | undefined;
  lastSeq: number;
  lastEventMs: number;
}

export type QueueCancel =
  /** Still queued: taken out of the queue (its waiters hear it done); the caller records the end. */
  | { state: 'dequeued' }
  /** Claimed: the owning node was told. */
  | { state: 'signalled'; node: string }
  | { state: 'finished' }
  /** Stored but not in the queue: the caller ends it. */
  | { state: 'not_queued' }
  | { state: 'unknown' };

/** What the end of a run writes together with its done state (completeWith). */
export interface RunEnd {
  record: RunRecord;
  detail: RunDetail;
  /** Its last events (the terminal one). */
  events: RunEvent[];
  /**
   * Output files' content to store in the blob store with the end, in the same commit (small
   * files, RunSharing.putOutput), each named by its sha256; stored content is kept as it is.
   */
  blobs?: { sha256: string; content: Buffer }[];
  /**
   * Output files the worker kept off the disk and no shared store took (one node): stored with
   * the run's record in the same commit, read back with RunStore.keptFile. An adapter whose
   * backend shares every output (RunSharing) is never given any.
   */
  files?: KeptFile[];
}

/** An output file's bytes stored with its run (RunEnd.files), by its path in the run's record. */
export interface KeptFile {
  path: string;
  content: Buffer;
}

/** What a queue found at start that a previous process of this node left behind. */
export interface QueueRecovery {
  /** Stored runs that were queued again. */
  requeued: number;
  /** Runs that were executing when the process stopped, now owned by this node: end them failed. */
  interrupted: QueueClaim[];
}

/** How a new run is to be stored. */
export interface CreateOptions {
  /**
   * Only the run's end is acknowledged (a synchronous start): the adapter may run it before its
   * creation is committed and write the two together, and resolve before anything is
   * committed. `committed` then makes the creation durable on its own, when it must be after all.
   */
  endAcknowledged?: boolean;
  /**
   * Nothing about the run is answered before its end (a synchronous start), unless `committed`
   * was awaited first: an adapter whose stored runs are visible at once may commit the creation
   * without waiting for it to be durable, as the end's durable commit makes it durable with it.
   */
  answeredAtEnd?: boolean;
  /**
   * The run is refused (QueueFullError, nothing stored) when it would be queued while this many
   * runs wait in the queue for any node already. Checked in the step that stores it, so a start
   * costs no count of its own; like any count of a queue other nodes add to, it is a bound, not a
   * lock: starts on several nodes at the same moment may each find room. Not checked for a run
   * stored claimed (createClaimed): it does not wait in the queue.
   */
  maxQueued?: number;
}

/** A start refused by CreateOptions.maxQueued: `queued` runs (at least) wait in the queue. */
export class QueueFullError extends CodedError {
  constructor(readonly queued: number) {
    super('queue_full', `${queued} runs are queued`);
  }
}

export interface RunQueue {
  readonly nodeId: string;
  /** Stores a new run (as RunStore.create) and queues it, in one step; every node is woken. */
  createQueued(run: RunRecord, detail: RunDetail, events: RunEvent[], options?: CreateOptions): Promise<void>;
  /**
   * Stores a new run that this node has room to run, and claims it for this node in the same
   * step when the adapter can (the run is then never queued: no wake, no claim of its own);
   * resolves once committed with the claim, or undefined when the run was stored and queued as
   * by createQueued instead (concurrency limits decide who runs it; or the adapter's claim costs
   * nothing, so it queues).
   */
  createClaimed(
    run: RunRecord,
    detail: RunDetail,
    events: RunEvent[],
    options?: CreateOptions,
  ): Promise<QueueClaim | undefined>;
  /**
   * Resolves once the run's creation is committed (at once unless it was created with
   * `endAcknowledged` and is not written yet).
   */
  committed(runId: string): Promise<void>;
  /** Runs waiting to be claimed by any node, counted up to `bound`. */
  queuedCount(bound: number): Promise<number>;
  /** Claims up to `limit` runs (takeovers of expired leases first), within the concurrency limits. */
  claim(limit: number): Promise<QueueClaim[]>;
  /**
   * Writes the end of a run this node owns (its final record, detail and last events) and marks
   * it done, on the condition that the node still holds the run: that condition is the lease
   * check. False when it does not: nothing is written. True also when this node had completed
   * it already (a retry after a write whose answer was lost).
   */
  completeWith(runId: string, status: string, end: RunEnd): Promise<boolean>;
  /** Puts an owned run back in the queue. */
  release(runId: string): Promise<boolean>;
  /** Stops holding an owned run without a write: a claim takes it over later. */
  forget(runId: string): void;
  cancel(runId: string): Promise<QueueCancel>;
  /**
   * Resolves once the run is done on any node: with its final record when this queue wrote that
   * end itself and it is committed (completeWith here), so the waiter need not read back what
   * was just written; otherwise with undefined (the caller reads the stored record).
   */
  waitForDone(runId: string): Promise<RunRecord | undefined>;
  /** At start: queues again what a previous process left queued; names runs it cut off. */
  recover(): Promise<QueueRecovery>;
  /** Runs may be claimable. */
  onWake(listener: () => void): void;
  /** A cancel for a run this node owns. */
  onCancel(listener: (runId: string) => void): void;
  /** A run this node owned is no longer its own: stop executing it. */
  onLost(listener: (runId: string) => void): void;
}
