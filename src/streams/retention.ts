// The background retention pass: every STREAMS_RETENTION_CHECK_INTERVAL the log removes what
// its topics' retention.ms / retention.bytes no longer keep (TopicLog.enforceRetention). Time is
// read from the service's clock (injectable, so tests move it). Each partition a pass trimmed is
// logged, and the totals are kept in the counters below for /metrics.

import type { Logger } from '../core/log.js';
import { Periodic } from '../core/periodic.js';
import type { RetentionRemoval, TopicLog } from './log/types.js';

/** Totals since the process started, for the metrics endpoint (read with retentionStats()). */
interface Counters {
  removedRecords: number;
  removedBytes: number;
  passes: number;
  errors: number;
  /** Clock time (ms since the epoch) at which the last pass ended; 0 before the first. */
  lastPassAt: number;
  /** How long the last pass took (ms, wall clock). */
  lastPassMs: number;
}

const counters: Counters = {
  removedRecords: 0,
  removedBytes: 0,
  passes: 0,
  errors: 0,
  lastPassAt: 0,
  lastPassMs: 0,
};

/** A snapshot of the retention counters (records/bytes removed, passes, errors, last pass). */
export function retentionStats(): Readonly<Counters> {
  return { ...counters };
}

export interface RetentionOptions {
  readonly intervalMs: number;
  readonly now: () => number;
  readonly log: Logger;
}

/** Runs passes one after another, `intervalMs` apart, until stopped. */
export class RetentionRunner {
  private readonly periodic: Periodic;

  constructor(
    private readonly topicLog: TopicLog,
    private readonly options: RetentionOptions,
  ) {
    this.periodic = new Periodic(options.intervalMs, () => this.pass());
  }

  start(): void {
    this.periodic.start();
  }

  /** One pass now (the timer's passes call this too); resolves with what it removed. */
  async pass(): Promise<RetentionRemoval[]> {
    const started = performance.now();
    try {
      const removed = await this.topicLog.enforceRetention(this.options.now());
      for (const r of removed) {
        counters.removedRecords += r.records;
        counters.removedBytes += r.bytes;
        this.options.log.info(
          {
            topic: r.topic,
            partition: r.partition,
            records: r.records,
            bytes: r.bytes,
            beginning_offset: r.beginning,
          },
          'retention removed old records',
        );
      }
      return removed;
    } catch (error) {
      counters.errors++;
      this.options.log.warn({ err: error }, 'retention pass failed; the next pass tries again');
      return [];
    } finally {
      counters.passes++;
      counters.lastPassAt = this.options.now();
      counters.lastPassMs = performance.now() - started;
    }
  }

  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void> {
    return this.periodic.stop();
  }
}
