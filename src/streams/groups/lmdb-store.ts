// Group state in the streams LMDB environment (one node): committed offsets per (group, topic,
// partition) and each consumer instance's state (membership, subscription, positions), so both
// survive a restart. Reads are served from memory (loaded at open); writes go to LMDB un-awaited
// and ride the same group commits as produced records, except where a caller awaits `flush()`.
// Partition holders live in memory only: with one node every member is local, so a partition is
// free as soon as the coordinator lets go of it and a claim is granted at once.

import type { Database, RootDatabase } from 'lmdb';
import type {
  CommittedOffset,
  GroupMember,
  GroupStore,
  GroupStoreEvent,
  InstanceRecord,
  PartitionHolder,
} from './store.js';

type OffsetKey = [string, string, number];

export class LmdbGroupStore implements GroupStore {
  readonly nodeId: string;
  private readonly offsetsDb: Database<number, OffsetKey>;
  private readonly instancesDb: Database<InstanceRecord, [string, string]>;
  private readonly committed = new Map<string, number>();
  private readonly membersByGroup = new Map<string, Map<string, GroupMember>>();
  /** group → `topic/partition` → holder instance id. */
  private readonly held = new Map<string, Map<string, PartitionHolder>>();
  private lastWrite: Promise<unknown> = Promise.resolve();

  constructor(root: RootDatabase, nodeId = 'local') {
    this.nodeId = nodeId;
    this.offsetsDb = root.openDB<number, OffsetKey>({ name: 'group-offsets' });
    this.instancesDb = root.openDB<InstanceRecord, [string, string]>({ name: 'group-instances' });
    for (const { key, value } of this.offsetsDb.getRange()) {
      this.committed.set(offsetKey(key[0], key[1], key[2]), value);
    }
    for (const { value } of this.instancesDb.getRange()) this.remember(value);
  }

  committedOffset(group: string, topic: string, partition: number): number | undefined {
    return this.committed.get(offsetKey(group, topic, partition));
  }

  commit(group: string, topic: string, partition: number, offset: number): void {
    const key = offsetKey(group, topic, partition);
    if (this.committed.get(key) === offset) return;
    this.committed.set(key, offset);
    this.track(this.offsetsDb.put([group, topic, partition], offset));
  }

  forgetTopic(topic: string): void {
    this.forgetOffsets((_group, name) => name === topic);
  }

  groupOffsets(group: string): readonly CommittedOffset[] {
    const out: CommittedOffset[] = [];
    for (const [key, offset] of this.committed) {
      const [g, topic, partition] = parseOffsetKey(key);
      if (g === group) out.push({ topic, partition, offset });
    }
    return out;
  }

  committedGroups(): string[] {
    return [...new Set([...this.committed.keys()].map((key) => parseOffsetKey(key)[0]))];
  }

  forgetGroup(group: string): void {
    this.forgetOffsets((g) => g === group);
  }

  private forgetOffsets(match: (group: string, topic: string) => boolean): void {
    for (const key of [...this.committed.keys()]) {
      const [group, topic, partition] = parseOffsetKey(key);
      if (!match(group, topic)) continue;
      this.committed.delete(key);
      this.track(this.offsetsDb.remove([group, topic, partition]));
    }
  }

  loadInstances(): InstanceRecord[] {
    const out: InstanceRecord[] = [];
    for (const { value } of this.instancesDb.getRange()) out.push(value);
    return out;
  }

  saveInstance(record: InstanceRecord): void {
    this.remember(record);
    this.track(this.instancesDb.put([record.group, record.id], record));
  }

  deleteInstance(group: string, id: string): void {
    const members = this.membersByGroup.get(group);
    members?.delete(id);
    if (members?.size === 0) this.membersByGroup.delete(group);
    this.track(this.instancesDb.remove([group, id]));
  }

  members(group: string): readonly GroupMember[] {
    return [...(this.membersByGroup.get(group)?.values() ?? [])];
  }

  /**
   * One node serves every instance: there is never another node's instance to take over. The
   * members in memory decide, not the database: a delete is stored at the next group commit,
   * and until then a read would still find the instance and bring an expired one back.
   */
  adopt(group: string, id: string): Promise<InstanceRecord | undefined> {
    if (!this.membersByGroup.get(group)?.has(id)) return Promise.resolve(undefined);
    return Promise.resolve(this.instancesDb.get([group, id]));
  }

  /** Positions ride the next group commit, as before (a crash may repeat the last fetch). */
  instanceSaved(_group: string, _id: string): Promise<boolean> {
    return Promise.resolve(true);
  }

  holders(group: string): readonly PartitionHolder[] {
    return [...(this.held.get(group)?.values() ?? [])];
  }

  claim(group: string, topic: string, partition: number, instance: string): boolean {
    let held = this.held.get(group);
    const key = `${topic}/${partition}`;
    const current = held?.get(key);
    if (current?.instance === instance) return true;
    if (current && this.membersByGroup.get(group)?.has(current.instance)) return false;
    if (!held) this.held.set(group, (held = new Map()));
    held.set(key, { topic, partition, instance });
    return true;
  }

  release(group: string, topic: string, partition: number, instance: string): void {
    const held = this.held.get(group);
    const key = `${topic}/${partition}`;
    if (held?.get(key)?.instance !== instance) return;
    held.delete(key);
    if (held.size === 0) this.held.delete(group);
  }

  /** Everything happens on this node, synchronously: there is nothing to be told about. */
  onChange(_listener: (event: GroupStoreEvent) => void): () => void {
    return () => undefined;
  }

  /** Resolves when every write issued so far is durable. */
  async flush(): Promise<void> {
    await this.lastWrite;
    await this.instancesDb.flushed;
  }

  /** The environment is the log's; whoever opened it closes it. */
  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
  }

  private remember(record: InstanceRecord): void {
    let members = this.membersByGroup.get(record.group);
    if (!members) this.membersByGroup.set(record.group, (members = new Map()));
    members.set(record.id, {
      group: record.group,
      id: record.id,
      seq: record.seq,
      topics: record.topics,
      node: record.node,
      baseUri: record.baseUri,
    });
  }

  private track(write: Promise<unknown>): void {
    // Writes commit in order, so waiting for the last one covers all earlier ones.
    this.lastWrite = write;
    write.catch(() => undefined);
  }
}

function offsetKey(group: string, topic: string, partition: number): string {
  return `${group}\u0000${topic}\u0000${partition}`;
}

function parseOffsetKey(key: string): OffsetKey {
  const [group, topic, partition] = key.split('\u0000') as [string, string, string];
  return [group, topic, Number(partition)];
}
