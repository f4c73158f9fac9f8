// Consumer group membership: which instances this node holds, their subscriptions and manual
// assignments, and who owns which partition (the rebalance). Everything runs on one event loop,
// so the state needs no locks; what must survive a restart is written through GroupStore. A group
// may span several nodes sharing one store (JetStream): each node computes the same assignment
// from the store's member list, and an instance reads a partition only while it holds it in the
// store (GroupStore.claim), so a hand-over between nodes never lets two instances read one
// partition. Starting positions are filled after a rebalance (a networked log answers offsets
// over the network); readers wait for that through `settled`.

import { isValidName } from '../names.js';
import { illegalState, topicNotFound, unprocessable } from '../errors.js';
import type { TopicInfo, TopicLog } from '../log/types.js';
import { assignPartitions, type TopicPartition } from './assignment.js';
import {
  ConsumerInstance,
  instanceElsewhere,
  instanceNotFound,
  positionKey,
  requirePartition,
  splitKey,
  type Assigned,
  type GroupLimits,
  type GroupView,
} from './instance.js';
import type { GroupStore, GroupStoreEvent, InstanceConfig, InstanceRecord } from './store.js';

export class GroupMembership {
  private readonly groups = new Map<string, Map<string, ConsumerInstance>>();
  /** Per group: resolves once the last rebalance's starting positions are filled in. */
  private readonly settling = new Map<string, Promise<void>>();
  /** Instances being taken over from another node, by `group\0id`. */
  private readonly adopting = new Map<string, Promise<ConsumerInstance>>();
  private readonly unsubscribeStore: () => void;
  private nextSeq = 1;
  private closed = false;

  constructor(
    private readonly log: TopicLog,
    private readonly store: GroupStore,
    private readonly limits: GroupLimits,
    private readonly now: () => number,
  ) {
    this.unsubscribeStore = store.onChange((event) => this.onStoreChange(event));
    this.restore();
  }

  /** Stops following other nodes' changes (the service is stopping). */
  close(): void {
    this.closed = true;
    this.unsubscribeStore();
  }

  /** Another node changed the group (joined, left, subscribed, let go of a partition). */
  private onStoreChange(event: GroupStoreEvent): void {
    if (this.closed) return;
    if (event.type === 'removed') {
      const instance = this.groups.get(event.group)?.get(event.id);
      if (instance) this.drop(instance);
      return;
    }
    if (this.groups.has(event.group)) this.rebalance(event.group, true);
  }

  /** Reloads instances from the store; idle time restarts from now (downtime is not the client's). */
  private restore(): void {
    const now = this.now();
    const touched = new Set<string>();
    for (const record of this.store.loadInstances()) {
      this.instate(record, now);
      touched.add(record.group);
    }
    for (const group of touched) this.rebalance(group, false);
  }

  /** Makes a stored instance one of this node's (after a restart, or taken over from another node). */
  private instate(record: InstanceRecord, now: number): ConsumerInstance {
    const instance = new ConsumerInstance(
      record.group,
      record.id,
      record.seq,
      record.createdAt,
      record.config,
      record.topics,
      now,
      this.store.nodeId,
      record.baseUri,
    );
    // A position is only good while the instance kept its partition; one that moved to
    // another instance meanwhile starts again from the committed offset.
    const heldByOthers = new Set(
      this.store
        .holders(record.group)
        .filter((h) => h.instance !== record.id)
        .map((h) => positionKey(h.topic, h.partition)),
    );
    for (const [key, offset] of Object.entries(record.positions))
      if (!heldByOthers.has(key)) instance.positions.set(key, offset);
    instance.manual = [...(record.manual ?? [])];
    this.membersOf(record.group, true).set(record.id, instance);
    this.nextSeq = Math.max(this.nextSeq, record.seq + 1);
    return instance;
  }

  /** `baseUri`: where clients reach the instance (named to clients that ask another node). */
  create(group: string, config: InstanceConfig, id: string, baseUri?: string): ConsumerInstance {
    const all = this.store.members(group);
    if (all.length >= this.limits.maxInstancesPerGroup) {
      throw unprocessable(
        `consumer group '${group}' already has ${all.length} instances (limit STREAMS_MAX_INSTANCES_PER_GROUP=${this.limits.maxInstancesPerGroup})`,
      );
    }
    // Join order across nodes: after every member this node has heard of.
    const seq = Math.max(this.nextSeq, ...all.map((m) => m.seq + 1));
    this.nextSeq = seq + 1;
    const now = this.now();
    const instance = new ConsumerInstance(group, id, seq, now, config, [], now, this.store.nodeId, baseUri);
    this.membersOf(group, true).set(id, instance);
    this.store.saveInstance(instance.toRecord());
    return instance;
  }

