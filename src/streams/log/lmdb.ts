// TopicLog on LMDB. Each request's records for one partition are stored as one batch entry
// under the batch's first offset (see codec.ts). Offsets are assigned in memory per partition,
// synchronously, and the puts are issued without awaiting each: lmdb-js gathers every write of one event turn into one
// transaction, so concurrent produce requests share a commit (group commit). A partition's
// readable end (its high watermark) only moves after the commit holding the records is flushed,
// so consumers never see a record that a crash could take back.

import type { Database, RootDatabase } from 'lmdb';
import { commitFailureCause } from '../../core/disk/lmdb-commit.js';
import { asStorageFull, type DiskReserve } from '../../core/disk/reserve.js';
import { StreamsError, ErrorCodes, offsetOutOfRange, topicNotFound } from '../errors.js';
import {
  batchCount,
  decodeRecord,
  encodeBatch,
  offsetOfKey,
  partitionEndKey,
  partitionStartKey,
  recordKey,
  visitBatch,
} from './codec.js';
import { LmdbRetention } from './lmdb-retention-store.js';
import { partitionBatches, partitionOfEach } from './partition-batches.js';
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

interface PartitionState {
  /** Next offset to hand out. */
  next: number;
  /** One past the last durable offset. */
  end: number;
  beginning: number;
  /** Appends issued and not yet settled. */
  pending: number;
  /** A commit failed: offsets handed out may not exist; re-read the end before the next append. */
  resync: boolean;
}

interface StoredTopic {
  name: string;
  id: number;
  partitions: number;
  createdAt: number;
  /** Absent in topics stored before retention existed: they keep everything. */
  configs?: TopicConfigs;
}

type Flushable = Promise<unknown> & { flushed?: Promise<unknown> };

/** An append whose batches are put: what is left to wait for. */
interface StartedAppend {
  readonly states: PartitionState[];
  /** Per partition written, the offset of its last record. */
  readonly lastByPartition: Map<number, number>;
  /** One promise per transaction the puts landed in. */
  readonly commits: Set<Flushable>;
  readonly offsets: number[];
}

export class LmdbTopicLog implements TopicLog {
  private readonly records: Database<Buffer, Buffer>;
  private readonly topicDb: Database<StoredTopic, string>;
  private readonly byName = new Map<string, TopicInfo>();
  private readonly partitions = new Map<number, PartitionState[]>();
  private readonly listeners = new Set<AppendListener>();
  private nextTopicId = 1;
  private creating = new Set<string>();
  private readonly retention: LmdbRetention;
  /** Partitions a retention pass is trimming (one pass at a time per partition). */
  private readonly trimming = new Set<PartitionState>();
  private closed = false;

  /** `reserve`: the free space appends leave on the log's disk (no check without one). */
  constructor(
    root: RootDatabase,
    private readonly reserve?: DiskReserve,
  ) {
    this.records = root.openDB<Buffer, Buffer>({
      name: 'records',
      keyEncoding: 'binary',
      encoding: 'binary',
    });
    this.topicDb = root.openDB<StoredTopic, string>({ name: 'topics', keyEncoding: 'ordered-binary' });
    this.retention = new LmdbRetention(root, this.records);
    this.recover();
  }

  /** Rebuilds the in-memory partition ends from the stored log (the last key of each partition). */
  private recover(): void {
    this.nextTopicId = Math.max(this.nextTopicId, this.retention.nextTopicId());
    for (const { value } of this.topicDb.getRange()) {
      const info: TopicInfo = Object.freeze({
        ...value,
        configs: Object.freeze(value.configs ?? KEEP_EVERYTHING),
      });
      this.byName.set(info.name, info);
      this.nextTopicId = Math.max(this.nextTopicId, info.id + 1);
      const states: PartitionState[] = [];
      for (let p = 0; p < info.partitions; p++) {
        // Retention may have removed every batch: the stored start keeps offsets going on.
        const start = this.retention.storedStart(info.id, p);
        const next = Math.max(this.lastOffset(info.id, p) + 1, start);
        states.push({
          next,
          end: next,
          beginning: Math.max(this.firstOffset(info.id, p, next), start),
          pending: 0,
          resync: false,
        });
      }
      this.partitions.set(info.id, states);
    }
    // Removals a stop cut short.
    for (const [id, partitions] of this.retention.unfinishedRemovals()) {
      this.nextTopicId = Math.max(this.nextTopicId, id + 1);
      void this.retention.removeInBackground(id, partitions, async () => undefined).catch(() => undefined);
    }
  }

