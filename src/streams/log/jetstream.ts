// TopicLog on NATS JetStream, so several Sluice nodes share one log and it survives the loss of
// a machine (STREAMS_REPLICAS copies). Per topic partition one stream (`<prefix>_log_<id>_<p>`,
// subject `<prefix>.log.<id>.<p>`), written and read as jetstream-partition.ts describes; topics in
// a key-value bucket (jetstream-topics.ts). After an append is acknowledged, the node announces the
// partition's new end on `<prefix>.appended.<id>` (plain NATS, no storage), so long polls and push
// streams on the other nodes wake for it; an announcement lost during a disconnect only delays
// them until their time-out or the reconnect, when every waiter is woken to look again.
// Why this layout: docs/streams.md ("JetStream backend").

import { randomUUID } from 'node:crypto';
import type { Logger } from '../../core/log.js';
import {
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { ErrorCodes, StreamsError, offsetOutOfRange, topicNotFound } from '../errors.js';
import { connectNats } from '../nats/connection.js';
import type { NatsSettings } from '../settings.js';
import { encodeBatch } from './codec.js';
import { partitionBatches, partitionOfEach } from './partition-batches.js';
import { BatchCache } from './jetstream-cache.js';
import { BelowBeginning, PartitionLog, unavailable, type PartitionDeps } from './jetstream-partition.js';
import { trimPartition } from './jetstream-retention.js';
import { TopicRegistry } from './jetstream-topics.js';
import {
  type AppendFn,
  KEEP_EVERYTHING,
  type AppendListener,
  type RecordToStore,
  type ReadLimits,
  type RetentionRemoval,
  type StoredRecord,
  type TopicConfigs,
  type TopicInfo,
  type TopicLog,
} from './types.js';

/** Room left in a message for the headers next to the batch. */
const HEADER_ROOM = 1024;
const CACHE_BYTES = 64 * 1024 * 1024;
/** Streams created (or removed) at once when a topic is created. */
const STREAM_CONCURRENCY = 8;

/** How long a start waits for a cluster that is not ready (e.g. starting at the same time). */
const START_TIMEOUT_MS = 60_000;

export interface JetStreamLogOptions {
  /** Connection name shown by the NATS server (monitoring). */
  readonly name?: string;
  readonly startTimeoutMs?: number;
  /**
   * Appends queued for one partition are merged into one message up to this many bytes (default
   * and most: the servers' max_payload). Smaller values make more, smaller messages; tests use 1
   * so every append is its own message and several are in flight at once.
   */
  readonly mergeBytes?: number;
  /** Told about each failed attempt to start (for the service's log). */
  readonly onRetry?: (error: Error) => void;
  /** Told of every publish's duration and of every reconnection (the service's metrics). */
  readonly observe?: {
    publish(seconds: number, ok: boolean): void;
    reconnect(): void;
  };
  /** Where losses and returns of the NATS connection are logged (none when absent). */
  readonly log?: Logger;
}

export class JetStreamTopicLog implements TopicLog {
  private readonly listeners = new Set<AppendListener>();
  private readonly partitions = new Map<number, PartitionLog[]>();
  private readonly creating = new Set<string>();
  private readonly cache = new BatchCache(CACHE_BYTES);
  private readonly writerId = randomUUID();
  private msgCounter = 0;
  private notifications: Subscription | undefined;
  private closed = false;
  private readonly deps: PartitionDeps;
  /** Largest batch one message can carry. */
  private readonly maxBatchBytes: number;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly registry: TopicRegistry,
    private readonly settings: NatsSettings,
    mergeBytes: number | undefined,
    private readonly observe: JetStreamLogOptions['observe'],
  ) {
    const maxPayload = nc.info?.max_payload ?? 1024 * 1024;
    this.maxBatchBytes = maxPayload - HEADER_ROOM;
    this.deps = {
      js: timedPublish(jetstream(nc, { timeout: settings.timeoutMs }), observe),
      jsm,
      cache: this.cache,
      timeoutMs: settings.timeoutMs,
      mergeBytes: Math.min(mergeBytes ?? Infinity, this.maxBatchBytes),
      nextMsgId: () => `${this.writerId}.${++this.msgCounter}`,
      // Set per partition in partitionsOf (it needs the topic).
      appended: () => undefined,
    };
  }

  /**
   * Connects, binds the topic bucket and loads the topics. A cluster that is starting too (no
   * stream leaders yet) is waited for, up to `startTimeoutMs`; then the start fails.
   */
  static async open(settings: NatsSettings, options: JetStreamLogOptions = {}): Promise<JetStreamTopicLog> {
    const deadline = Date.now() + (options.startTimeoutMs ?? START_TIMEOUT_MS);
    for (let attempt = 0; ; attempt++) {
      try {
        return await JetStreamTopicLog.openOnce(settings, options);
      } catch (error) {
        if (Date.now() >= deadline || isPermanent(error)) {
          throw new Error(
            `JetStream is not usable at ${settings.servers.join(', ')}: ${(error as Error).message}`,
            { cause: error },
          );
        }
        options.onRetry?.(error as Error);
        await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** attempt)));
      }
    }
  }

  private static async openOnce(
    settings: NatsSettings,
    options: JetStreamLogOptions,
  ): Promise<JetStreamTopicLog> {
    const nc = await connectNats(settings, options.name ?? 'sluice-streams', options.log);
    try {
      const jsm = await jetstreamManager(nc, { timeout: settings.timeoutMs });
      const registry = await TopicRegistry.open(
        nc,
        `${settings.prefix}_topics`,
        settings.replicas,
        settings.timeoutMs,
      );
      const log = new JetStreamTopicLog(nc, jsm, registry, settings, options.mergeBytes, options.observe);
      log.start();
      return log;
    } catch (error) {
      await nc.close().catch(() => undefined);
      throw error;
    }
  }

  private start(): void {
    this.notifications = this.nc.subscribe(`${this.settings.prefix}.appended.*`, {
      callback: (error, msg) => {
        if (error) return;
        const id = Number(msg.subject.slice(msg.subject.lastIndexOf('.') + 1));
        const topic = this.registry.byIdentifier(id);
        const [partition, end, seq] = msg.string().split(' ').map(Number);
        if (!topic || partition === undefined || end === undefined || seq === undefined) return;
        const state = this.partitionsOf(topic)[partition];
        if (state?.observed(end, seq)) this.emit(topic, partition, end);
      },
    });
    void (async () => {
      for await (const status of this.nc.status()) {
        // Announcements sent while this node was away are lost: wake every waiter to look again.
        if (status.type === 'reconnect') {
          this.observe?.reconnect();
          this.wakeAll();
        }
      }
    })().catch(() => undefined);
  }

  private wakeAll(): void {
    for (const [id, states] of this.partitions) {
      const topic = this.registry.byIdentifier(id);
      if (!topic) continue;
      for (const state of states) this.emit(topic, state.partition, state.end);
    }
  }

  private streamName(id: number, partition: number): string {
    return `${this.settings.prefix}_log_${id}_${partition}`;
  }

  private subject(id: number, partition: number): string {
    return `${this.settings.prefix}.log.${id}.${partition}`;
  }

  async createTopic(
    name: string,
    partitions: number,
    configs: TopicConfigs = KEEP_EVERYTHING,
  ): Promise<TopicInfo> {
    if (this.registry.get(name) || this.creating.has(name)) throw exists(name);
    this.creating.add(name);
    try {
      const id = await this.registry.allocateId();
      const streams = Array.from({ length: partitions }, (_, p) => p);
      await inBatches(streams, STREAM_CONCURRENCY, (p) =>
        this.jsm.streams.add({
          name: this.streamName(id, p),
          subjects: [this.subject(id, p)],
          num_replicas: this.settings.replicas,
          storage: StorageType.File,
          retention: RetentionPolicy.Limits,
          discard: DiscardPolicy.Old,
        }),
      );
      const info: TopicInfo = { name, id, partitions, createdAt: Date.now(), configs: { ...configs } };
      if (!(await this.registry.createIfAbsent(info))) {
        // Another node created the name meanwhile: its streams stay, ours go.
        await inBatches(streams, STREAM_CONCURRENCY, (p) =>
          this.jsm.streams.delete(this.streamName(id, p)).catch(() => false),
        );
        throw exists(name);
      }
      return this.registry.get(name)!;
    } catch (error) {
      throw unavailable(error);
    } finally {
      this.creating.delete(name);
    }
  }

  topic(name: string): TopicInfo | undefined {
    return this.registry.get(name);
  }

  topics(): readonly TopicInfo[] {
    return this.registry.all().sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  async updateTopic(name: string, configs: TopicConfigs): Promise<TopicInfo> {
    const current = this.registry.get(name);
    if (!current) throw topicNotFound(name);
    try {
      await this.registry.update({ ...current, configs: { ...configs } });
    } catch (error) {
      throw unavailable(error);
    }
    return this.registry.get(name) ?? current;
  }

  async deleteTopic(name: string): Promise<void> {
    const info = this.registry.get(name);
    if (!info) throw topicNotFound(name);
    try {
      // Gone from the bucket first, so no node serves it while its streams go.
      await this.registry.remove(name);
      this.partitions.delete(info.id);
      await inBatches(
        Array.from({ length: info.partitions }, (_, p) => p),
        STREAM_CONCURRENCY,
        (p) => this.jsm.streams.delete(this.streamName(info.id, p)).catch(() => false),
      );
    } catch (error) {
      throw unavailable(error);
    }
  }

  async enforceRetention(now: number): Promise<RetentionRemoval[]> {
    const out: RetentionRemoval[] = [];
    for (const topic of this.registry.all()) {
      if (topic.configs.retentionMs < 0 && topic.configs.retentionBytes < 0) continue;
      const states = this.partitionsOf(topic);
      for (const state of states) {
        if (this.closed || this.registry.get(topic.name)?.id !== topic.id) break;
        try {
          const trimmed = await trimPartition(state, this.jsm, topic.configs, now);
          if (trimmed.records > 0) out.push({ topic: topic.name, partition: state.partition, ...trimmed });
        } catch (error) {
          // Removed meanwhile (its streams are gone): nothing to trim.
          if (this.registry.get(topic.name)?.id !== topic.id) break;
          throw unavailable(error);
        }
      }
    }
    return out;
  }

  readonly append: AppendFn = async (
    topic: TopicInfo,
    records: readonly RecordToStore[],
    partitions?: readonly number[],
  ): Promise<number[]> => {
    // The records are encoded and queued now, and this function never suspends: what waits for
    // JetStream holds only the per-partition promises (and, across partitions, each record's
    // partition), so a request's record objects die young instead of being promoted to the old
    // generation while it waits.
    return finishAppend(this.startAppend(topic, records, partitionOfEach(records, partitions)));
  };

  private startAppend(
    topic: TopicInfo,
    records: readonly RecordToStore[],
    partitions: readonly number[],
  ): StartedAppend {
    if (this.closed) throw unavailable(new Error('the log is closed'));
    const states = this.partitionsOf(topic);
    for (const partition of partitions) {
      if (!states[partition]) throw new Error(`partition ${partition} out of range for ${topic.name}`);
    }
    const batches = partitionBatches(records, partitions).map(({ partition, records: list }) => ({
      partition,
      count: list.length,
      bytes: encodeBatch(list),
    }));
    for (const batch of batches) {
      if (batch.bytes.length > this.maxBatchBytes) {
        throw new StreamsError(
          413,
          413,
          `the records for partition ${batch.partition} take ${batch.bytes.length} bytes stored; one request's records for one partition must fit in one JetStream message (${this.maxBatchBytes} bytes here: the servers' max_payload less room for headers). Send fewer records per request`,
        );
      }
    }
    return {
      partitions: batches.map((b) => b.partition),
      acks: batches.map((b) => states[b.partition]!.append(b.bytes, b.count)),
      count: records.length,
      recordPartitions: batches.length === 1 ? undefined : partitions,
    };
  }

  async read(
    topic: TopicInfo,
    partition: number,
    offset: number,
    limits: ReadLimits,
  ): Promise<StoredRecord[]> {
    const state = this.partitionsOf(topic)[partition];
    if (!state) return [];
    try {
      return await state.read(offset, limits);
    } catch (error) {
      if (error instanceof BelowBeginning)
        throw offsetOutOfRange(topic.name, partition, offset, error.beginning);
      throw this.failure(topic, error);
    }
  }

  async beginningOffset(topic: TopicInfo, partition: number): Promise<number> {
    const state = this.partitionsOf(topic)[partition];
    if (!state) return 0;
    try {
      return await state.beginningOffset();
    } catch (error) {
      throw this.failure(topic, error);
    }
  }

  async endOffset(topic: TopicInfo, partition: number): Promise<number> {
    const state = this.partitionsOf(topic)[partition];
    if (!state) return 0;
    try {
      return await state.endOffset();
    } catch (error) {
      throw this.failure(topic, error);
    }
  }

  onAppend(listener: AppendListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The connection is up and JetStream answers an account-info request. */
  async probe(): Promise<void> {
    if (this.closed || this.nc.isClosed()) throw new Error('the NATS connection is closed');
    await this.jsm.getAccountInfo();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.listeners.clear();
    this.notifications?.unsubscribe();
    this.registry.close();
    // drain() lets requests in flight finish; close() if the server is gone.
    await this.nc.drain().catch(() => this.nc.close());
  }

  private emit(topic: TopicInfo, partition: number, end: number): void {
    for (const listener of this.listeners) listener(topic, partition, end);
  }

  /** A topic removed meanwhile is 404; anything else is JetStream being unavailable. */
  private failure(topic: TopicInfo, error: unknown): StreamsError {
    if (this.registry.byIdentifier(topic.id) === undefined) return topicNotFound(topic.name);
    return unavailable(error);
  }

  private partitionsOf(topic: TopicInfo): PartitionLog[] {
    if (this.registry.byIdentifier(topic.id) === undefined) {
      // Removed (maybe created again under a new id).
      this.partitions.delete(topic.id);
      throw topicNotFound(topic.name);
    }
    let states = this.partitions.get(topic.id);
    if (states) return states;
    states = [];
    for (let p = 0; p < topic.partitions; p++) {
      const partition = p;
      states.push(
        new PartitionLog(partition, this.streamName(topic.id, p), this.subject(topic.id, p), {
          ...this.deps,
          appended: (end, seq) => {
            this.emit(topic, partition, end);
            if (!this.closed)
              this.nc.publish(`${this.settings.prefix}.appended.${topic.id}`, `${partition} ${end} ${seq}`);
          },
        }),
      );
    }
    this.partitions.set(topic.id, states);
    return states;
  }
}

/** An append whose batches are queued: what is left to wait for. */
interface StartedAppend {
  /** The partitions written, one batch each. */
  readonly partitions: readonly number[];
  /** Per batch, the offset of its first record once JetStream acknowledged it. */
  readonly acks: readonly Promise<number>[];
  readonly count: number;
  /** Each record's partition, when they are not all in one. */
  readonly recordPartitions: readonly number[] | undefined;
}

/** The offsets of an append's records, or the error naming the partitions that were stored. */
async function finishAppend(started: StartedAppend): Promise<number[]> {
  const { partitions, count, recordPartitions } = started;
  const results = await Promise.allSettled(started.acks);
  const failed = results.findIndex((r) => r.status === 'rejected');
  if (failed >= 0) {
    const stored = partitions.filter((_, i) => results[i]!.status === 'fulfilled');
    const error = unavailable((results[failed] as PromiseRejectedResult).reason);
    if (stored.length === 0) throw error;
    throw new StreamsError(
      error.status,
      error.errorCode,
      `${error.message}. The records for partition${stored.length === 1 ? '' : 's'} ${stored.join(', ')} were stored; those for the others were not`,
    );
  }
  const offsets = new Array<number>(count);
  if (!recordPartitions) {
    const base = (results[0] as PromiseFulfilledResult<number>).value;
    for (let i = 0; i < count; i++) offsets[i] = base + i;
    return offsets;
  }
  const bases = new Map<number, number>();
  partitions.forEach((p, i) => bases.set(p, (results[i] as PromiseFulfilledResult<number>).value));
  for (let i = 0; i < count; i++) {
    const partition = recordPartitions[i]!;
    const next = bases.get(partition)!;
    offsets[i] = next;
    bases.set(partition, next + 1);
  }
  return offsets;
}

/** Errors a retry will not fix: refused credentials or permissions, a bad configuration. */
function isPermanent(error: unknown): boolean {
  const cause = (error as { cause?: unknown })?.cause;
  const text = `${(error as Error)?.message ?? ''} ${cause instanceof Error ? cause.message : ''}`;
  return /authoriz|authenticat|permission|not enabled|invalid/i.test(text);
}

function exists(name: string): StreamsError {
  return new StreamsError(400, ErrorCodes.topicInvalid, `topic '${name}' already exists`);
}

async function inBatches<T>(
  items: readonly T[],
  size: number,
  run: (item: T) => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(run));
}

/** The client with its publish timed for `observe` (one place for both publish paths). */
function timedPublish(js: JetStreamClient, observe: JetStreamLogOptions['observe']): JetStreamClient {
  if (!observe) return js;
  const publish = js.publish.bind(js);
  js.publish = async (...args: Parameters<JetStreamClient['publish']>) => {
    const start = performance.now();
    try {
      const ack = await publish(...args);
      observe.publish((performance.now() - start) / 1000, true);
      return ack;
    } catch (error) {
      observe.publish((performance.now() - start) / 1000, false);
      throw error;
    }
  };
  return js;
}