  /**
   * The instance, renewed against idle expiry; 404/40403 when unknown. One served last by
   * another node (shared store) is taken over with its stored state: from now on this node
   * serves it, and the other node stops (GroupStore.adopt).
   */
  async acquire(group: string, id: string): Promise<ConsumerInstance> {
    const local = this.groups.get(group)?.get(id);
    if (local) {
      local.lastSeen = this.now();
      return local;
    }
    const key = `${group}\u0000${id}`;
    let adopting = this.adopting.get(key);
    if (!adopting) {
      adopting = this.adopt(group, id).finally(() => this.adopting.delete(key));
      this.adopting.set(key, adopting);
    }
    const instance = await adopting;
    instance.lastSeen = this.now();
    return instance;
  }

  private async adopt(group: string, id: string): Promise<ConsumerInstance> {
    // A name that cannot be created (names.ts) names no instance; it never reaches the store,
    // whose keys are bounded (LMDB refuses keys over 1,978 bytes).
    if (!isValidName(group) || !isValidName(id)) throw instanceNotFound(group, id);
    const record = await this.store.adopt(group, id);
    if (!record || this.closed) throw instanceNotFound(group, id);
    const instance = this.groups.get(group)?.get(id) ?? this.instate(record, this.now());
    this.rebalance(group, false);
    return instance;
  }

  /**
   * The instance when this node serves it (a push stream stays on the node it is connected
   * to); 404/40403 naming the node that serves it otherwise.
   */
  local(group: string, id: string): ConsumerInstance {
    const instance = this.groups.get(group)?.get(id);
    if (!instance) {
      const remote = this.store.members(group).find((m) => m.id === id);
      if (remote?.node !== undefined && remote.node !== this.store.nodeId)
        throw instanceElsewhere(group, id, remote.node, remote.baseUri);
      throw instanceNotFound(group, id);
    }
    instance.lastSeen = this.now();
    return instance;
  }

  /** True when the group has a member with this id, on this node or another. */
  isMember(group: string, id: string): boolean {
    return this.store.members(group).some((m) => m.id === id);
  }

  /**
   * Groups with a member on this node, and groups with committed offsets (a stopped group stays
   * listed, with its lag, until it is deleted, as Kafka's groups do until their offsets expire).
   */
  groupNames(): string[] {
    const names = new Set(this.store.committedGroups());
    for (const [name, members] of this.groups) if (members.size > 0) names.add(name);
    return [...names];
  }

  /**
   * The group as the console shows it: every member (on every node), the partitions each one
   * reads, and the committed offset of each partition of the topics the members subscribe to.
   */
  describeGroup(group: string): GroupView {
    const local = this.groups.get(group);
    const holders = this.store.holders(group);
    const members = this.store.members(group).map((m) => {
      const instance = local?.get(m.id);
      const partitions = instance
        ? [
            ...instance.assigned.map((a) => ({ topic: a.topic.name, partition: a.partition })),
            ...instance.manual,
          ]
        : holders.filter((h) => h.instance === m.id).map((h) => ({ topic: h.topic, partition: h.partition }));
      return { member: m, instance, partitions };
    });
    const topics = new Set<string>();
    for (const { member, partitions } of members) {
      for (const t of member.topics) topics.add(t);
      for (const p of partitions) topics.add(p.topic);
    }
    for (const c of this.store.groupOffsets(group)) topics.add(c.topic);
    const committed = (topic: string, partition: number) =>
      this.store.committedOffset(group, topic, partition);
    return { members, topics: [...topics].sort(), committed };
  }

  instances(group: string): ConsumerInstance[] {
    return [...(this.groups.get(group)?.values() ?? [])];
  }

  /** Leaves the group; with auto-commit, what was delivered is committed first (like a Kafka close). */
  delete(instance: ConsumerInstance, commit: boolean): void {
    if (commit && instance.config.autoCommit) this.commitPositions(instance);
    this.remove(instance);
  }

  private remove(instance: ConsumerInstance): void {
    if (!this.forget(instance)) return;
    // After the commits issued above, so the next holder starts after what was committed.
    for (const h of this.store.holders(instance.group))
      if (h.instance === instance.id) this.store.release(instance.group, h.topic, h.partition, instance.id);
    this.store.deleteInstance(instance.group, instance.id);
    this.rebalance(instance.group, true);
  }