  private lastOffset(topicId: number, partition: number): number {
    for (const { key, value } of this.records.getRange({
      start: partitionEndKey(topicId, partition),
      end: partitionStartKey(topicId, partition),
      reverse: true,
      limit: 1,
    })) {
      return offsetOfKey(key) + batchCount(value) - 1;
    }
    return -1;
  }

  private firstOffset(topicId: number, partition: number, next: number): number {
    for (const key of this.records.getKeys({
      start: partitionStartKey(topicId, partition),
      end: partitionEndKey(topicId, partition),
      limit: 1,
    })) {
      return offsetOfKey(key);
    }
    return next;
  }

  /** Key of the batch that holds `offset` (the last batch starting at or before it). */
  private batchKeyFor(topicId: number, partition: number, offset: number): Buffer {
    for (const key of this.records.getKeys({
      start: recordKey(topicId, partition, offset),
      end: partitionStartKey(topicId, partition),
      reverse: true,
      limit: 1,
    })) {
      return Buffer.from(key);
    }
    return recordKey(topicId, partition, offset);
  }

  async createTopic(
    name: string,
    partitions: number,
    configs: TopicConfigs = KEEP_EVERYTHING,
  ): Promise<TopicInfo> {
    this.assertOpen();
    if (this.byName.has(name) || this.creating.has(name)) {
      throw new StreamsError(400, ErrorCodes.topicInvalid, `topic '${name}' already exists`);
    }
    this.reserve?.admit(name.length + 64);
    const info: TopicInfo = Object.freeze({
      name,
      id: this.nextTopicId++,
      partitions,
      createdAt: Date.now(),
      configs: Object.freeze({ ...configs }),
    });
    this.creating.add(name);
    try {
      await durable(this.topicDb.put(name, { ...info, configs: { ...info.configs } }));
    } finally {
      this.creating.delete(name);
    }
    const states: PartitionState[] = [];
    for (let p = 0; p < partitions; p++)
      states.push({ next: 0, end: 0, beginning: 0, pending: 0, resync: false });
    this.partitions.set(info.id, states);
    this.byName.set(name, info);
    return info;
  }

  topic(name: string): TopicInfo | undefined {
    return this.byName.get(name);
  }

  async updateTopic(name: string, configs: TopicConfigs): Promise<TopicInfo> {
    this.assertOpen();
    const current = this.byName.get(name);
    if (!current) throw topicNotFound(name);
    const info: TopicInfo = Object.freeze({ ...current, configs: Object.freeze({ ...configs }) });
    await durable(this.topicDb.put(name, { ...info, configs: { ...info.configs } }));
    // Unless the topic was removed (or removed and created again) meanwhile.
    if (this.byName.get(name) === current) this.byName.set(name, info);
    return this.byName.get(name) ?? info;
  }

