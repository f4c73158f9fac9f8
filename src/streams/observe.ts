// The streams service's metrics and readiness (docs/operations.md). Produce and fetch volumes are
// counted by a TopicLog decorator, so every HTTP path (Kafka-REST, Confluent v3, WebSocket push)
// is counted once without touching the routes. Topic names are operator-chosen: the first
// TOPIC_LABELS topics keep their name as a label, later ones count under "_other". Consumer lag
// is computed at scrape time from the committed and the end offsets, up to LAG_SERIES series.

import { boundedLabel, type ServiceOperations } from '../core/observe/index.js';
import type { ConsumerGroups } from './groups/coordinator.js';
import { retentionStats } from './retention.js';
import type {
  AppendFn,
  AppendListener,
  AppendRecord,
  ReadLimits,
  RecordToStore,
  RetentionRemoval,
  StoredRecord,
  TopicConfigs,
  TopicInfo,
  TopicLog,
} from './log/types.js';

export const TOPIC_LABELS = 100;
export const GROUP_LABELS = 100;
export const LAG_SERIES = 1_000;

/** What the JetStream log reports (JetStreamLogOptions.observe). */
export interface JetStreamObserver {
  publish(seconds: number, ok: boolean): void;
  reconnect(): void;
}

function appendBytes(records: readonly RecordToStore[]): number {
  let bytes = 0;
  for (const r of records) {
    bytes += r.valueJson.length;
    if (r.key !== null) bytes += r.key.length;
  }
  return bytes;
}

export class StreamsMetrics {
  readonly topicLabel = boundedLabel(TOPIC_LABELS);
  private readonly groupLabel = boundedLabel(GROUP_LABELS);
  private readonly produced;
  private readonly producedBytes;
  private readonly fetched;
  private readonly fetchedBytes;
  private readonly produceDuration;
  private readonly publishDuration;
  private readonly reconnects;

  constructor(private readonly ops: ServiceOperations) {
    const m = ops.metrics;
    this.produced = m.counter('sluice_streams_records_produced_total', 'Records appended to topics', [
      'topic',
    ]);
    this.producedBytes = m.counter(
      'sluice_streams_bytes_produced_total',
      'Bytes of record keys and values appended to topics',
      ['topic'],
    );
    this.fetched = m.counter('sluice_streams_records_fetched_total', 'Records read from topics', ['topic']);
    this.fetchedBytes = m.counter(
      'sluice_streams_bytes_fetched_total',
      'Bytes of records read from topics (their stored size)',
      ['topic'],
    );
    this.produceDuration = m.histogram(
      'sluice_streams_produce_duration_seconds',
      'Time from an append to its records being durable',
      ['outcome'],
    );
    this.publishDuration = m.histogram(
      'sluice_streams_jetstream_publish_duration_seconds',
      'Time of one JetStream publish, to its acknowledgement',
      ['outcome'],
    );
    this.reconnects = m.counter('sluice_streams_jetstream_reconnects_total', 'Reconnections to NATS');
    this.watchRetention();
  }

  /** Retention passes (retention.ts keeps totals since start; the counters take what is new at each scrape). */
  private watchRetention(): void {
    const m = this.ops.metrics;
    let seen = retentionStats();
    // Registered before the counters it feeds: a scrape reads metrics in registration order, so
    // the counters then show what this collect added.
    m.gauge(
      'sluice_streams_retention_last_pass_timestamp_seconds',
      'When the last retention pass ended (service clock; 0 before the first)',
      [],
      (gauge) => {
        const now = retentionStats();
        removed.inc({}, now.removedRecords - seen.removedRecords);
        removedBytes.inc({}, now.removedBytes - seen.removedBytes);
        passes.inc({}, now.passes - seen.passes);
        errors.inc({}, now.errors - seen.errors);
        seen = now;
        gauge.set({}, now.lastPassAt / 1000);
      },
    );
    const removed = m.counter(
      'sluice_streams_retention_removed_records_total',
      'Records removed by retention (retention.ms, retention.bytes)',
    );
    const removedBytes = m.counter(
      'sluice_streams_retention_removed_bytes_total',
      'Bytes removed by retention',
    );
    const passes = m.counter('sluice_streams_retention_passes_total', 'Retention passes run');
    const errors = m.counter('sluice_streams_retention_errors_total', 'Retention passes that failed');
  }

  /** The log that counts what goes through it. */
  meter(log: TopicLog): TopicLog {
    return new MeteredTopicLog(log, this);
  }