  /**
   * A write of the instance was refused: another node took it over. Normally the store has said
   * so already ('removed'); when that came while this node was still taking the instance over,
   * the instance is forgotten here, so the next request takes it over again from the stored state.
   */
  takenOver(instance: ConsumerInstance): void {
    this.drop(instance);
  }

  /** Another node removed the instance from the group (it took this node for dead). */
  private drop(instance: ConsumerInstance): void {
    if (this.forget(instance)) this.rebalance(instance.group, true);
  }

  private forget(instance: ConsumerInstance): boolean {
    const members = this.groups.get(instance.group);
    if (!members || members.get(instance.id) !== instance) return false;
    members.delete(instance.id);
    instance.deleted = true;
    instance.wake?.();
    if (members.size === 0) this.groups.delete(instance.group);
    return true;
  }

  /** Replaces the subscription (an empty list unsubscribes); every topic must exist. */
  subscribe(instance: ConsumerInstance, topics: readonly string[]): void {
    const unique = [...new Set(topics)];
    if (unique.length > 0 && instance.manual.length > 0) {
      throw illegalState(
        'this consumer instance has a manual assignment; POST {"partitions":[]} to its /assignments before subscribing',
      );
    }
    for (const name of unique) if (!this.log.topic(name)) throw topicNotFound(name);
    instance.topics = unique;
    this.save(instance);
    this.rebalance(instance.group, true);
  }

  /**
   * Manual assignment (Kafka's assign()): the instance reads exactly these partitions and takes
   * no part in the group's balancing; an empty list ends it. Not allowed while subscribed.
   */
  assign(instance: ConsumerInstance, partitions: readonly TopicPartition[]): void {
    if (partitions.length > 0 && instance.topics.length > 0) {
      throw illegalState(
        'this consumer instance is subscribed to topics; DELETE its /subscription before assigning partitions',
      );
    }
    const seen = new Set<string>();
    const unique: TopicPartition[] = [];
    for (const tp of partitions) {
      requirePartition(this.log, tp.topic, tp.partition);
      const key = positionKey(tp.topic, tp.partition);
      if (seen.has(key)) continue;
      seen.add(key);
      unique.push({ topic: tp.topic, partition: tp.partition });
    }
    instance.manual = unique;
    this.save(instance);
    this.rebalance(instance.group, true);
  }

  /**
   * The topic was removed: every group forgets its committed offsets, this node's instances
   * their positions (nothing is committed for it) and manual assignments of it. Subscriptions
   * keep the name, so their fetches answer 404 until the topic exists again or they resubscribe.
   */
  forgetTopic(name: string): void {
    this.store.forgetTopic(name);
    for (const [group, members] of this.groups) {
      let touched = false;
      for (const instance of members.values())
        touched = this.dropTopic(instance, (t) => t === name) || touched;
      if (touched) this.rebalance(group, true);
    }
  }

  /** Drops the instance's positions (and manual partitions) of the topics `gone` picks. */
  dropTopic(instance: ConsumerInstance, gone: (topic: string) => boolean): boolean {
    let changed = false;
    for (const key of [...instance.positions.keys()]) {
      if (gone(splitKey(key)[0])) changed = instance.positions.delete(key) || changed;
    }
    const manual = instance.manual.filter((tp) => !gone(tp.topic));
    if (manual.length !== instance.manual.length) {
      instance.manual = manual;
      changed = true;
    }
    const assigned = instance.assigned.filter((a) => !gone(a.topic.name));
    if (assigned.length !== instance.assigned.length) {
      instance.assigned = assigned;
      instance.assignedKeys = new Set(assigned.map((a) => a.key));
      changed = true;
    }
    if (changed) this.save(instance);
    return changed;
  }

  /** Commits the instance's current positions for every partition it owns. */
  commitPositions(instance: ConsumerInstance): void {
    for (const a of instance.assigned) {
      const position = instance.positions.get(a.key);
      if (position !== undefined) this.store.commit(instance.group, a.topic.name, a.partition, position);
    }
  }

  /** Resolves once the group's last rebalance has filled in its members' starting positions. */
  settled(group: string): Promise<void> {
    return this.settling.get(group) ?? Promise.resolve();
  }

  /** Drops instances idle longer than the timeout (no commit: the client may have died mid-batch). */
  expireIdle(): ConsumerInstance[] {
    const cutoff = this.now() - this.limits.instanceTimeoutMs;
    const expired: ConsumerInstance[] = [];
    for (const members of this.groups.values()) {
      for (const instance of members.values()) {
        if (instance.readers === 0 && instance.pushStreams === 0 && instance.lastSeen < cutoff)
          expired.push(instance);
      }
    }
    for (const instance of expired) this.remove(instance);
    return expired;
  }