  async deleteTopic(name: string): Promise<void> {
    this.assertOpen();
    const info = this.byName.get(name);
    if (!info) throw topicNotFound(name);
    // Gone for every caller at once; its keys are deleted in the background, in steps.
    this.byName.delete(name);
    const states = this.partitions.get(info.id) ?? [];
    this.partitions.delete(info.id);
    try {
      await this.retention.markRemoved(info.id, info.partitions, this.nextTopicId, () => {
        this.topicDb.removeSync(name);
      });
    } catch (error) {
      this.byName.set(name, info);
      this.partitions.set(info.id, states);
      throw error;
    }
    // Appends in flight finish first, so none lands after the range was emptied.
    const settled = async (): Promise<void> => {
      while (states.some((s) => s.pending > 0)) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    void this.retention.removeInBackground(info.id, info.partitions, settled).catch(() => undefined);
  }

  async enforceRetention(now: number): Promise<RetentionRemoval[]> {
    const out: RetentionRemoval[] = [];
    let looked = 0;
    for (const topic of [...this.byName.values()]) {
      const { retentionMs, retentionBytes } = topic.configs;
      if (retentionMs < 0 && retentionBytes < 0) continue;
      const states = this.partitions.get(topic.id);
      if (!states) continue;
      for (let p = 0; p < states.length; p++) {
        const state = states[p]!;
        if (this.trimming.has(state) || state.beginning >= state.end) continue;
        // Many partitions: let produce and fetches in between now and then.
        if (++looked % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
        this.trimming.add(state);
        try {
          const { records, bytes } = await this.retention.trim(topic.id, p, topic.configs, state, now);
          if (records > 0)
            out.push({ topic: topic.name, partition: p, records, bytes, beginning: state.beginning });
        } finally {
          this.trimming.delete(state);
        }
      }
    }
    return out;
  }

  topics(): readonly TopicInfo[] {
    return [...this.byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  readonly append: AppendFn = (
    topic: TopicInfo,
    records: readonly RecordToStore[],
    given?: readonly number[],
  ): Promise<number[]> => {
    // Encoded and put now; what waits for the commit holds no record (they die young instead of
    // being promoted to the old generation while LMDB works).
    let started: StartedAppend;
    try {
      started = this.startAppend(topic, records, given);
    } catch (error) {
      // Refusals (a closed log, a full disk) come as a rejection, as from an async function.
      return Promise.reject(error instanceof Error ? error : new Error(String(error)));
    }
    return this.settle(topic, started);
  };

  private startAppend(
    topic: TopicInfo,
    records: readonly RecordToStore[],
    given: readonly number[] | undefined,
  ): StartedAppend {
    this.assertOpen();
    const states = this.statesOf(topic);
    const partitions = partitionOfEach(records, given);
    for (const partition of partitions) {
      const state = states[partition];
      if (!state) throw new Error(`partition ${partition} out of range for ${topic.name}`);
      if (state.resync) this.resync(topic, partition, state);
    }
    // One batch per partition, records in request order. Encode everything before taking
    // offsets: a failure here leaves no gap.
    const batches = partitionBatches(records, partitions).map(({ partition, records: list }) => ({
      partition,
      count: list.length,
      bytes: encodeBatch(list),
    }));
    // Refused before any offset is taken: a full disk must never reach LMDB (core/disk/reserve.ts).
    this.reserve?.admit(batches.reduce((sum, b) => sum + b.bytes.length, 0));
    const bases = new Map<number, number>();
    const lastByPartition = new Map<number, number>();
    const commits = new Set<Flushable>();
    for (const batch of batches) {
      const state = states[batch.partition]!;
      const base = state.next;
      state.next += batch.count;
      bases.set(batch.partition, base);
      lastByPartition.set(batch.partition, base + batch.count - 1);
      commits.add(this.records.put(recordKey(topic.id, batch.partition, base), batch.bytes));
    }
    const offsets = new Array<number>(records.length);
    for (let i = 0; i < records.length; i++) {
      const partition = partitions[i]!;
      const next = bases.get(partition)!;
      offsets[i] = next;
      bases.set(partition, next + 1);
    }
    for (const partition of lastByPartition.keys()) states[partition]!.pending++;
    return { states, lastByPartition, commits, offsets };
  }

  private async settle(topic: TopicInfo, started: StartedAppend): Promise<number[]> {
    const { states, lastByPartition, commits, offsets } = started;
    let failed: unknown;
    // One promise per transaction the puts landed in (usually one); every one is awaited, so a
    // failure of one never leaves another unobserved.
    for (const outcome of await Promise.allSettled([...commits].map(durable))) {
      if (outcome.status === 'rejected' && failed === undefined) failed = outcome.reason;
    }
    for (const [partition, last] of lastByPartition) {
      const state = states[partition]!;
      state.pending--;
      if (failed !== undefined) {
        state.resync = true;
        continue;
      }
      if (last + 1 > state.end) {
        state.end = last + 1;
        for (const listener of this.listeners) listener(topic, partition, state.end);
      }
    }
    if (failed !== undefined) {
      const cause = await commitFailureCause(failed);
      const full = asStorageFull(cause, 'streams log', this.reserve?.path ?? 'LMDB');
      if (full !== cause) throw full;
      throw new StreamsError(
        500,
        ErrorCodes.storageFailure,
        `storage failure: the records were not stored (${(cause as Error).message})`,
      );
    }
    return offsets;
  }

  /** After a failed commit: wait until nothing is in flight, then take the end from the store. */
  private resync(topic: TopicInfo, partition: number, state: PartitionState): void {
    if (state.pending > 0) {
      throw new StreamsError(
        503,
        ErrorCodes.storageRetriable,
        `partition ${partition} of '${topic.name}' is recovering from a storage failure; retry`,
      );
    }
    state.next = this.lastOffset(topic.id, partition) + 1;
    state.end = state.next;
    state.resync = false;
  }

  async read(
    topic: TopicInfo,
    partition: number,
    offset: number,
    limits: ReadLimits,
  ): Promise<StoredRecord[]> {
    const state = this.statesOf(topic)[partition];
    if (state && offset < state.beginning)
      throw offsetOutOfRange(topic.name, partition, offset, state.beginning);
    if (!state || offset >= state.end || limits.maxRecords <= 0) return [];
    const from = offset;
    const out: StoredRecord[] = [];
    let bytes = 0;
    let full = false;
    // Batches are committed whole, so every batch below the end key is entirely durable.
    for (const { key, value } of this.records.getRange({
      start: this.batchKeyFor(topic.id, partition, from),
      end: recordKey(topic.id, partition, state.end),
    })) {
      const base = offsetOfKey(key);
      visitBatch(value, Math.max(0, from - base), (index, record) => {
        if (bytes + record.length > limits.maxBytes && (out.length > 0 || !limits.atLeastOne)) {
          full = true;
          return false;
        }
        out.push({ partition, offset: base + index, size: record.length, ...decodeRecord(record) });
        bytes += record.length;
        if (out.length >= limits.maxRecords) full = true;
        return !full;
      });
      if (full) break;
    }
    return out;
  }

  async beginningOffset(topic: TopicInfo, partition: number): Promise<number> {
    return this.statesOf(topic)[partition]?.beginning ?? 0;
  }

  async endOffset(topic: TopicInfo, partition: number): Promise<number> {
    return this.statesOf(topic)[partition]?.end ?? 0;
  }

  onAppend(listener: AppendListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The environment is open and a read of the topic table succeeds. */
  probe(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the topic log is closed'));
    this.topicDb.doesExist('');
    return Promise.resolve();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    await this.retention.idle();
    await this.records.flushed;
  }

  /**
   * A write once the close began is refused: lmdb-js queues a write on a sub-database even while
   * its environment closes, and the queued commit then fails outside any caller (an uncaught
   * "environment is already closed" that ends the thread).
   */
  private assertOpen(): void {
    if (this.closed)
      throw new StreamsError(
        503,
        ErrorCodes.storageRetriable,
        'the streams log is closed: the service is shutting down',
      );
  }

  private statesOf(topic: TopicInfo): PartitionState[] {
    const states = this.partitions.get(topic.id);
    // The topic was removed (maybe created again since, under a new id).
    if (!states) throw topicNotFound(topic.name);
    return states;
  }
}

/** Resolves once the write is committed and flushed to disk. */
async function durable(write: Flushable): Promise<void> {
  await write;
  if (write.flushed) await write.flushed;
}
