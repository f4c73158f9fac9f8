// The run pool: worker threads executing runs, one run per thread at a time. Each thread keeps
// one channel to the main thread for its whole life (its own worker port): a run is posted on
// it, and everything the run reports comes back on it tagged with the run's id. No channel is
// made or transferred per run. Cancellation is two-stage: a cooperative request on the channel
// first, then (after the grace period, or at once if the run has not started) the thread is
// terminated and a new one takes its place. A thread that ends while it runs a run (terminated,
// crashed, exited) settles exactly that run. Either way the returned outcome always settles,
// so a cancelled run always ends.

import type { Worker } from 'node:worker_threads';
import { startWorker } from '../../core/worker-entry.js';
import { RunFailure } from './failure.js';
import type { PoolMessage, RunReport, RunTask, WorkerMessage } from './protocol.js';

export type RunOutcome =
  | { kind: 'completed'; output: unknown }
  | { kind: 'failed'; error: RunFailure }
  | { kind: 'cancelled'; error: RunFailure };

const failed = (code: RunFailure['code'], message: string): RunOutcome => ({
  kind: 'failed',
  error: new RunFailure(code, message),
});

export interface RunHandle {
  /** Cooperative first; forced after the grace period. */
  cancel(reason: string): void;
  readonly started: boolean;
  readonly outcome: Promise<RunOutcome>;
}

export interface RunPoolOptions {
  threads: number;
  cancelGraceMs: number;
  /** Handed to every run: its output writes keep this much free on the disk (SLUICE_DISK_RESERVE). */
  diskReserveBytes: number;
}

/** One thread of the pool; `worker` is made when a run needs it (again after it ended). */
interface Slot {
  worker: Worker | undefined;
  run: PoolRun | undefined;
  /** Why the thread failed, if it reported an uncaught error before it ended. */
  error: string | undefined;
}

class PoolRun implements RunHandle {
  started = false;
  settled = false;
  cancelReason: string | undefined = undefined;
  timedOut = false;
  graceTimer: NodeJS.Timeout | undefined = undefined;
  timeoutTimer: NodeJS.Timeout | undefined = undefined;
  slot: Slot | undefined = undefined;
  readonly outcome: Promise<RunOutcome>;
  settle!: (outcome: RunOutcome) => void;

  constructor(
    private readonly pool: RunPool,
    readonly task: RunTask,
    readonly onMessage: (msg: WorkerMessage) => void,
    readonly timeoutMs: number,
  ) {
    this.outcome = new Promise<RunOutcome>((resolve) => (this.settle = resolve));
  }

  cancel(reason: string): void {
    this.pool.requestStop(this, reason);
  }

  stoppedOutcome(detail: string): RunOutcome {
    return this.timedOut
      ? failed('run_timeout', `timed out after ${this.timeoutMs} ms${detail}`)
      : {
          kind: 'cancelled',
          error: new RunFailure(
            'cancelled',
            `cancelled${this.cancelReason ? `: ${this.cancelReason}` : ''}${detail}`,
          ),
        };
  }
}

export class RunPool {
  private readonly slots: Slot[];
  /** Submitted runs waiting for a free thread, oldest first. */
  private readonly waiting: PoolRun[] = [];
  private running = 0;
  private closed = false;

  constructor(private readonly options: RunPoolOptions) {
    this.slots = Array.from({ length: options.threads }, () => ({
      worker: undefined,
      run: undefined,
      error: undefined,
    }));
    // Threads start now, so the first runs do not wait for a thread to load.
    for (const slot of this.slots) this.spawn(slot);
  }

  get threads(): number {
    return this.options.threads;
  }

  /** Threads running a run now (started, not yet settled). */
  get busy(): number {
    return this.running;
  }

