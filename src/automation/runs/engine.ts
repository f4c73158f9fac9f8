// The state the run service's parts share (service.ts is the facade over them): the live runs of
// this node, the dependencies handed in at start, and the helpers every part uses. A live run is
// one this node holds from the queue (claimed, executing or having its end written); its record
// is kept in memory and written through; once it ends, the stored record is the truth.

import type { Logger } from '../../core/log.js';
import type { RunPool, RunHandle } from '../executor/pool.js';
import type { ProviderSettings } from '../executor/protocol.js';
import type { BlobStore } from '../files/blob-store.js';
import type { AutomationRecord, AutomationRegistry } from '../registry/service.js';
import type { Manifest } from '../registry/manifest.js';
import type { ScriptPool } from '../evals/index.js';
import { runFolder } from './folder.js';
import type { RunQueue } from './queue.js';
import type { RunSharing } from './sharing.js';
import type { RunObserver } from './metrics.js';
import type { RunStore } from './store.js';
import { RunTracing, type Tracing } from './tracing.js';
import type { TraceSpan } from '../../core/tracing/index.js';
import { TERMINAL, type RunDetail, type RunRecord } from './types.js';

export interface RunServiceOptions {
  runsDir: string;
  maxQueuedRuns: number;
  providers: ProviderSettings;
  log: Logger;
  /** Where the input files that name a blob come from. */
  blobs: BlobStore;
  /** Where input/output schemas with `pattern` are checked under a time limit; without it
   *  they are validated inline (tests with trusted manifests). */
  schemaPool?: ScriptPool;
  /** The run queue (in-process or PostgreSQL): every run is queued, claimed and ended through it. */
  queue: RunQueue;
  /** What of a run is put where other nodes can read it (nothing on one node). */
  sharing: RunSharing;
  /**
   * How many runs this node executes at once (its pool's threads), and so holds: a node claims no
   * run it cannot start at once, so a queued run waits for whichever node frees a thread first
   * (docs/automation.md, "Batching on PostgreSQL").
   */
  capacity: number;
  /** Told of each run that starts, ends or is taken over (the service's metrics). */
  observer?: RunObserver;
  /** The runs' traces (NO_TRACING when TRACING_ENABLED is false). */
  tracing: Tracing;
}

export interface ActiveRun {
  record: RunRecord;
  detail: RunDetail;
  seq: number;
  handle: RunHandle | undefined;
  cancelledBeforeSubmit: boolean;
  writes: Promise<unknown>[];
  lastEventMs: number;
  /**
   * The run is no longer this node's (its lease was lost, or the node shuts down and gave it
   * back). Its execution is stopped and its outcome is not recorded here.
   */
  abandoned: boolean;
  /** Settles when this node's execution of the run has ended. */
  executed: Promise<void>;
  /** The live record as it was before the end, shown to readers while the end is written. */
  beforeEnd?: RunRecord;
  /** This node's execution span of the run (tracing.ts); undefined with tracing off. */
  span: TraceSpan | undefined;
  /**
   * The bytes of output files the worker kept off the disk, by their path in the run's record
   * (KEPT_FILE_BYTES): stored by the run's end.
   */
  kept: Map<string, Buffer>;
}

/**
 * What readers see of a live run: its record, or while its end is being written the record as it
 * was before, so that a run reads as ended (here or on any node) only once its end, last events,
 * detail and files are stored.
 */
export function shown(active: ActiveRun): RunRecord {
  return TERMINAL.has(active.record.status) ? (active.beforeEnd ?? active.record) : active.record;
}

/**
 * A write of a live run, awaited together with the others when the run ends; marked handled now,
 * so one that fails meanwhile (the database is down) is not an unhandled rejection.
 */
export function track(active: ActiveRun, write: Promise<unknown>): void {
  write.catch(() => undefined);
  active.writes.push(write);
}

/**
 * A run this node admitted, kept while its creation commits: a claim of it here takes its record
 * from here instead of reading back what was just written (the in-process queue lets it be
 * claimed before that commit is done, local-queue.ts).
 */
export interface AdmittedRun {
  record: RunRecord;
  detail: RunDetail;
  /** The highest seq of its first events, and their time. */
  seq: number;
  at: number;
  automation: AutomationRecord;
  manifest: Manifest;
}

export class Engine {
  readonly active = new Map<string, ActiveRun>();
  /** Runs admitted here whose creation is being committed (see AdmittedRun). */
  readonly admitted = new Map<string, AdmittedRun>();
  /** Live runs whose end is being written (their pool thread is free). */
  readonly finishing = new WeakSet<ActiveRun>();
  /** Ends being written (Completion.finish): the service's close waits for them. */
  readonly ending = new Set<Promise<void>>();
  /** Cancels heard for runs being adopted (claimed, not yet live). */
  readonly cancelAsked = new Set<string>();
  closing = false;
  readonly tracing: RunTracing;

  constructor(
    readonly store: RunStore,
    readonly registry: AutomationRegistry,
    readonly pool: RunPool,
    readonly options: RunServiceOptions,
  ) {
    this.tracing = new RunTracing(options.tracing, () => options.queue.nodeId);
  }

  get queue(): RunQueue {
    return this.options.queue;
  }

  get log(): Logger {
    return this.options.log;
  }

  runDir(runId: string): string {
    return runFolder(this.options.runsDir, runId);
  }

  /** The live record of an unfinished run (see `shown`), else the stored one. */
  async get(id: string): Promise<RunRecord | undefined> {
    const active = this.active.get(id);
    return active ? shown(active) : this.store.get(id);
  }

  async getDetail(id: string): Promise<RunDetail | undefined> {
    return this.active.get(id)?.detail ?? (await this.store.getDetail(id));
  }
}
