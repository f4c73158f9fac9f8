// Retention and topic removal for the LMDB log: old batches are deleted from the front of a
// partition's key range, a few at a time. Each step is one small write transaction (at most
// STEP batches) that rides lmdb-js's write queue beside produce's puts, and the loop yields to
// the event loop between steps, so a large removal never holds the writer for long.
//
// Kafka's rules, applied per partition to whole batches (our segments), oldest first, stopping
// at the first batch that is kept; the newest batch is always kept:
//   - retention.ms: a batch goes once its newest record's timestamp is older than now − retention.ms;
//   - retention.bytes: a batch goes while the partition would still hold at least retention.bytes
//     without it.
// Where a partition starts is stored (database `retention`, in the same transaction as the
// deletes), so after a restart offsets continue where they were even when every batch was removed.
// A topic being removed is listed there too until its last key is gone, so a removal cut short by
// a crash resumes at the next start, and its id is never handed out again.

import { setImmediate as turn } from 'node:timers/promises';
import type { Database, RootDatabase } from 'lmdb';
import {
  batchCount,
  newestTimestamp,
  offsetOfKey,
  partitionEndKey,
  partitionStartKey,
  recordKey,
} from './codec.js';
import type { TopicConfigs } from './types.js';

/** Batches deleted per write transaction. */
const STEP = 128;
const NEXT_ID = Buffer.from('next-topic-id');
const startKey = (topicId: number, partition: number): Buffer =>
  Buffer.concat([Buffer.from('start:'), partitionStartKey(topicId, partition)]);
const removingKey = (topicId: number): Buffer => Buffer.from(`removing:${topicId}`);

/** The partition's bounds as the log keeps them in memory. */
export interface PartitionBounds {
  beginning: number;
  /** One past the last durable offset: nothing at or after it is touched. */
  readonly end: number;
}

export interface Trimmed {
  readonly records: number;
  readonly bytes: number;
}

interface Size {
  bytes: number;
  /** Batches from this offset on are not counted yet. */
  countedTo: number;
}

export class LmdbRetention {
  private readonly db: Database<number, Buffer>;
  /** Stored bytes per partition (`id/partition`), counted on first need, then kept up to date. */
  private readonly sizes = new Map<string, Size>();
  private removals: Promise<void> = Promise.resolve();

  constructor(
    root: RootDatabase,
    private readonly records: Database<Buffer, Buffer>,
  ) {
    this.db = root.openDB<number, Buffer>({ name: 'retention', keyEncoding: 'binary' });
  }

  /** Where the partition starts, as stored by the last trim (0 when never trimmed). */
  storedStart(topicId: number, partition: number): number {
    return this.db.get(startKey(topicId, partition)) ?? 0;
  }

  /** The lowest id a new topic may take: ids of removed topics are never reused. */
  nextTopicId(): number {
    return this.db.get(NEXT_ID) ?? 1;
  }

  /**
   * Removes the partition's oldest batches that the configs no longer keep, moving
   * `bounds.beginning` forward before each step is written (readers below it get out of range).
   */
  async trim(
    topicId: number,
    partition: number,
    configs: TopicConfigs,
    bounds: PartitionBounds,
    now: number,
  ): Promise<Trimmed> {
    const oldest = configs.retentionMs >= 0 ? now - configs.retentionMs : -Infinity;
    const sizeKey = `${topicId}/${partition}`;
    // A count left from when retention.bytes was set goes stale without it: drop it.
    if (configs.retentionBytes < 0) this.sizes.delete(sizeKey);
    const size =
      configs.retentionBytes >= 0 ? await this.countSize(sizeKey, topicId, partition, bounds) : undefined;
    let records = 0;
    let bytes = 0;
    for (;;) {
      const keys: Buffer[] = [];
      let next = bounds.beginning;
      let stepBytes = 0;
      let stop = false;
      for (const { key, value } of this.records.getRange({
        start: partitionStartKey(topicId, partition),
        end: recordKey(topicId, partition, bounds.end),
        limit: STEP,
      })) {
        // The newest durable batch always stays (as Kafka keeps the active segment).
        if (offsetOfKey(key) + batchCount(value) >= bounds.end) {
          stop = true;
          break;
        }
        const expired = newestTimestamp(value) < oldest;
        const oversize =
          size !== undefined && size.bytes - stepBytes - value.length >= configs.retentionBytes;
        if (!expired && !oversize) {
          stop = true;
          break;
        }
        keys.push(Buffer.from(key));
        next = offsetOfKey(key) + batchCount(value);
        stepBytes += value.length;
        records += batchCount(value);
      }
      if (keys.length === 0) break;
      bounds.beginning = Math.max(bounds.beginning, next);
      const start = bounds.beginning;
      await this.records.transaction(() => {
        for (const key of keys) this.records.removeSync(key);
        this.db.putSync(startKey(topicId, partition), start);
      });
      bytes += stepBytes;
      if (size) size.bytes -= stepBytes;
      if (stop || keys.length < STEP) break;
      await turn();
    }
    return { records, bytes };
  }

  /** The partition's stored bytes: counted once, then only the batches appended since. */
  private async countSize(
    key: string,
    topicId: number,
    partition: number,
    bounds: PartitionBounds,
  ): Promise<Size> {
    let size = this.sizes.get(key);
    if (!size) {
      size = { bytes: 0, countedTo: 0 };
      this.sizes.set(key, size);
    }
    for (;;) {
      let seen = 0;
      for (const { key: k, value } of this.records.getRange({
        start: recordKey(topicId, partition, size.countedTo),
        end: recordKey(topicId, partition, bounds.end),
        limit: STEP * 8,
      })) {
        size.bytes += value.length;
        size.countedTo = offsetOfKey(k) + batchCount(value);
        seen++;
      }
      if (seen < STEP * 8) return size;
      await turn();
    }
  }

  /** Notes that `topicId` is being removed (with the topic's record, in one transaction). */
  async markRemoved(
    topicId: number,
    partitions: number,
    nextTopicId: number,
    also: () => void,
  ): Promise<void> {
    await this.records.transaction(() => {
      this.db.putSync(removingKey(topicId), partitions);
      this.db.putSync(NEXT_ID, Math.max(nextTopicId, this.nextTopicId()));
      also();
    });
    for (let p = 0; p < partitions; p++) this.sizes.delete(`${topicId}/${p}`);
  }

  /** Topics whose removal has not finished (id → partitions). */
  unfinishedRemovals(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (const { key, value } of this.db.getRange({
      start: Buffer.from('removing:'),
      end: Buffer.from('removing;'),
    }))
      out.push([Number(Buffer.from(key).toString().slice('removing:'.length)), value]);
    return out;
  }

  /** Deletes every key of the topic in steps, then forgets it; removals run one after another. */
  removeInBackground(topicId: number, partitions: number, settled: () => Promise<void>): Promise<void> {
    const run = this.removals.then(async () => {
      await settled();
      for (let p = 0; p < partitions; p++) {
        for (;;) {
          const keys = [
            ...this.records.getKeys({
              start: partitionStartKey(topicId, p),
              end: partitionEndKey(topicId, p),
              limit: STEP,
            }),
          ].map((k) => Buffer.from(k));
          if (keys.length === 0) break;
          await this.records.transaction(() => {
            for (const key of keys) this.records.removeSync(key);
          });
          await turn();
        }
        await this.db.remove(startKey(topicId, p));
      }
      await this.db.remove(removingKey(topicId));
    });
    this.removals = run.catch(() => undefined);
    return run;
  }

  /** Resolves when the removals started so far are done. */
  idle(): Promise<void> {
    return this.removals;
  }
}
