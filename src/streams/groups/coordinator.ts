// Consumer groups: instances, subscriptions, partition ownership, positions and commits.
// Everything runs on one event loop (the service is pinned to front-end thread 0), so the
// group state needs no locks; what must survive a restart is written through GroupStore.
// A group may span several nodes sharing one store (JetStream): each node serves the instances
// it created, computes the same assignment from the store's member list, and an instance reads
// a partition only while it holds it in the store (GroupStore.claim), so a hand-over between
// nodes never lets two instances read one partition.
// Log offsets are asynchronous (a networked log answers them over the network): a rebalance
// changes ownership synchronously and fills the new owners' starting positions afterwards;
// readers of positions wait for that (`settled`).

import {
  illegalState,
  partitionNotFound,
  topicNotFound,
  unprocessable,
  ErrorCodes,
  StreamsError,
} from '../errors.js';
import type { StoredRecord, TopicInfo, TopicLog } from '../log/types.js';
import { assignPartitions, type TopicPartition } from './assignment.js';
import type { GroupMember, GroupStore, GroupStoreEvent, InstanceConfig, InstanceRecord } from './store.js';

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

interface Assigned {
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

const instanceNotFound = (group: string, id: string): StreamsError =>
  new StreamsError(
    404,
    ErrorCodes.instanceNotFound,
    `consumer instance '${id}' not found in group '${group}' (deleted, expired, or never created)`,
  );

// Served by another node of a shared store: say where, so the client can go there.
const instanceElsewhere = (
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

const splitKey = (key: string): [string, number] => {
  const slash = key.lastIndexOf('/');
  return [key.slice(0, slash), Number(key.slice(slash + 1))];
};

export class ConsumerGroups {
  private readonly groups = new Map<string, Map<string, ConsumerInstance>>();
  private readonly waiting = new Set<ConsumerInstance>();
  /** Per group: resolves once the last rebalance's starting positions are filled in. */
  private readonly settling = new Map<string, Promise<void>>();
  private readonly unsubscribeLog: () => void;
  private readonly unsubscribeStore: () => void;
  private nextSeq = 1;
  private closed = false;

  constructor(
    private readonly log: TopicLog,
    private readonly store: GroupStore,
    private readonly limits: GroupLimits,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribeLog = log.onAppend((topic, partition) => this.onAppend(topic, partition));
    this.unsubscribeStore = store.onChange((event) => this.onStoreChange(event));
    this.restore();
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
      const instance = new ConsumerInstance(
        record.group,
        record.id,
        record.seq,
        record.createdAt,
        record.config,
        record.topics,
        now,
        record.node,
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
      touched.add(record.group);
    }
    for (const group of touched) this.rebalance(group, false);
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

  /** The instance, renewed against idle expiry; 404/40403 when unknown. */
  get(group: string, id: string): ConsumerInstance {
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

  /** Groups with a member this node knows of (a group whose members all left is not listed). */
  groupNames(): string[] {
    return [...this.groups].filter(([, members]) => members.size > 0).map(([name]) => name);
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
      this.topicPartition(tp.topic, tp.partition);
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
  private dropTopic(instance: ConsumerInstance, gone: (topic: string) => boolean): boolean {
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
      for (const member of this.groups.get(instance.group)?.values() ?? [])
        this.dropTopic(member, (t) => staleNames.has(t));
      this.rebalance(instance.group, true);
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
      if (instance.deleted) throw instanceNotFound(instance.group, instance.id);
      this.checkReadable(instance, options);
      if (options.commitDelivered ?? instance.config.autoCommit) this.commitPositions(instance);
      for (;;) {
        this.checkTopics(instance);
        await this.settled(instance.group);
        await this.fillMissing(instance);
        this.requirePositions(instance);
        const records = await this.collect(instance, options);
        if (records.length > 0) {
          this.save(instance);
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

  /** Commits the instance's current positions for every partition it owns. */
  commitPositions(instance: ConsumerInstance): void {
    for (const a of instance.assigned) {
      const position = instance.positions.get(a.key);
      if (position !== undefined) this.store.commit(instance.group, a.topic.name, a.partition, position);
    }
  }

  /** Explicit commit: each offset is the last record consumed; the group resumes after it. */
  async commitOffsets(instance: ConsumerInstance, entries: readonly OffsetEntry[]): Promise<void> {
    const topics = entries.map((e) => this.topicPartition(e.topic, e.partition));
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
      this.topicPartition(tp.topic, tp.partition);
      const offset = this.store.committedOffset(instance.group, tp.topic, tp.partition);
      return { topic: tp.topic, partition: tp.partition, offset: offset ?? -1 };
    });
  }

  /** Next offset to fetch for each partition the instance owns. */
  async positionsOf(instance: ConsumerInstance): Promise<OffsetEntry[]> {
    await this.settled(instance.group);
    return instance.assigned.map((a) => ({
      topic: a.topic.name,
      partition: a.partition,
      offset: instance.positions.get(a.key) ?? -1,
    }));
  }

  async seek(instance: ConsumerInstance, entries: readonly OffsetEntry[]): Promise<void> {
    await this.settled(instance.group);
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
    this.save(instance);
  }

  async seekToBeginning(instance: ConsumerInstance, partitions: readonly TopicPartition[]): Promise<void> {
    await this.settled(instance.group);
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
    await this.settled(instance.group);
    const offsets = await Promise.all(
      partitions.map((tp) => this.log.endOffset(this.owned(instance, tp.topic, tp.partition), tp.partition)),
    );
    await this.seek(
      instance,
      partitions.map((tp, i) => ({ ...tp, offset: offsets[i]! })),
    );
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
    this.unsubscribeLog();
    this.unsubscribeStore();
    for (const instance of this.waiting) instance.wake?.();
  }

  /**
   * Persists the instance, unless it left meanwhile (a fetch or fill in flight when it was
   * deleted or expired must not write it back).
   */
  private save(instance: ConsumerInstance): void {
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
  private rebalance(group: string, commitRevoked: boolean): void {
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
  private async initialPosition(
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

  /** Starting positions a rebalance could not fill (the log did not answer then). */
  private async fillMissing(instance: ConsumerInstance): Promise<void> {
    let changed = false;
    for (const a of instance.assigned) {
      if (instance.positions.has(a.key)) continue;
      const initial = await this.initialPosition(instance, a.topic, a.partition);
      if (initial === undefined || !instance.assignedKeys.has(a.key) || instance.positions.has(a.key))
        continue;
      instance.positions.set(a.key, initial);
      changed = true;
    }
    if (changed) this.save(instance);
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

  private topicPartition(name: string, partition: number): TopicInfo {
    const topic = this.log.topic(name);
    if (!topic) throw topicNotFound(name);
    if (!Number.isInteger(partition) || partition < 0 || partition >= topic.partitions)
      throw partitionNotFound(name, partition, topic.partitions);
    return topic;
  }

  private owned(instance: ConsumerInstance, name: string, partition: number): TopicInfo {
    const topic = this.topicPartition(name, partition);
    if (!instance.assignedKeys.has(positionKey(name, partition))) {
      throw illegalState(`partition ${name}/${partition} is not assigned to this consumer instance`);
    }
    return topic;
  }
}
