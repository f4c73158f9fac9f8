// A service's Prometheus metrics: one prom-client registry per service and thread, wrapped so
// services declare counters, gauges and histograms without importing prom-client (the import
// stays in this file; eslint.config.js). A service that runs on several front-end threads (the
// rate limit service) answers a scrape with the process's totals: the answering thread asks its
// peers over a BroadcastChannel for their registries as JSON and sums them with prom-client's
// AggregatorRegistry.aggregate, the cluster-mode aggregation adapted to worker threads
// (docs/operations.md, "Several threads").

import { BroadcastChannel } from 'node:worker_threads';
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type MetricObjectWithValues,
  type MetricValue,
} from 'prom-client';

export type Labels = Readonly<Record<string, string | number>>;

export interface CounterMetric {
  inc(labels?: Labels, value?: number): void;
}

export interface GaugeMetric {
  set(labels: Labels, value: number): void;
  inc(labels?: Labels, value?: number): void;
  dec(labels?: Labels, value?: number): void;
  /** Forgets every label set (a gauge computed at scrape time starts from nothing). */
  reset(): void;
}

export interface HistogramMetric {
  observe(labels: Labels, value: number): void;
}

/** Seconds: 1 ms to 60 s (requests, produce, publish). */
export const LATENCY_BUCKETS = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
];
/** Seconds: 10 ms to 1 h (automation runs and their queue wait). */
export const RUN_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];

/** How long a scrape waits for the other threads' answers before rendering without them. */
const PEER_WAIT_MS = 1_000;

type PeerMessage =
  | { type: 'ask'; id: string }
  | { type: 'answer'; id: string; metrics: MetricObjectWithValues<MetricValue<string>>[] };

export interface MetricsOptions {
  /** The service; the channel the threads of this service share is named after it. */
  service: string;
  /** How many front-end threads run this service in this process (1: no peers to ask). */
  threads: number;
  /** Add prom-client's process and Node.js metrics (one thread per process does). */
  defaultMetrics: boolean;
}

export class MetricsRegistry {
  private readonly registry = new Registry();
  private readonly channel: BroadcastChannel | undefined;
  private readonly waiting = new Map<
    string,
    (metrics: MetricObjectWithValues<MetricValue<string>>[]) => void
  >();
  private asked = 0;

  constructor(private readonly options: MetricsOptions) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry });
    if (options.threads > 1) {
      const channel = new BroadcastChannel(`sluice-metrics:${options.service}`);
      channel.onmessage = (event) => this.onPeerMessage((event as { data: PeerMessage }).data);
      channel.unref();
      this.channel = channel;
    }
  }

  readonly contentType = Registry.PROMETHEUS_CONTENT_TYPE;

  counter(name: string, help: string, labelNames: readonly string[] = []): CounterMetric {
    const counter = new Counter({ name, help, labelNames, registers: [this.registry] });
    return { inc: (labels = {}, value = 1) => counter.inc(labels, value) };
  }

  /** `collect` runs at every scrape, before the gauge is read (for values computed then). */
  gauge(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    collect?: (gauge: GaugeMetric) => void | Promise<void>,
  ): GaugeMetric {
    const gauge: Gauge = new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      ...(collect ? { collect: () => collect(handle) } : {}),
    });
    const handle: GaugeMetric = {
      set: (labels, value) => gauge.set(labels, value),
      inc: (labels = {}, value = 1) => gauge.inc(labels, value),
      dec: (labels = {}, value = 1) => gauge.dec(labels, value),
      reset: () => gauge.reset(),
    };
    return handle;
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[] = LATENCY_BUCKETS,
  ): HistogramMetric {
    const histogram = new Histogram({
      name,
      help,
      labelNames,
      buckets: [...buckets],
      registers: [this.registry],
    });
    return { observe: (labels, value) => histogram.observe(labels, value) };
  }

  /** The Prometheus text of this service in this process (every thread's counts summed). */
  async render(): Promise<string> {
    if (!this.channel) return this.registry.metrics();
    const own = await this.registry.getMetricsAsJSON();
    const peers = await this.askPeers();
    return AggregatorRegistry.aggregate([own, ...peers]).metrics();
  }

  close(): void {
    this.channel?.close();
    for (const resolve of this.waiting.values()) resolve([]);
    this.waiting.clear();
  }

  private askPeers(): Promise<MetricObjectWithValues<MetricValue<string>>[][]> {
    const channel = this.channel!;
    const id = `${process.pid}:${this.options.service}:${Math.random().toString(36).slice(2)}:${++this.asked}`;
    const expected = this.options.threads - 1;
    const answers: MetricObjectWithValues<MetricValue<string>>[][] = [];
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(answers);
      };
      // A thread being restarted does not answer: render without it rather than hang the scrape.
      const timer = setTimeout(done, PEER_WAIT_MS);
      timer.unref();
      this.waiting.set(id, (metrics) => {
        answers.push(metrics);
        if (answers.length >= expected) done();
      });
      channel.postMessage({ type: 'ask', id } satisfies PeerMessage);
    });
  }

  private onPeerMessage(message: PeerMessage): void {
    if (message.type === 'answer') {
      this.waiting.get(message.id)?.(message.metrics);
      return;
    }
    void this.registry.getMetricsAsJSON().then(
      (metrics) =>
        this.channel?.postMessage({ type: 'answer', id: message.id, metrics } satisfies PeerMessage),
      () => undefined,
    );
  }
}
