// The run queue several nodes share (PostgreSQL: src/automation/pg/run-queue.ts). The run service
// depends on this port only: with one, a started run is queued and executed by whichever node
// claims it; without one (LMDB, one node) runs go straight to this process's pool.

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
}

export type QueueCancel =
  | { state: 'dequeued' }
  | { state: 'signalled'; node: string }
  | { state: 'finished' }
  | { state: 'not_queued' }
  | { state: 'unknown' };

/** What the end of a run writes together with its done state (completeWith). */
export interface RunEnd {
  record: RunRecord;
  detail: RunDetail;
  /** Its last events (the terminal one). */
  events: RunEvent[];
}

export interface SharedRunQueue {
  readonly nodeId: string;
  /** Queues a stored run; every node is woken. */
  enqueue(runId: string): Promise<boolean>;
  /** Runs waiting to be claimed by any node, counted up to `bound`. */
  queuedCount(bound: number): Promise<number>;
  claim(limit: number): Promise<QueueClaim[]>;
  /**
   * Optional, for a queue that shares the run store's database: stores a new run (as
   * RunStore.create) and queues it in one commit. Without it the run is created, then enqueued.
   */
  createQueued?(run: RunRecord, detail: RunDetail, events: RunEvent[]): Promise<void>;
  /** False when this node no longer owns the run (taken over): its outcome must not count. */
  complete(runId: string, status: string): Promise<boolean>;
  /**
   * Optional, as createQueued: writes the end of a run this node owns (its final record, detail
   * and last events) and completes it in one commit, on the condition that the node still holds
   * the run, so that condition is the lease check. False when it does not: nothing is written.
   * Without it the service renews the lease, updates the store, then completes.
   */
  completeWith?(runId: string, status: string, end: RunEnd): Promise<boolean>;
  /** Puts an owned run back in the queue. */
  release(runId: string): Promise<boolean>;
  /** Stops renewing an owned run's lease without a write: another claim takes it over later. */
  forget(runId: string): void;
  /** Extends owned leases; resolves with the runs this node lost. */
  renew(): Promise<string[]>;
  cancel(runId: string): Promise<QueueCancel>;
  /** Resolves once the run is done on any node. */
  waitForDone(runId: string): Promise<unknown>;
  /** Runs may be claimable. */
  onWake(listener: () => void): void;
  /** A cancel for a run this node owns. */
  onCancel(listener: (runId: string) => void): void;
  /** A run this node owned is no longer its own: stop executing it. */
  onLost(listener: (runId: string) => void): void;
}
