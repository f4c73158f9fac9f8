// The run service: the facade routes and the quality services call. It starts runs (pinned to a
// commit), feeds them to the pool, records what they report, cancels them and lets callers wait
// for them — every run through one RunQueue (queue.ts), whichever adapter is behind it. The
// parts, one job each: admission.ts (check, pin, store and queue), execution.ts (claims, the
// pool, worker messages), completion.ts (the end, outputs, durability), cancel.ts, waiters.ts;
// recorder.ts is the one place run events and record changes are written; engine.ts holds the
// live runs they share.

import type { Principal } from '../../core/auth/types.js';
import type { RunPool } from '../executor/pool.js';
import type { BuildEntry } from '../archives/zip-writer.js';
import type { AutomationRegistry } from '../registry/service.js';
import { Admission, type StartRunRequest } from './admission.js';
import { Cancels, type CancelResult } from './cancel.js';
import { Completion } from './completion.js';
import { Engine, shown, type RunServiceOptions } from './engine.js';
import { Execution } from './execution.js';
import { listRuns, type RunListPage, type RunListQuery } from './list.js';
import { RunRecorder } from './recorder.js';
import { RunFiles } from './run-files.js';
import type { RunStore } from './store.js';
import { emptyDetail, type RunArtifact, type RunDetail, type RunEvent, type RunRecord } from './types.js';
import { Waiters } from './waiters.js';

export type { StagedInputFile, StartRunRequest } from './admission.js';
export type { CancelResult } from './cancel.js';
export type { RunServiceOptions } from './engine.js';

export class RunService {
  private readonly engine: Engine;
  private readonly admission: Admission;
  private readonly execution: Execution;
  private readonly cancels: Cancels;
  private readonly waiters: Waiters;
  private readonly files: RunFiles;

  constructor(
    readonly store: RunStore,
    registry: AutomationRegistry,
    pool: RunPool,
    options: RunServiceOptions,
  ) {
    const e = (this.engine = new Engine(store, registry, pool, options));
    const recorder = new RunRecorder(store);
    this.admission = new Admission(e);
    this.waiters = new Waiters(e);
    this.execution = new Execution(e, recorder);
    const completion = new Completion(e, recorder);
    this.execution.completion = completion;
    this.admission.execution = this.execution;
    this.execution.waiters = this.waiters;
    completion.execution = this.execution;
    completion.waiters = this.waiters;
    this.cancels = new Cancels(e, recorder, completion, this.waiters);
    this.files = new RunFiles(options.runsDir, options.blobs, options.sharing.sharesFiles, (id, path) =>
      store.keptFile(id, path),
    );
    options.queue.onWake(() => this.execution.wake());
    options.queue.onCancel((runId) => {
      if (e.active.has(runId)) this.cancel(runId).catch(() => undefined);
      else e.cancelAsked.add(runId);
    });
    options.queue.onLost((runId) => {
      const active = e.active.get(runId);
      if (active) this.execution.abandon(active, 'the run was taken over by another node (lease lost)');
    });
  }

  /** Run files are shared with other nodes through the blob store (several nodes). */
  get sharesFiles(): boolean {
    return this.files.shared;
  }

  runDir(runId: string): string {
    return this.files.runDir(runId);
  }

  /**
   * A file of the run on this node's disk: here already, or fetched from the shared blob store
   * (a run executed or reviewed on another node); undefined when neither has it.
   */
  localFile(
    run: Pick<RunRecord, 'id'>,
    file: { path: string; sha256?: string | undefined },
  ): Promise<string | undefined> {
    return this.files.localFile(run, file);
  }

  /** The stored file behind an artifact path as listed (`output/report.md`), or an output's name. */
  artifact(run: RunRecord, path: string): Promise<{ file: RunArtifact; absPath: string } | undefined> {
    return this.files.artifact(run, path);
  }

  /** The entries of an artifact ZIP (with `expected`: the review bundle, expected/ too). */
  zipEntries(
    run: RunRecord,
    expected?: readonly { name: string; size: number; sha256?: string | undefined }[],
  ): Promise<{ entries: BuildEntry[]; bytes: number }> {
    return this.files.zipEntries(run, expected);
  }

  /** The live record of an unfinished run (see engine.ts `shown`), else the stored one. */
  get(id: string): Promise<RunRecord | undefined> {
    return this.engine.get(id);
  }

  getDetail(id: string): Promise<RunDetail | undefined> {
    return this.engine.getDetail(id);
  }

  /** The detail of a run the caller holds (empty for a run whose detail was never written). */
  async detailOf(run: RunRecord): Promise<RunDetail> {
    return (await this.getDetail(run.id)) ?? emptyDetail();
  }

  events(id: string): Promise<RunEvent[]> {
    return this.store.events(id);
  }

  /** Overlay for listings: live records of unended runs win over what was last committed. */
  readonly overlay = (run: RunRecord): RunRecord => {
    const active = this.engine.active.get(run.id);
    return active ? shown(active) : run;
  };

  /** A page of runs from the store, live records laid over it (see list.ts). */
  list(q: RunListQuery): Promise<RunListPage> {
    return listRuns(this.store, q, this.overlay);
  }

  start(req: StartRunRequest): Promise<RunRecord> {
    return this.admission.start(req);
  }

  /** Starts a new run from a stored run's input; `original` pins the stored run's commit. */
  rerun(
    id: string,
    version: string | undefined,
    principal: Pick<Principal, 'tenant' | 'user'>,
  ): Promise<RunRecord> {
    return this.admission.rerun(id, version, principal);
  }

  cancel(id: string): Promise<CancelResult> {
    return this.cancels.cancel(id);
  }

  /** Resolves once the run's creation is committed (see StartRunRequest `endAcknowledged`). */
  async committed(id: string): Promise<void> {
    await this.engine.queue.committed(id);
  }

  /** Resolves with the run once terminal, or with its current state after `timeoutMs` (0 = no limit). */
  waitFor(id: string, timeoutMs: number, known?: RunRecord): Promise<RunRecord> {
    return this.waiters.waitFor(id, timeoutMs, known);
  }

  /**
   * At start: what a previous process of this node left is taken up (the queue's recovery: runs
   * left queued are queued again, runs cut off mid-flight end failed), then claiming begins.
   */
  async recover(): Promise<{ requeued: number; failed: number }> {
    const { requeued, interrupted } = await this.engine.queue.recover();
    const ended: Promise<void>[] = [];
    for (const claim of interrupted) {
      await this.execution.adopt(claim, true);
      const active = this.engine.active.get(claim.runId);
      if (active) ended.push(active.executed);
    }
    await Promise.all(ended);
    void this.execution.pump();
    return { requeued, failed: interrupted.length };
  }

  /**
   * Stops taking runs. Each run executing here is stopped and put back in the queue: another
   * node runs it again, or on one node the next start takes it up (recover).
   */
  async close(): Promise<void> {
    const e = this.engine;
    e.closing = true;
    const mine = [...e.active.values()];
    for (const a of mine) this.execution.abandon(a, 'the node shuts down; the run goes back to the queue');
    // A run whose creation was held back for its end is written now (it goes back to the queue).
    await Promise.allSettled(mine.map((a) => e.queue.committed(a.record.id)));
    await Promise.all(mine.map((a) => a.executed));
    // Events and record changes written through while they ran: settled before the stores close.
    await Promise.allSettled(mine.flatMap((a) => a.writes));
    await Promise.allSettled([...e.ending]);
    await Promise.all(mine.map((a) => e.queue.release(a.record.id).catch(() => false)));
  }
}
