// Push output: statsd lines (plain or tagged) sent through hot-shots, which owns the socket,
// DNS caching, packet batching and TCP reconnects. Lines are composed here (statsd-lines.ts)
// because the upstream formats differ from hot-shots' own: tags folded into the name for plain
// statsd, and timers carrying a sample rate that hot-shots would otherwise apply by dropping.

import type { Logger } from '../../../core/log.js';
import StatsD from 'hot-shots';
import type { StatsSink } from '../types.js';
import { DeltaTracker } from './samples.js';
import { statsdLine, type LineFormat } from './statsd-lines.js';

export interface StatsdSinkOptions extends LineFormat {
  host: string;
  port: number;
  protocol: 'udp' | 'tcp';
  log?: Logger;
}

/** The part of hot-shots' client used here; `send` is public in its code but not in its types. */
interface RawClient {
  send(
    message: string,
    tags?: undefined,
    cardinality?: undefined,
    callback?: (err?: Error | null) => void,
  ): void;
  flush(callback?: (err?: Error | null) => void): void;
  close(callback?: (err?: Error) => void): void;
}

// hot-shots never calls back while a TCP statsd is unreachable; waiting is bounded so a dead
// statsd neither stalls the next flush nor the shutdown. Undelivered lines are dropped.
const CALLBACK_WAIT_MS = 1000;

function bounded(start: (done: () => void) => void): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, CALLBACK_WAIT_MS);
    start(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

// One UDP datagram that fits an Ethernet MTU with IP/UDP headers; statsd servers split on \n.
const MAX_PACKET = 1432;

export class StatsdSink implements StatsSink {
  private readonly client: RawClient;
  private readonly deltas = new DeltaTracker();
  private lastError = '';

  constructor(private readonly options: StatsdSinkOptions) {
    const client = new StatsD({
      host: options.host,
      port: options.port,
      protocol: options.protocol,
      maxBufferSize: MAX_PACKET,
      bufferFlushInterval: 1000,
      datadog: options.tagged,
      includeDataDogTags: false,
      originDetection: false,
      cacheDns: true,
      // A missing or slow statsd must never affect decisions: errors are logged once per kind.
      errorHandler: (err) => this.onError(err),
    });
    this.client = client as unknown as RawClient;
  }

  flush(counters: ReadonlyMap<string, number>): Promise<void> {
    for (const sample of this.deltas.next(counters)) this.client.send(statsdLine(sample, this.options));
    return bounded((done) => this.client.flush(done));
  }

  close(): Promise<void> {
    return bounded((done) => {
      try {
        this.client.close(done);
      } catch (err) {
        this.onError(err as Error);
        done();
      }
    });
  }

  private onError(err: Error): void {
    if (err.message === this.lastError) return;
    this.lastError = err.message;
    this.options.log?.warn(
      { err: err.message, host: this.options.host, port: this.options.port },
      'statsd output failed',
    );
  }
}
