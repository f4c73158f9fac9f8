// The background retention passes of the automation service: one every
// AUTOMATION_RETENTION_CHECK_INTERVAL (pass.ts says what a pass removes). Ages are measured on
// the service's clock (injectable, so tests move it). A pass that removed something is logged in
// one info line; every pass is reported to the metrics (metrics.ts).

import type { Logger } from '../../core/log.js';
import { Periodic } from '../../core/periodic.js';
import type { RetentionObserver } from './metrics.js';
import { retentionPass, REMOVAL_KINDS, type PassDeps, type PassResult } from './pass.js';

export interface RetentionRunnerOptions extends PassDeps {
  readonly log: Logger;
  readonly observer: RetentionObserver;
}

export class RetentionRunner {
  private readonly periodic: Periodic;
  /** The pass in progress: a pass asked for meanwhile starts after it. */
  private turn: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: RetentionRunnerOptions) {
    this.periodic = new Periodic(options.settings.intervalMs, () => this.pass());
  }

  start(): void {
    this.periodic.start();
  }

  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /**
   * One pass now (the timer's passes call this too), after any pass in progress; resolves with
   * what it removed, or undefined when it failed (counted and logged).
   */
  pass(): Promise<PassResult | undefined> {
    const next = this.turn.then(() => this.runPass());
    this.turn = next;
    return next;
  }

  private async runPass(): Promise<PassResult | undefined> {
    const started = performance.now();
    const { log, observer, now } = this.options;
    let result: PassResult;
    try {
      result = await retentionPass(this.options);
    } catch (err) {
      observer.failed(now());
      log.warn({ err }, 'retention pass failed; the next pass tries again');
      return undefined;
    }
    observer.passed(result, now());
    const { removed } = result;
    if (REMOVAL_KINDS.some((k) => removed[k].records > 0 || removed[k].bytes > 0))
      log.info(
        {
          runs: removed.runs.records,
          runBytes: removed.runs.bytes,
          uploads: removed.uploads.records,
          uploadBytes: removed.uploads.bytes,
          cachedFiles: removed.cache.records,
          cacheBytes: removed.cache.bytes,
          bundles: removed.bundles.records,
          bundleBytes: removed.bundles.bytes,
          blobBytes: removed.blobs.bytes,
          ms: Math.round(performance.now() - started),
        },
        'retention removed old data',
      );
    return result;
  }
}