  jetStreamObserver(): JetStreamObserver {
    return {
      publish: (seconds, ok) => this.publishDuration.observe({ outcome: ok ? 'ok' : 'error' }, seconds),
      reconnect: () => this.reconnects.inc(),
    };
  }

  /** sluice_streams_consumer_lag, computed at each scrape. */
  watchLag(log: TopicLog, groups: ConsumerGroups): void {
    this.ops.metrics.gauge(
      'sluice_streams_consumer_lag',
      `Records produced but not committed by the group, per partition (first ${LAG_SERIES} series)`,
      ['group', 'topic', 'partition'],
      async (gauge) => {
        gauge.reset();
        let series = 0;
        for (const group of groups.groupNames().sort()) {
          const view = groups.describeGroup(group);
          for (const name of view.topics) {
            const topic = log.topic(name);
            if (!topic) continue;
            for (let p = 0; p < topic.partitions; p++) {
              const committed = view.committed(name, p);
              if (committed === undefined) continue;
              if (series++ >= LAG_SERIES) return;
              const end = await log.endOffset(topic, p);
              gauge.set(
                { group: this.groupLabel(group), topic: this.topicLabel(name), partition: String(p) },
                Math.max(0, end - committed),
              );
            }
          }
        }
      },
    );
  }

  /** `count` records of `bytes` (appendBytes) appended to `topic`, or not (`ok` false). */
  recordProduce(topic: string, count: number, bytes: number, seconds: number, ok: boolean): void {
    this.produceDuration.observe({ outcome: ok ? 'ok' : 'error' }, seconds);
    if (!ok) return;
    const label = { topic: this.topicLabel(topic) };
    this.produced.inc(label, count);
    this.producedBytes.inc(label, bytes);
  }

  recordFetch(topic: string, records: readonly StoredRecord[]): void {
    if (records.length === 0) return;
    let bytes = 0;
    for (const r of records) bytes += r.size;
    const label = { topic: this.topicLabel(topic) };
    this.fetched.inc(label, records.length);
    this.fetchedBytes.inc(label, bytes);
  }
}

class MeteredTopicLog implements TopicLog {
  constructor(
    private readonly log: TopicLog,
    private readonly metrics: StreamsMetrics,
  ) {}

  createTopic(name: string, partitions: number, configs?: TopicConfigs): Promise<TopicInfo> {
    return this.log.createTopic(name, partitions, configs);
  }
  updateTopic(name: string, configs: TopicConfigs): Promise<TopicInfo> {
    return this.log.updateTopic(name, configs);
  }
  deleteTopic(name: string): Promise<void> {
    return this.log.deleteTopic(name);
  }
  enforceRetention(now: number): Promise<RetentionRemoval[]> {
    return this.log.enforceRetention(now);
  }
  topic(name: string): TopicInfo | undefined {
    return this.log.topic(name);
  }
  topics(): readonly TopicInfo[] {
    return this.log.topics();
  }
  readonly append: AppendFn = (
    topic: TopicInfo,
    records: readonly RecordToStore[],
    partitions?: readonly number[],
  ): Promise<number[]> => {
    const start = performance.now();
    // Counted now: the callbacks hold two numbers, not the records, while the log works.
    const count = records.length;
    const bytes = appendBytes(records);
    const appended = partitions
      ? this.log.append(topic, records, partitions)
      : this.log.append(topic, records as readonly AppendRecord[]);
    return appended.then(
      (offsets) => {
        this.metrics.recordProduce(topic.name, count, bytes, (performance.now() - start) / 1000, true);
        return offsets;
      },
      (error: unknown) => {
        this.metrics.recordProduce(topic.name, count, bytes, (performance.now() - start) / 1000, false);
        throw error;
      },
    );
  };
  read(topic: TopicInfo, partition: number, offset: number, limits: ReadLimits): Promise<StoredRecord[]> {
    return this.log.read(topic, partition, offset, limits).then((records) => {
      this.metrics.recordFetch(topic.name, records);
      return records;
    });
  }
  beginningOffset(topic: TopicInfo, partition: number): Promise<number> {
    return this.log.beginningOffset(topic, partition);
  }
  endOffset(topic: TopicInfo, partition: number): Promise<number> {
    return this.log.endOffset(topic, partition);
  }
  onAppend(listener: AppendListener): () => void {
    return this.log.onAppend(listener);
  }
  probe(): Promise<void> {
    return this.log.probe();
  }
  close(): Promise<void> {
    return this.log.close();
  }
}
