// A consumer instance as this node holds it (subscription, manual assignment, owned partitions,
// positions, readers), the shapes the group code exchanges with the HTTP layer, and the keys and
// errors both halves of the group code (membership.ts, reader.ts) use.

import { partitionNotFound, topicNotFound, ErrorCodes, StreamsError } from '../errors.js';
import type { StoredRecord, TopicInfo, TopicLog } from '../log/types.js';
import type { TopicPartition } from './assignment.js';
import type { GroupMember, InstanceConfig, InstanceRecord } from './store.js';

export interface ConsumedRecord {
  readonly topic: string;
  readonly record: StoredRecord;
}

export interface FetchOptions {
  readonly timeoutMs: number;
  readonly maxBytes: number;
  readonly maxRecords: number;
  /** Ends a long poll early (client went away). */
  readonly signal?: AbortSignal;
  /** Commit what earlier fetches delivered before reading (default: the instance's auto-commit). */
  readonly commitDelivered?: boolean;
  /** The push stream's own reads; HTTP fetches are refused while a push stream is open. */
  readonly push?: boolean;
}

export interface OffsetEntry {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
}

export interface GroupView {
  readonly members: readonly {
    readonly member: GroupMember;
    /** Set when the member lives on this node. */
    readonly instance: ConsumerInstance | undefined;
    readonly partitions: readonly TopicPartition[];
  }[];
  /** Topics the members subscribe to or were assigned. */
  readonly topics: readonly string[];
  committed(topic: string, partition: number): number | undefined;
}

export interface GroupLimits {
  readonly maxInstancesPerGroup: number;
  readonly instanceTimeoutMs: number;
}

export interface Assigned {
  readonly topic: TopicInfo;
  readonly partition: number;
  readonly key: string;
}

export class ConsumerInstance {
  readonly positions = new Map<string, number>();
  assigned: Assigned[] = [];
  assignedKeys = new Set<string>();
  topics: string[];
  /** A manual assignment (Kafka's assign()): these partitions, outside the group's balancing. */
  manual: TopicPartition[] = [];
  lastSeen: number;
  /** Fetches running or queued: reads of one instance are served one after another, in order. */
  readers = 0;
  readTail: Promise<void> = Promise.resolve();
  /** Open push (WebSocket) streams; an instance being streamed to is not idle. */
  pushStreams = 0;
  deleted = false;
  cursor = 0;
  wake: (() => void) | undefined;

  constructor(
    readonly group: string,
    readonly id: string,
    readonly seq: number,
    readonly createdAt: number,
    readonly config: InstanceConfig,
    topics: readonly string[],
    now: number,
    readonly node: string | undefined = undefined,
    readonly baseUri: string | undefined = undefined,
  ) {
    this.topics = [...topics];
    this.lastSeen = now;
  }

  toRecord(): InstanceRecord {
    return {
      group: this.group,
      id: this.id,
      seq: this.seq,
      createdAt: this.createdAt,
      config: this.config,
      topics: this.topics,
      positions: Object.fromEntries(this.positions),
      node: this.node,
      baseUri: this.baseUri,
      ...(this.manual.length > 0 ? { manual: this.manual } : {}),
    };
  }
}

export const instanceNotFound = (group: string, id: string): StreamsError =>
  new StreamsError(
    404,
    ErrorCodes.instanceNotFound,
    `consumer instance '${id}' not found in group '${group}' (deleted, expired, or never created)`,
  );

// Served by another node of a shared store: say where, so the client can go there.
export const instanceElsewhere = (
  group: string,
  id: string,
  node: string,
  baseUri: string | undefined,
): StreamsError =>
  new StreamsError(
    404,
    ErrorCodes.instanceNotFound,
    `consumer instance '${id}' of group '${group}' is served by another Sluice node (${node})` +
      (baseUri ? `; send this request to its base_uri ${baseUri}` : ''),
  );

export const positionKey = (topic: string, partition: number): string => `${topic}/${partition}`;

export const splitKey = (key: string): [string, number] => {
  const slash = key.lastIndexOf('/');
  return [key.slice(0, slash), Number(key.slice(slash + 1))];
};

/** The topic of an existing partition; 404 (topic or partition) otherwise. */
export function requirePartition(log: TopicLog, name: string, partition: number): TopicInfo {
  const topic = log.topic(name);
  if (!topic) throw topicNotFound(name);
  if (!Number.isInteger(partition) || partition < 0 || partition >= topic.partitions)
    throw partitionNotFound(name, partition, topic.partitions);
  return topic;
}