  /**
   * Persists the instance, unless it left meanwhile (a fetch or fill in flight when it was
   * deleted or expired must not write it back).
   */
  save(instance: ConsumerInstance): void {
    if (!instance.deleted) this.store.saveInstance(instance.toRecord());
  }

  private membersOf(group: string, create: boolean): Map<string, ConsumerInstance> {
    let members = this.groups.get(group);
    if (!members) {
      members = new Map();
      if (create) this.groups.set(group, members);
    }
    return members;
  }

  /**
   * Recomputes who owns which partition. Partitions leaving an instance have their position
   * committed first (with auto-commit), so the next owner starts after what was delivered.
   */
  rebalance(group: string, commitRevoked: boolean): void {
    // Only this node's instances are acted on; every member, on every node, counts for the plan.
    const members = [...(this.groups.get(group)?.values() ?? [])];
    if (members.length === 0) return;
    const plan = assignPartitions(
      this.store.members(group).map((m) => ({ id: m.id, seq: m.seq, topics: m.topics })),
      (name) => this.log.topic(name),
    );
    // Manually assigned members read their own partitions, outside the balancing (Kafka's assign()).
    for (const member of members) if (member.manual.length > 0) plan.set(member.id, member.manual);
    const holders = this.store.holders(group);
    const changed = new Set<ConsumerInstance>();
    for (const member of members) {
      const keep = new Set((plan.get(member.id) ?? []).map((tp) => positionKey(tp.topic, tp.partition)));
      const had = new Set([...member.assignedKeys, ...member.positions.keys()]);
      for (const h of holders) if (h.instance === member.id) had.add(positionKey(h.topic, h.partition));
      for (const key of had) {
        if (keep.has(key)) continue;
        const [topic, partition] = splitKey(key);
        const position = member.positions.get(key);
        if (position !== undefined && commitRevoked && member.config.autoCommit)
          this.store.commit(group, topic, partition, position);
        if (member.positions.delete(key)) changed.add(member);
        this.store.release(group, topic, partition, member.id);
      }
    }
    for (const member of changed) this.save(member);
    const filled = new Set<ConsumerInstance>();
    const fills: Array<Promise<void>> = [];
    for (const member of members) {
      const assigned: Assigned[] = [];
      for (const tp of plan.get(member.id) ?? []) {
        // Not readable until the previous holder has let go (it commits first) or left. A manual
        // assignment is outside the group's balancing (as Kafka's assign()), so it holds nothing.
        const topic = this.log.topic(tp.topic);
        // A manually assigned topic may have been removed.
        if (!topic) continue;
        if (member.manual.length === 0 && !this.store.claim(group, tp.topic, tp.partition, member.id))
          continue;
        const key = positionKey(tp.topic, tp.partition);
        assigned.push({ topic, partition: tp.partition, key });
        if (member.positions.has(key)) continue;
        fills.push(
          this.initialPosition(member, topic, tp.partition).then((initial) => {
            // A later rebalance may have moved the partition, or a seek placed it, meanwhile.
            if (initial === undefined || !member.assignedKeys.has(key) || member.positions.has(key)) return;
            member.positions.set(key, initial);
            filled.add(member);
          }),
        );
      }
      member.assigned = assigned;
      member.assignedKeys = new Set(assigned.map((a) => a.key));
      member.cursor = 0;
      member.wake?.();
    }
    const previous = this.settled(group);
    // A fill that fails (the log unreachable) leaves the position unset; fetch fills it later.
    const settled = (async () => {
      await previous;
      await Promise.allSettled(fills);
      for (const member of filled) this.save(member);
    })();
    this.settling.set(group, settled);
    void settled.then(() => {
      if (this.settling.get(group) === settled) this.settling.delete(group);
    });
  }

  /** A committed group offset wins; otherwise the instance's auto.offset.reset decides. */
  async initialPosition(
    member: ConsumerInstance,
    topic: TopicInfo,
    partition: number,
  ): Promise<number | undefined> {
    const committed = this.store.committedOffset(member.group, topic.name, partition);
    if (committed !== undefined) return committed;
    switch (member.config.offsetReset) {
      case 'earliest':
        return this.log.beginningOffset(topic, partition);
      case 'latest':
        return this.log.endOffset(topic, partition);
      case 'none':
        return undefined;
    }
  }
}
