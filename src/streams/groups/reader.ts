// Reading a consumer group: fetches (long polls, served one after another per instance),
// positions, seeks and commits of the partitions an instance owns. Membership and ownership are
// GroupMembership's (membership.ts); this half waits for its rebalances to settle before it reads.

import { illegalState, unprocessable, ErrorCodes, StreamsError } from '../errors.js';
import type { StoredRecord, TopicInfo, TopicLog } from '../log/types.js';
import type { TopicPartition } from './assignment.js';
import {
  instanceNotFound,
  positionKey,
  requirePartition,
  type Assigned,
  type ConsumedRecord,
  type ConsumerInstance,
  type FetchOptions,
  type OffsetEntry,
} from './instance.js';
import type { GroupMembership } from './membership.js';
import type { GroupStore } from './store.js';

/** The fetch read records but another node took the instance over before their positions were stored. */
const takenOver = (group: string, id: string): StreamsError =>
  illegalState(
    `consumer instance '${id}' of group '${group}' was taken over by another Sluice node while this fetch ran ` +
      '(it was used through two nodes at once); the records read here were not delivered, the next fetch returns them',
  );

export class GroupReader {
  private readonly waiting = new Set<ConsumerInstance>();
  private readonly unsubscribeLog: () => void;
  private closed = false;

  constructor(
    private readonly log: TopicLog,
    private readonly store: GroupStore,
    private readonly members: GroupMembership,
    private readonly now: () => number,
  ) {
    this.unsubscribeLog = log.onAppend((topic, partition) => this.onAppend(topic, partition));
  }

  /** Long polls end now (the service is stopping). */
  close(): void {
    this.closed = true;
    this.unsubscribeLog();
    for (const instance of this.waiting) instance.wake?.();
  }

  /**
   * Topics removed (or removed and created again) through another node: positions in them mean
   * nothing now. A subscribed topic that does not exist is 404 / 40401.
   */
  private checkTopics(instance: ConsumerInstance): void {
    const stale = (name: string, id: number): boolean => this.log.topic(name)?.id !== id;
    const staleNames = new Set(
      instance.assigned.filter((a) => stale(a.topic.name, a.topic.id)).map((a) => a.topic.name),
    );
    if (staleNames.size > 0) {
      for (const member of this.members.instances(instance.group))
        this.members.dropTopic(member, (t) => staleNames.has(t));
      this.members.rebalance(instance.group, true);
    }
    for (const name of [...instance.topics, ...instance.manual.map((tp) => tp.topic)]) {
      if (!this.log.topic(name)) {
        throw new StreamsError(
          404,
          ErrorCodes.topicNotFound,
          `topic '${name}' not found: it was deleted (this consumer instance still subscribes to it; subscribe again without it, or create it again)`,
        );
      }
    }
  }

  async fetch(instance: ConsumerInstance, options: FetchOptions): Promise<ConsumedRecord[]> {
    const deadline = this.now() + options.timeoutMs;
    this.checkReadable(instance, options);
    // Concurrent fetches on one instance queue up (as Confluent's proxy serialises them), so
    // each gets the next records and none is delivered twice.
    const previous = instance.readTail;
    let release!: () => void;
    instance.readTail = new Promise((resolve) => (release = resolve));
    instance.readers++;
    try {
      await previous;
      if (instance.deleted) throw this.gone(instance);
      this.checkReadable(instance, options);
      if (options.commitDelivered ?? instance.config.autoCommit) this.members.commitPositions(instance);
      for (;;) {
        this.checkTopics(instance);
        await this.members.settled(instance.group);
        await this.fillMissing(instance);
        this.requirePositions(instance);
        const records = await this.collect(instance, options);
        if (records.length > 0) {
          // The positions after these records must be stored before they are handed out: a
          // node that takes the instance over next starts from them (on a shared store). The
          // outcome asked for is that of this very write (asked in the same turn).
          this.members.save(instance);
          if (instance.deleted) throw this.gone(instance);
          if (!(await this.store.instanceSaved(instance.group, instance.id))) {
            this.members.takenOver(instance);
            throw takenOver(instance.group, instance.id);
          }
          return records;
        }
        const left = deadline - this.now();
        if (left <= 0 || instance.deleted || this.closed || options.signal?.aborted) return [];
        await this.waitForData(instance, left, options.signal);
      }
    } finally {
      instance.readers--;
      instance.lastSeen = this.now();
      release();
    }
  }