  submit(
    task: Omit<RunTask, 'diskReserveBytes'>,
    onMessage: (msg: WorkerMessage) => void,
    timeoutMs: number,
  ): RunHandle {
    const run = new PoolRun(
      this,
      { ...task, diskReserveBytes: this.options.diskReserveBytes },
      onMessage,
      timeoutMs,
    );
    if (this.closed) {
      this.finish(run, failed('worker_crashed', 'the run pool is closed'));
      return run;
    }
    const slot = this.slots.find((s) => s.run === undefined);
    if (slot) this.post(slot, run);
    else this.waiting.push(run);
    return run;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const run of this.waiting.splice(0))
      this.finish(run, failed('worker_crashed', 'the run pool is closed'));
    await Promise.all(this.slots.flatMap((s) => (s.worker ? [s.worker.terminate()] : [])));
  }

  /** Called by a run's handle. */
  requestStop(run: PoolRun, reason: string): void {
    if (run.settled || run.cancelReason !== undefined) return;
    run.cancelReason = reason;
    if (!run.slot) {
      // Still waiting for a thread: it never runs.
      this.waiting.splice(this.waiting.indexOf(run), 1);
      this.finish(run, run.stoppedOutcome(''));
      return;
    }
    if (!run.started) {
      this.terminate(run.slot);
      return;
    }
    this.message(run.slot, { t: 'cancel', runId: run.task.runId, reason });
    run.graceTimer = setTimeout(() => {
      if (run.slot) this.terminate(run.slot);
    }, this.options.cancelGraceMs);
    run.graceTimer.unref();
  }

  private spawn(slot: Slot): Worker {
    const worker = startWorker('automation-run', {});
    slot.worker = worker;
    slot.error = undefined;
    worker.on('message', (report: RunReport) => this.report(slot, report));
    worker.on('error', (err) => (slot.error = err instanceof Error ? err.message : String(err)));
    // Messages the thread sent before it ended are delivered before 'exit'.
    worker.on('exit', () => this.exited(slot, worker));
    // An idle thread does not keep the process alive; one running a run does (post() refs it).
    if (!slot.run) worker.unref();
    return worker;
  }

  private post(slot: Slot, run: PoolRun): void {
    slot.run = run;
    run.slot = slot;
    this.message(slot, { t: 'run', task: run.task });
    slot.worker?.ref();
  }

  private message(slot: Slot, msg: PoolMessage): void {
    const worker = slot.worker ?? (this.closed ? undefined : this.spawn(slot));
    worker?.postMessage(msg);
  }

  private terminate(slot: Slot): void {
    // 'exit' settles the slot's run and frees the slot.
    void slot.worker?.terminate();
  }

  private report(slot: Slot, report: RunReport): void {
    const run = slot.run;
    // A report of a run this slot no longer runs (settled already) is dropped.
    if (!run || run.settled || run.task.runId !== report.runId) return;
    const msg = report.msg;
    if (msg.t === 'started') {
      if (!run.started) this.running++;
      run.started = true;
      if (run.timeoutMs > 0) {
        run.timeoutTimer = setTimeout(() => {
          run.timedOut = true;
          this.requestStop(run, 'timeout');
        }, run.timeoutMs);
        run.timeoutTimer.unref();
      }
    }
    run.onMessage(msg);
    if (msg.t === 'done') {
      this.finish(
        run,
        msg.ok
          ? { kind: 'completed', output: msg.output }
          : msg.cancelled || run.cancelReason !== undefined
            ? run.stoppedOutcome('')
            : failed('automation_error', msg.error),
      );
      this.free(slot);
    }
  }

  private exited(slot: Slot, worker: Worker): void {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    const run = slot.run;
    if (run && !run.settled) {
      this.finish(
        run,
        run.cancelReason !== undefined
          ? run.stoppedOutcome(run.started ? ' (worker terminated after the grace period)' : '')
          : failed(
              'worker_crashed',
              slot.error ? `worker failed: ${slot.error}` : 'worker ended without a result',
            ),
      );
    }
    // A new thread is made when the next run is posted to this slot.
    this.free(slot);
  }

  /** The slot's thread takes the next waiting run, if any. */
  private free(slot: Slot): void {
    slot.run = undefined;
    slot.worker?.unref();
    if (this.closed) return;
    const next = this.waiting.shift();
    if (next) this.post(slot, next);
  }

  private finish(run: PoolRun, result: RunOutcome): void {
    if (run.settled) return;
    run.settled = true;
    if (run.started) this.running--;
    clearTimeout(run.graceTimer);
    clearTimeout(run.timeoutTimer);
    run.slot = undefined;
    run.settle(result);
  }
}
