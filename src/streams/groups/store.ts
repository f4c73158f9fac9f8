// The group-state port: committed offsets per (group, topic, partition), each consumer instance's
// state (membership, subscription, positions) and which instance currently holds each partition.
// The coordinator depends on this interface only. Two implementations: LmdbGroupStore (one node,
// in the same LMDB environment as the log) and JetStreamGroupStore (a key-value bucket shared by
// every Sluice node on one JetStream cluster, so groups span nodes).
//
// Reads are synchronous, answered from memory (an implementation keeps its copy current); writes
// are issued without waiting and `flush()` resolves once every write issued so far is durable
// and visible to this node's reads.

export type OffsetReset = 'earliest' | 'latest' | 'none';

export interface InstanceConfig {
  readonly offsetReset: OffsetReset;
  readonly autoCommit: boolean;
  /** Default long-poll time for this instance's fetches (ms), when it set one. */
  readonly requestTimeoutMs: number | undefined;
  /** Embedded format of fetched records (Confluent's `format`); absent means json. */
  readonly format?: 'json' | 'binary';
}

/** What every node needs to know about a member of a group to compute the assignment. */
export interface GroupMember {
  readonly group: string;
  readonly id: string;
  /** Join order within the group; ties broken by id. */
  readonly seq: number;
  readonly topics: readonly string[];
  /** The node that created the instance and serves it (absent in records of older versions). */
  readonly node?: string | undefined;
  /** The instance's base_uri on its node. */
  readonly baseUri?: string | undefined;
}

export interface InstanceRecord extends GroupMember {
  readonly createdAt: number;
  readonly config: InstanceConfig;
  /** `topic/partition` → next offset to deliver. */
  readonly positions: Readonly<Record<string, number>>;
  /** Partitions given by a manual assignment (Kafka's assign()); absent when it has none. */
  readonly manual?: readonly { readonly topic: string; readonly partition: number }[];
}

export interface PartitionHolder {
  readonly topic: string;
  readonly partition: number;
  /** The instance allowed to read the partition for the group. */
  readonly instance: string;
}

export type GroupStoreEvent =
  /** The group's members, their subscriptions or its partition holders changed. */
  | { readonly type: 'changed'; readonly group: string }
  /**
   * Another node removed one of this node's instances (this node was taken for dead), or took
   * it over (a request for it reached that node): this node stops serving it.
   */
  | { readonly type: 'removed'; readonly group: string; readonly id: string };

export interface CommittedOffset {
  readonly topic: string;
  readonly partition: number;
  /** The next offset to read. */
  readonly offset: number;
}

export interface GroupStore {
  /** This node's id; instances it creates carry it. */
  readonly nodeId: string;

  /** The group's next offset to read, undefined when none is committed. */
  committedOffset(group: string, topic: string, partition: number): number | undefined;
  commit(group: string, topic: string, partition: number, offset: number): void;
  /** Forgets every group's committed offsets for the topic (it was removed). */
  forgetTopic(topic: string): void;
  /** Every offset the group has committed, on any topic (a group without members keeps them). */
  groupOffsets(group: string): readonly CommittedOffset[];
  /** The groups that have at least one committed offset. */
  committedGroups(): string[];
  /** Forgets every committed offset of the group (it was deleted). */
  forgetGroup(group: string): void;

  /** This node's instances, as last saved (to resume them after a restart). */
  loadInstances(): InstanceRecord[];
  saveInstance(record: InstanceRecord): void;
  deleteInstance(group: string, id: string): void;
  /** Every live member of the group, on every node (this node's included). */
  members(group: string): readonly GroupMember[];

  /**
   * Makes this node the one that serves an instance another node served last, with the state
   * that node stored (positions included). The move is a compare-and-set on the stored state,
   * so of two nodes taking the instance at once one wins and the other tries again from what
   * the winner stored; the node that lost the instance is told with a `removed` event.
   * Resolves with the stored record, or undefined when the instance no longer exists.
   */
  adopt(group: string, id: string): Promise<InstanceRecord | undefined>;
  /**
   * Asked in the same turn as a `saveInstance`: resolves once that save is stored, true, or
   * false when another node took the instance over first (the save was refused, nothing of it
   * is kept).
   */
  instanceSaved(group: string, id: string): Promise<boolean>;

  /**
   * Partition hand-over. The assignment is computed from the members alone; before an instance
   * reads a partition it must hold it, and it can only take it once the previous holder let go
   * (after committing) or left the group, so two instances never read one partition at once.
   */
  holders(group: string): readonly PartitionHolder[];
  /** True when `instance` holds the partition now; otherwise a `changed` event follows later. */
  claim(group: string, topic: string, partition: number, instance: string): boolean;
  /** Lets go of a partition `instance` holds, once the writes issued before are durable. */
  release(group: string, topic: string, partition: number, instance: string): void;

  onChange(listener: (event: GroupStoreEvent) => void): () => void;
  /** Resolves when the writes issued so far are durable (rejects if one of them failed). */
  flush(): Promise<void>;
  close(): Promise<void>;
}