  /** A fetch of an instance this node no longer serves: deleted or expired, or taken over. */
  private gone(instance: ConsumerInstance): StreamsError {
    return this.members.isMember(instance.group, instance.id)
      ? takenOver(instance.group, instance.id)
      : instanceNotFound(instance.group, instance.id);
  }

  private checkReadable(instance: ConsumerInstance, options: FetchOptions): void {
    if (instance.topics.length === 0 && instance.manual.length === 0) {
      throw illegalState(
        'consumer instance is not subscribed to any topic; POST {"topics":[...]} to its /subscription first',
      );
    }
    if (!options.push && instance.pushStreams > 0) {
      throw illegalState(
        'this consumer instance is being read by a push (WebSocket) stream; close it to fetch over HTTP',
      );
    }
  }

  /** Explicit commit: each offset is the last record consumed; the group resumes after it. */
  async commitOffsets(instance: ConsumerInstance, entries: readonly OffsetEntry[]): Promise<void> {
    const topics = entries.map((e) => requirePartition(this.log, e.topic, e.partition));
    const ends = await Promise.all(entries.map((e, i) => this.log.endOffset(topics[i]!, e.partition)));
    const checked = entries.map((e, i) => {
      const end = ends[i]!;
      if (e.offset < -1 || e.offset >= end) {
        throw unprocessable(
          `offset ${e.offset} for ${e.topic}/${e.partition} is not a consumed offset (the partition holds offsets up to ${end - 1})`,
        );
      }
      return e;
    });
    for (const e of checked) this.store.commit(instance.group, e.topic, e.partition, e.offset + 1);
  }

  /** Committed next-to-read offsets; -1 where the group has none. Defaults to the owned partitions. */
  committedOffsets(instance: ConsumerInstance, partitions?: readonly TopicPartition[]): OffsetEntry[] {
    const list =
      partitions ?? instance.assigned.map((a) => ({ topic: a.topic.name, partition: a.partition }));
    return list.map((tp) => {
      requirePartition(this.log, tp.topic, tp.partition);
      const offset = this.store.committedOffset(instance.group, tp.topic, tp.partition);
      return { topic: tp.topic, partition: tp.partition, offset: offset ?? -1 };
    });
  }

  /** Next offset to fetch for each partition the instance owns. */
  async positionsOf(instance: ConsumerInstance): Promise<OffsetEntry[]> {
    await this.members.settled(instance.group);
    return instance.assigned.map((a) => ({
      topic: a.topic.name,
      partition: a.partition,
      offset: instance.positions.get(a.key) ?? -1,
    }));
  }

  async seek(instance: ConsumerInstance, entries: readonly OffsetEntry[]): Promise<void> {
    await this.members.settled(instance.group);
    const topics = entries.map((e) => this.owned(instance, e.topic, e.partition));
    const bounds = await Promise.all(
      entries.map((e, i) =>
        Promise.all([
          this.log.beginningOffset(topics[i]!, e.partition),
          this.log.endOffset(topics[i]!, e.partition),
        ]),
      ),
    );
    const moves = entries.map((e, i) => {
      const [beginning, end] = bounds[i]!;
      // Ownership may have moved while the offsets were read.
      this.owned(instance, e.topic, e.partition);
      if (e.offset < beginning || e.offset > end) {
        throw unprocessable(
          `offset ${e.offset} for ${e.topic}/${e.partition} is out of range [${beginning}, ${end}]`,
        );
      }
      return e;
    });
    for (const e of moves) instance.positions.set(positionKey(e.topic, e.partition), e.offset);
    this.members.save(instance);
  }

  async seekToBeginning(instance: ConsumerInstance, partitions: readonly TopicPartition[]): Promise<void> {
    await this.members.settled(instance.group);
    const offsets = await Promise.all(
      partitions.map((tp) =>
        this.log.beginningOffset(this.owned(instance, tp.topic, tp.partition), tp.partition),
      ),
    );
    await this.seek(
      instance,
      partitions.map((tp, i) => ({ ...tp, offset: offsets[i]! })),
    );
  }

  async seekToEnd(instance: ConsumerInstance, partitions: readonly TopicPartition[]): Promise<void> {
    await this.members.settled(instance.group);
    const offsets = await Promise.all(
      partitions.map((tp) => this.log.endOffset(this.owned(instance, tp.topic, tp.partition), tp.partition)),
    );
    await this.seek(
      instance,
      partitions.map((tp, i) => ({ ...tp, offset: offsets[i]! })),
    );
  }

