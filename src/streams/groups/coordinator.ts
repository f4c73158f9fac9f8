// Consumer groups: the service's one entry point to membership (membership.ts: instances,
// subscriptions, who owns which partition) and reading (reader.ts: fetches, positions, seeks,
// commits). The HTTP layers and the push stream call this facade only.

import type { TopicLog } from '../log/types.js';
import type { TopicPartition } from './assignment.js';
import type {
  ConsumedRecord,
  ConsumerInstance,
  FetchOptions,
  GroupLimits,
  GroupView,
  OffsetEntry,
} from './instance.js';
import { GroupAdmin, type ResetEntry, type ResetRequest } from './admin.js';
import { GroupMembership } from './membership.js';
import { GroupReader } from './reader.js';
import type { GroupStore, InstanceConfig } from './store.js';

export type { ResetEntry, ResetRequest, ResetTarget } from './admin.js';
export {
  ConsumerInstance,
  positionKey,
  type ConsumedRecord,
  type FetchOptions,
  type GroupLimits,
  type GroupView,
  type OffsetEntry,
} from './instance.js';

export class ConsumerGroups {
  private readonly members: GroupMembership;
  private readonly reader: GroupReader;
  private readonly admin: GroupAdmin;
  private closed = false;

  constructor(
    log: TopicLog,
    private readonly store: GroupStore,
    limits: GroupLimits,
    now: () => number = Date.now,
  ) {
    this.members = new GroupMembership(log, store, limits, now);
    this.reader = new GroupReader(log, store, this.members, now);
    this.admin = new GroupAdmin(log, store);
  }

  /** `baseUri`: where clients reach the instance (named to clients that ask another node). */
  create(group: string, config: InstanceConfig, id: string, baseUri?: string): ConsumerInstance {
    return this.members.create(group, config, id, baseUri);
  }

  /**
   * The instance, renewed against idle expiry; 404/40403 when unknown. On a store shared by
   * several nodes, an instance another node served last is taken over (docs/streams.md,
   * "Consumer instances on any node").
   */
  acquire(group: string, id: string): Promise<ConsumerInstance> {
    return this.members.acquire(group, id);
  }

  /** The instance if this node serves it (push streams); 404/40403 otherwise. */
  local(group: string, id: string): ConsumerInstance {
    return this.members.local(group, id);
  }

  /** True when the group has a member with this id, on this node or another. */
  isMember(group: string, id: string): boolean {
    return this.members.isMember(group, id);
  }

  groupNames(): string[] {
    return this.members.groupNames();
  }

  describeGroup(group: string): GroupView {
    return this.members.describeGroup(group);
  }

  instances(group: string): ConsumerInstance[] {
    return this.members.instances(group);
  }

  /** Leaves the group; with auto-commit, what was delivered is committed first (like a Kafka close). */
  delete(instance: ConsumerInstance, commit: boolean): void {
    this.members.delete(instance, commit);
  }

  /** Sets a stopped group's committed offsets (409 while it has members); admin.ts. */
  resetOffsets(group: string, request: ResetRequest): Promise<ResetEntry[]> {
    return this.admin.resetOffsets(group, request);
  }

  /** Forgets a stopped group's committed offsets (409 while it has members); admin.ts. */
  deleteGroup(group: string): Promise<void> {
    return this.admin.deleteGroup(group);
  }

  subscribe(instance: ConsumerInstance, topics: readonly string[]): void {
    this.members.subscribe(instance, topics);
  }

  assign(instance: ConsumerInstance, partitions: readonly TopicPartition[]): void {
    this.members.assign(instance, partitions);
  }

  forgetTopic(name: string): void {
    this.members.forgetTopic(name);
  }

  /** Drops instances idle longer than the timeout (no commit: the client may have died mid-batch). */
  expireIdle(): ConsumerInstance[] {
    return this.members.expireIdle();
  }

  settled(group: string): Promise<void> {
    return this.members.settled(group);
  }

  fetch(instance: ConsumerInstance, options: FetchOptions): Promise<ConsumedRecord[]> {
    return this.reader.fetch(instance, options);
  }

  commitPositions(instance: ConsumerInstance): void {
    this.members.commitPositions(instance);
  }

  commitOffsets(instance: ConsumerInstance, entries: readonly OffsetEntry[]): Promise<void> {
    return this.reader.commitOffsets(instance, entries);
  }

  committedOffsets(instance: ConsumerInstance, partitions?: readonly TopicPartition[]): OffsetEntry[] {
    return this.reader.committedOffsets(instance, partitions);
  }

  positionsOf(instance: ConsumerInstance): Promise<OffsetEntry[]> {
    return this.reader.positionsOf(instance);
  }

  seek(instance: ConsumerInstance, entries: readonly OffsetEntry[]): Promise<void> {
    return this.reader.seek(instance, entries);
  }

  seekToBeginning(instance: ConsumerInstance, partitions: readonly TopicPartition[]): Promise<void> {
    return this.reader.seekToBeginning(instance, partitions);
  }

  seekToEnd(instance: ConsumerInstance, partitions: readonly TopicPartition[]): Promise<void> {
    return this.reader.seekToEnd(instance, partitions);
  }

  /** True once the service is shutting down: fetches stop waiting. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves when group writes issued so far are durable. */
  flush(): Promise<void> {
    return this.store.flush();
  }

  close(): void {
    this.closed = true;
    this.members.close();
    this.reader.close();
  }
}
