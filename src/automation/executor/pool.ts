// The run pool: piscina worker threads executing runs. Cancellation is two-stage: a cooperative
// request on the run's port first, then (after the grace period, or at once if the run has not
// started) piscina's abort signal, which drops a queued task or terminates the worker thread.
// Either way the returned outcome always settles, so a cancelled run always ends.

import { MessageChannel } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { RunFailure } from './failure.js';
import type { RunTask, WorkerMessage } from './protocol.js';

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

function workerFile(): string {
  // Under tsx the sources are .ts; in the build they are .js next to each other in dist/.
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`../../../workers/automation-run.${ext}`, import.meta.url));
}

export class RunPool {
  private readonly piscina: Piscina;
  private running = 0;

  constructor(private readonly options: RunPoolOptions) {
    this.piscina = new Piscina({
      filename: workerFile(),
      minThreads: options.threads,
      maxThreads: options.threads,
      // One run per thread: every run is submitted with an abort signal (the hard stop after the
      // cancel grace terminates its thread), and piscina never gives a thread that runs an
      // abortable task a second one (its LeastBusyBalancer), so more per thread cannot happen.
      idleTimeout: 60_000,
    });
  }

  get threads(): number {
    return this.options.threads;
  }

  /** Threads running a run now (started, not yet settled). */
  get busy(): number {
    return this.running;
  }

  submit(
    task: Omit<RunTask, 'port' | 'diskReserveBytes'>,
    onMessage: (msg: WorkerMessage) => void,
    timeoutMs: number,
  ): RunHandle {
    const channel = new MessageChannel();
    const hard = new AbortController();
    let started = false;
    let cancelReason: string | undefined;
    let timedOut = false;
    let done: WorkerMessage | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    let timeoutTimer: NodeJS.Timeout | undefined;
    let settle!: (outcome: RunOutcome) => void;
    let settled = false;
    const outcome = new Promise<RunOutcome>((resolve) => (settle = resolve));

    const finish = (result: RunOutcome) => {
      if (settled) return;
      settled = true;
      if (started) this.running--;
      clearTimeout(graceTimer);
      clearTimeout(timeoutTimer);
      channel.port1.close();
      settle(result);
    };
    const stoppedOutcome = (detail: string): RunOutcome =>
      timedOut
        ? failed('run_timeout', `timed out after ${timeoutMs} ms${detail}`)
        : {
            kind: 'cancelled',
            error: new RunFailure(
              'cancelled',
              `cancelled${cancelReason ? `: ${cancelReason}` : ''}${detail}`,
            ),
          };

    const requestStop = (reason: string) => {
      if (settled || cancelReason !== undefined) return;
      cancelReason = reason;
      if (!started) {
        hard.abort(reason);
        return;
      }
      channel.port1.postMessage({ t: 'cancel', reason });
      graceTimer = setTimeout(() => hard.abort(reason), this.options.cancelGraceMs);
      graceTimer.unref();
    };

    channel.port1.on('message', (msg: WorkerMessage) => {
      if (settled) return;
      if (msg.t === 'started') {
        if (!started) this.running++;
        started = true;
        if (timeoutMs > 0) {
          timeoutTimer = setTimeout(() => {
            timedOut = true;
            requestStop('timeout');
          }, timeoutMs);
          timeoutTimer.unref();
        }
      }
      onMessage(msg);
      if (msg.t === 'done') {
        done = msg;
        if (msg.ok) finish({ kind: 'completed', output: msg.output });
        else if (msg.cancelled || cancelReason !== undefined) finish(stoppedOutcome(''));
        else finish(failed('automation_error', msg.error));
      }
    });
    // A worker that ends without `done` (killed, crashed) closes its end of the channel.
    channel.port1.on('close', () => {
      if (!settled && done === undefined) {
        finish(
          cancelReason !== undefined
            ? stoppedOutcome(' (worker terminated)')
            : failed('worker_crashed', 'worker ended without a result'),
        );
      }
    });

    this.piscina
      .run(
        { ...task, port: channel.port2, diskReserveBytes: this.options.diskReserveBytes },
        { signal: hard.signal, transferList: [channel.port2] as never },
      )
      .then(
        () => {
          // `done` normally arrived already; if not, the port's close event settles it.
          if (!settled && done === undefined)
            setTimeout(() => finish(failed('worker_crashed', 'worker ended without a result')), 1000).unref();
        },
        (err: unknown) => {
          if (settled) return;
          if (cancelReason !== undefined)
            finish(stoppedOutcome(started ? ' (worker terminated after the grace period)' : ''));
          else
            finish(
              failed('worker_crashed', `worker failed: ${err instanceof Error ? err.message : String(err)}`),
            );
        },
      );

    return {
      cancel: requestStop,
      get started() {
        return started;
      },
      outcome,
    };
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}