  /** Starting positions a rebalance could not fill (the log did not answer then). */
  private async fillMissing(instance: ConsumerInstance): Promise<void> {
    let changed = false;
    for (const a of instance.assigned) {
      if (instance.positions.has(a.key)) continue;
      const initial = await this.members.initialPosition(instance, a.topic, a.partition);
      if (initial === undefined || !instance.assignedKeys.has(a.key) || instance.positions.has(a.key))
        continue;
      instance.positions.set(a.key, initial);
      changed = true;
    }
    if (changed) this.members.save(instance);
  }

  private requirePositions(instance: ConsumerInstance): void {
    for (const a of instance.assigned) {
      if (!instance.positions.has(a.key)) {
        throw illegalState(
          `no committed offset for ${a.topic.name}/${a.partition} and auto.offset.reset is none; set one with POST .../positions, /positions/beginning or /positions/end`,
        );
      }
    }
  }

  private async collect(instance: ConsumerInstance, options: FetchOptions): Promise<ConsumedRecord[]> {
    const owned = instance.assigned;
    const out: ConsumedRecord[] = [];
    let bytes = 0;
    // Start at a rotating partition so a busy partition cannot starve the others.
    for (let i = 0; i < owned.length; i++) {
      const a = owned[(instance.cursor + i) % owned.length]!;
      let position = instance.positions.get(a.key);
      if (position === undefined) continue;
      const limits = {
        maxRecords: options.maxRecords - out.length,
        maxBytes: options.maxBytes - bytes,
        atLeastOne: out.length === 0,
      };
      let records: StoredRecord[];
      try {
        records = await this.log.read(a.topic, a.partition, position, limits);
      } catch (error) {
        if (!(error instanceof StreamsError) || error.status !== 416) throw error;
        // Retention removed the records at the position: auto.offset.reset decides, as in Kafka.
        const reset = await this.outOfRange(instance, a, error);
        if (!instance.assignedKeys.has(a.key) || instance.positions.get(a.key) !== position) continue;
        instance.positions.set(a.key, reset);
        position = reset;
        records = await this.log.read(a.topic, a.partition, position, limits);
      }
      if (records.length === 0) continue;
      // The partition may have moved to another instance (or been sought) during the read.
      if (!instance.assignedKeys.has(a.key) || instance.positions.get(a.key) !== position) continue;
      for (const record of records) {
        out.push({ topic: a.topic.name, record });
        bytes += record.size;
      }
      instance.positions.set(a.key, records[records.length - 1]!.offset + 1);
      if (out.length >= options.maxRecords || bytes >= options.maxBytes) break;
    }
    if (owned.length > 0) instance.cursor = (instance.cursor + 1) % owned.length;
    return out;
  }

  /** Where a position below the beginning goes: earliest → beginning, latest → end, none → 416. */
  private async outOfRange(instance: ConsumerInstance, a: Assigned, error: StreamsError): Promise<number> {
    switch (instance.config.offsetReset) {
      case 'earliest':
        return this.log.beginningOffset(a.topic, a.partition);
      case 'latest':
        return this.log.endOffset(a.topic, a.partition);
      case 'none':
        throw new StreamsError(
          416,
          416,
          `${error.message}; auto.offset.reset is none, so the position stays: move it with POST .../positions, /positions/beginning or /positions/end`,
        );
    }
  }

  private waitForData(
    instance: ConsumerInstance,
    ms: number,
    signal: AbortSignal | undefined,
  ): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.waiting.delete(instance);
        instance.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done);
      instance.wake = done;
      this.waiting.add(instance);
    });
  }

  private onAppend(topic: TopicInfo, partition: number): void {
    if (this.waiting.size === 0) return;
    const key = positionKey(topic.name, partition);
    for (const instance of [...this.waiting]) {
      if (instance.assignedKeys.has(key)) instance.wake?.();
    }
  }

  private owned(instance: ConsumerInstance, name: string, partition: number): TopicInfo {
    const topic = requirePartition(this.log, name, partition);
    if (!instance.assignedKeys.has(positionKey(name, partition))) {
      throw illegalState(`partition ${name}/${partition} is not assigned to this consumer instance`);
    }
    return topic;
  }
}
