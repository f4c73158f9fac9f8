// Administering a consumer group while it is stopped: resetting its committed offsets and
// deleting it (what Kafka's kafka-consumer-groups --reset-offsets and --delete do). Both need a
// group without live members, as Kafka's do: a member reads from its own positions and would
// commit over the reset, and a deleted group would come back at its next commit.
//
// The check and the writes are not one atomic step: a consumer instance created in between
// starts from whichever offsets it reads first. docs/streams.md says so.

import { ErrorCodes, StreamsError, topicNotFound } from '../errors.js';
import { offsetForTime } from '../log/offset-for-time.js';
import type { TopicLog } from '../log/types.js';
import type { CommittedOffset, GroupStore } from './store.js';

export type ResetTarget =
  | { readonly to: 'earliest' }
  | { readonly to: 'latest' }
  | { readonly to: 'offset'; readonly offset: number }
  | { readonly to: 'time'; readonly timestamp: number };

export interface ResetRequest {
  readonly target: ResetTarget;
  /** The topics to reset; absent: every topic the group has committed offsets on. */
  readonly topics: readonly string[] | undefined;
  /** Compute and answer the new offsets without committing them (Kafka's --dry-run). */
  readonly dryRun: boolean;
}

export interface ResetEntry {
  readonly topic: string;
  readonly partition: number;
  readonly previous: number | undefined;
  readonly offset: number;
}

export const groupNotFound = (group: string): StreamsError =>
  new StreamsError(
    404,
    ErrorCodes.instanceNotFound,
    `consumer group '${group}' not found (it has no members and no committed offsets)`,
  );

export class GroupAdmin {
  constructor(
    private readonly log: TopicLog,
    private readonly store: GroupStore,
  ) {}

  /** 404 unless the group has a member or a committed offset; 409 while it has members. */
  private requireStopped(group: string, action: string): readonly CommittedOffset[] {
    const members = this.store.members(group).length;
    const committed = this.store.groupOffsets(group);
    if (members === 0 && committed.length === 0) throw groupNotFound(group);
    if (members > 0)
      throw new StreamsError(
        409,
        ErrorCodes.groupNotEmpty,
        `consumer group '${group}' has ${members} live member${members === 1 ? '' : 's'}: ` +
          `stop them (delete the consumer instances) before you ${action}`,
      );
    return committed;
  }

  async resetOffsets(group: string, request: ResetRequest): Promise<ResetEntry[]> {
    const committed = this.requireStopped(group, 'reset its offsets');
    const names = request.topics ?? [...new Set(committed.map((c) => c.topic))].sort();
    const topics = names.map((name) => {
      const topic = this.log.topic(name);
      if (!topic) throw topicNotFound(name);
      return topic;
    });
    const entries: ResetEntry[] = [];
    for (const topic of topics)
      for (let partition = 0; partition < topic.partitions; partition++) {
        const beginning = await this.log.beginningOffset(topic, partition);
        const end = await this.log.endOffset(topic, partition);
        const { target } = request;
        const offset =
          target.to === 'earliest'
            ? beginning
            : target.to === 'latest'
              ? end
              : target.to === 'offset'
                ? // Clamped to what the partition holds, as Kafka's tool does.
                  Math.min(Math.max(target.offset, beginning), end)
                : await offsetForTime(this.log, topic, partition, target.timestamp);
        const previous = this.store.committedOffset(group, topic.name, partition);
        entries.push({ topic: topic.name, partition, previous, offset });
      }
    if (request.dryRun) return entries;
    for (const e of entries) this.store.commit(group, e.topic, e.partition, e.offset);
    await this.store.flush();
    return entries;
  }

  async deleteGroup(group: string): Promise<void> {
    this.requireStopped(group, 'delete it');
    this.store.forgetGroup(group);
    await this.store.flush();
  }
}
