// Group state in a JetStream key-value bucket shared by every Sluice node of one NATS cluster, so
// consumer groups span nodes (key layout: kv-keys.ts). Each node keeps a copy of the whole bucket
// in memory, fed by one KV watch (an ordered consumer: entries arrive in revision order), and
// answers reads from it. Writes are issued without waiting; `flush()` waits for their acks and
// then for the watch to have delivered them, so a reader on this node sees its own writes.
//
// An instance's whole state (member, subscription, settings, positions) is one key, written by
// the node serving the instance, each write at the revision of its previous one (compare-and-set).
// Any node can take an instance over (`adopt`: a request for it arrived there) by writing it at the
// revision its copy holds (every revision-checked write goes through revision-write.ts: a plain
// KV update at a revision is not exclusive on a nats-server 2.9 cluster); the node that served it sees the move in its watch (or its next write
// is refused) and stops serving it. Of two nodes using one instance at once, the later write
// loses and that node's request is refused, so no position is stored twice or lost (see
// docs/streams.md, "Consumer instances on any node"). A node taken for dead has its members
// deleted with the revision the survivor saw, and partitions change holder with create /
// update-at-revision / delete-at-revision, so two survivors never both win. A partition is let go only after the commits issued before
// are acknowledged, and a new holder reads the committed offset only once the watch delivered
// its own claim — every write before it (the old holder's commit included) is in the copy then.

import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { ErrorCodes, StreamsError } from '../errors.js';
import { claimKey, memberKey, nodeKey, offsetKey, parseKey, positionsKey } from './kv-keys.js';
import { NodeLiveness } from './liveness.js';
import { BucketFollower, onReconnect } from '../nats/bucket-follower.js';
import { revisionWriter, type RevisionWriter } from '../nats/revision-write.js';
import type { GroupMember, GroupStore, GroupStoreEvent, InstanceRecord, PartitionHolder } from './store.js';
import type { CommittedOffset } from './store.js';

export const DEFAULT_GROUPS_BUCKET = 'sluice_streams_groups';

export interface JetStreamGroupStoreOptions {
  readonly nc: NatsConnection;
  readonly nodeId: string;
  /** Replicas of the bucket's stream (STREAMS_REPLICAS). */
  readonly replicas: number;
  readonly heartbeatMs: number;
  readonly nodeTimeoutMs: number;
  readonly bucket?: string;
  /** Timeout of JetStream API calls such as creating the bucket (ms). */
  readonly timeoutMs?: number;
  /** How long `open` waits for a cluster that is not ready yet (ms). */
  readonly startTimeoutMs?: number;
  /** Close (drain) the connection when the store closes. */
  readonly ownsConnection?: boolean;
  /** Written into the heartbeat so an operator can tell where a node answers. */
  readonly url?: string;
  /** Monotonic clock for heartbeat ages (default performance.now). */
  readonly now?: () => number;
  /** How long `flush()` waits for the watch to deliver acknowledged writes. */
  readonly visibleTimeoutMs?: number;
  /**
   * How long a revision JetStream reported may stay undelivered before the watch is started
   * again (default 5 heartbeats, at least 2 s; see BucketFollower).
   */
  readonly watchStallMs?: number;
  /** Failures of background writes (heartbeats, hand-overs, expiry), for the log. */
  readonly onError?: (what: string, error: unknown) => void;
}

/** An instance as stored; records of older versions keep their positions under a `p.` key. */
type StoredMember = Omit<InstanceRecord, 'positions'> & { readonly positions?: InstanceRecord['positions'] };

/** The outcome of an instance's writes: stored, refused because another node took it, or failed. */
type OwnOutcome = 'stored' | 'lost' | 'failed';

/** An instance this node serves: its writes, one after another, each at the last revision. */
interface Own {
  revision: number;
  /** The next value to write (null: delete), taken when the step queued for it runs. */
  next: string | null | undefined;
  last: string | undefined;
  chain: Promise<OwnOutcome>;
  lost: boolean;
}

interface Held {
  readonly holder: PartitionHolder;
  readonly revision: number;
}

const storeFailure = (error: unknown): StreamsError =>
  new StreamsError(
    503,
    ErrorCodes.storageRetriable,
    `consumer group state could not be stored in JetStream (${(error as Error)?.message ?? String(error)}); retry`,
  );

export class JetStreamGroupStore implements GroupStore {
  readonly nodeId: string;
  private readonly offsets = new Map<string, number>();
  private readonly membersByGroup = new Map<
    string,
    Map<string, { member: StoredMember; revision: number }>
  >();
  private readonly claims = new Map<string, Map<string, Held>>();
  /** Positions read at open, for this node's instances. */
  private readonly positionsAtOpen = new Map<string, Record<string, number>>();
  private readonly written = new Map<string, string>();
  private readonly claiming = new Set<string>();
  private readonly releasing = new Set<string>();
  private readonly expiring = new Set<string>();
  private readonly listeners = new Set<(event: GroupStoreEvent) => void>();
  private readonly pending = new Set<Promise<void>>();
  private readonly waiters: Array<{ revision: number; resolve: () => void }> = [];
  private readonly conditions = new Set<() => void>();
  /** Member keys of the instances this node serves (or served until another node took them). */
  private readonly own = new Map<string, Own>();
  private readonly liveness: NodeLiveness;
  private readonly onError: (what: string, error: unknown) => void;
  private failure: unknown;
  private acked = 0;
  private opened = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly follower: BucketFollower;
  /** Writes at a revision that two nodes cannot both win (see revision-write.ts). */
  private readonly atRevision: RevisionWriter;

  private constructor(
    private readonly kv: KV,
    private readonly options: JetStreamGroupStoreOptions,
  ) {
    this.nodeId = options.nodeId;
    this.liveness = new NodeLiveness(options.nodeTimeoutMs, options.now ?? (() => performance.now()));
    this.onError = options.onError ?? (() => undefined);
    this.atRevision = revisionWriter(
      jetstream(options.nc, options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
      kv,
      options.bucket ?? DEFAULT_GROUPS_BUCKET,
    );
    this.follower = new BucketFollower(kv, {
      apply: (entry) => this.apply(entry),
      delivered: () => this.wakeWaiters(),
      replayed: (keys) => this.dropLost(keys),
      onError: (what, error) => this.onError(`group state: ${what}`, error),
      probeMs: options.heartbeatMs,
      stallMs: options.watchStallMs ?? Math.max(5 * options.heartbeatMs, 2_000),
      ...(options.now ? { now: options.now } : {}),
    });
  }

  /** The newest revision of the bucket this node's copy holds. */
  private get seen(): number {
    return this.follower.seen;
  }

  /**
   * Creates the bucket if needed, loads it and starts heartbeating. A cluster that is still
   * forming (no leader, too few peers for the replicas yet) is waited for, up to
   * `startTimeoutMs` (default 60 s); then the start fails with the last error.
   */
  static async open(options: JetStreamGroupStoreOptions): Promise<JetStreamGroupStore> {
    const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
    for (let attempt = 0; ; attempt++) {
      try {
        const kv = await new Kvm(jetstream(options.nc)).create(options.bucket ?? DEFAULT_GROUPS_BUCKET, {
          replicas: options.replicas,
          history: 1,
          ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}),
        });
        const store = new JetStreamGroupStore(kv, options);
        try {
          await store.start();
        } catch (error) {
          await store.stop();
          throw error;
        }
        return store;
      } catch (error) {
        if (Date.now() >= deadline || options.nc.isClosed()) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** attempt)));
      }
    }
  }

  private async start(): Promise<void> {
    // The watch starts with the last value of every key; the newest of them is `last`.
    const last = await this.follower.start();
    onReconnect(this.options.nc, () => this.follower.resync());
    await this.visible(last);
    this.opened = true;
    this.beat();
    this.timer = setInterval(() => {
      this.beat();
      this.expireDeadNodes();
    }, this.options.heartbeatMs);
    this.timer.unref();
  }

  // --- offsets -----------------------------------------------------------------------------

  committedOffset(group: string, topic: string, partition: number): number | undefined {
    return this.offsets.get(offsetKey(group, topic, partition));
  }

  commit(group: string, topic: string, partition: number, offset: number): void {
    const key = offsetKey(group, topic, partition);
    const text = String(offset);
    if (this.written.get(key) === text && this.offsets.get(key) === offset) return;
    this.written.set(key, text);
    this.write(this.kv.put(key, text));
  }

  forgetTopic(topic: string): void {
    for (const key of [...this.offsets.keys()]) {
      const parsed = parseKey(key);
      if (parsed?.kind !== 'offset' || parsed.topic !== topic) continue;
      this.offsets.delete(key);
      this.written.delete(key);
      this.write(this.kv.delete(key));
    }
  }

  groupOffsets(group: string): readonly CommittedOffset[] {
    const out: CommittedOffset[] = [];
    for (const [key, offset] of this.offsets) {
      const parsed = parseKey(key);
      if (parsed?.kind === 'offset' && parsed.group === group)
        out.push({ topic: parsed.topic, partition: parsed.partition, offset });
    }
    return out;
  }

  committedGroups(): string[] {
    const groups = new Set<string>();
    for (const key of this.offsets.keys()) {
      const parsed = parseKey(key);
      if (parsed?.kind === 'offset') groups.add(parsed.group);
    }
    return [...groups];
  }

  /** Like forgetTopic, for one group's keys; other nodes drop them when the watch delivers. */
  forgetGroup(group: string): void {
    for (const { topic, partition } of this.groupOffsets(group)) {
      const key = offsetKey(group, topic, partition);
      this.offsets.delete(key);
      this.written.delete(key);
      this.write(this.kv.delete(key));
    }
  }

  // --- instances and members ---------------------------------------------------------------

  loadInstances(): InstanceRecord[] {
    const out: InstanceRecord[] = [];
    for (const members of this.membersByGroup.values()) {
      for (const { member } of members.values()) {
        if (member.node !== this.nodeId) continue;
        const positions =
          member.positions ?? this.positionsAtOpen.get(positionsKey(member.group, member.id)) ?? {};
        // JSON leaves out an unset request timeout; the record has the key.
        const config = { ...member.config, requestTimeoutMs: member.config.requestTimeoutMs ?? undefined };
        out.push({ ...member, config, positions });
      }
    }
    return out;
  }

  saveInstance(record: InstanceRecord): void {
    // Taken over by another node: its write is dropped, and the copy keeps that node's state (an
    // adopt here later writes the copy's state at the copy's revision, so the two must match).
    if (this.own.get(memberKey(record.group, record.id))?.lost) return;
    const stored: StoredMember = { ...record, node: this.nodeId };
    const known = this.membersByGroup.get(record.group)?.get(record.id);
    this.membersOf(record.group).set(record.id, { member: stored, revision: known?.revision ?? 0 });
    this.ownWrite(record.group, record.id, JSON.stringify(stored));
  }

  deleteInstance(group: string, id: string): void {
    // The write chain first: it starts from the revision the copy holds.
    this.ownWrite(group, id, null);
    const members = this.membersByGroup.get(group);
    members?.delete(id);
    if (members?.size === 0) this.membersByGroup.delete(group);
    const legacy = positionsKey(group, id);
    if (this.positionsAtOpen.delete(legacy)) this.write(this.kv.delete(legacy));
  }

  async adopt(group: string, id: string): Promise<InstanceRecord | undefined> {
    const key = memberKey(group, id);
    const deadline = Date.now() + (this.options.visibleTimeoutMs ?? 30_000);
    let caughtUp = false;
    for (;;) {
      const known = this.membersByGroup.get(group)?.get(id);
      if (!known && !caughtUp && !this.closed) {
        // Maybe created through another node a moment ago: read up to the bucket's last
        // revision before answering that there is no such instance.
        caughtUp = true;
        const status = await this.kv.status().catch((error: unknown) => {
          throw storeFailure(error);
        });
        await this.visible(status.streamInfo.state.last_seq);
        continue;
      }
      if (!known || this.closed) return undefined;
      const record: InstanceRecord = {
        ...known.member,
        positions: known.member.positions ?? {},
        node: this.nodeId,
      };
      const value = JSON.stringify(record);
      const revision = await this.atRevision.write(key, value, known.revision).catch((error: unknown) => {
        throw storeFailure(error);
      });
      if (revision === undefined) {
        // This node's copy is behind (the instance was used elsewhere since, or deleted): go
        // again from what the watch delivers next.
        await this.until(
          () => this.membersByGroup.get(group)?.get(id)?.revision !== known.revision,
          deadline,
        );
        continue;
      }
      this.acked = Math.max(this.acked, revision);
      this.own.set(key, {
        revision,
        next: undefined,
        last: value,
        chain: Promise.resolve('stored'),
        lost: false,
      });
      this.membersOf(group).set(id, { member: record, revision });
      // Reads on this node (committed offsets, holders) are at least as new as the move.
      await this.visible(revision);
      // Taken by another node again while the watch caught up: go again.
      if (this.own.get(key)?.lost) continue;
      return record;
    }
  }

  /**
   * The outcome of the write step that holds the instance's last save (asked in the same turn
   * as the save): a step is one compare-and-set, so 'stored' means exactly that state is stored.
   */
  instanceSaved(group: string, id: string): Promise<boolean> {
    const own = this.own.get(memberKey(group, id));
    if (!own) return Promise.resolve(true);
    // Taken over before the save: the save was dropped.
    if (own.lost) return Promise.resolve(false);
    return own.chain.then((outcome) => {
      if (outcome === 'failed') throw storeFailure(this.failure ?? new Error('writing the instance failed'));
      return outcome === 'stored';
    });
  }

  members(group: string): readonly GroupMember[] {
    return [...(this.membersByGroup.get(group)?.values() ?? [])].map((m) => m.member);
  }

  // --- partition holders -------------------------------------------------------------------

  holders(group: string): readonly PartitionHolder[] {
    return [...(this.claims.get(group)?.values() ?? [])].map((h) => h.holder);
  }

  claim(group: string, topic: string, partition: number, instance: string): boolean {
    const key = claimKey(group, topic, partition);
    const current = this.claims.get(group)?.get(`${topic}/${partition}`);
    if (this.releasing.has(key)) return false;
    if (current?.holder.instance === instance) return true;
    if (this.claiming.has(key) || this.closed) return false;
    // A live member keeps its partition until it lets go; one that left or was expired does not.
    if (current && this.membersByGroup.get(group)?.has(current.holder.instance)) return false;
    this.claiming.add(key);
    // Held once the watch delivers the claim (a `changed` event), not at the ack: by then every
    // earlier write, the previous holder's last commit included, is in this node's copy.
    const attempt = current
      ? this.atRevision.write(key, instance, current.revision)
      : this.atRevision.create(key, instance);
    attempt
      .then((revision) => {
        if (revision === undefined) this.retryLater(group); // someone else won
      })
      .catch(() => this.retryLater(group)) // JetStream did not answer
      .finally(() => this.claiming.delete(key));
    return false;
  }

  release(group: string, topic: string, partition: number, instance: string): void {
    const key = claimKey(group, topic, partition);
    const current = this.claims.get(group)?.get(`${topic}/${partition}`);
    if (current?.holder.instance !== instance || this.releasing.has(key) || this.closed) return;
    this.releasing.add(key);
    // Only after the commits issued before are acknowledged: the next holder starts from them.
    const before = [...this.pending];
    void Promise.allSettled(before)
      .then(async () => {
        if ((await this.atRevision.write(key, null, current.revision)) === undefined)
          throw new Error('the partition changed holder meanwhile');
      })
      .catch((error: unknown) => {
        this.releasing.delete(key);
        this.onError(`letting go of ${topic}/${partition} of group '${group}'`, error);
        this.retryLater(group);
      });
  }

  // --- events, durability, life cycle ------------------------------------------------------

  onChange(listener: (event: GroupStoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
    const failure = this.failure;
    this.failure = undefined;
    if (failure !== undefined) throw storeFailure(failure);
    await this.visible(this.acked);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.stop();
    if (this.options.ownsConnection)
      await this.options.nc.drain().catch(() => this.options.nc.close().catch(() => undefined));
    // The heartbeat stays: a restart with the same STREAMS_NODE_ID resumes this node's
    // instances, and otherwise the others expire them after STREAMS_NODE_TIMEOUT.
  }

  /** Stops heartbeats and the watch once the writes in flight are settled; the connection stays. */
  private async stop(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await Promise.allSettled([...this.pending]);
    await this.follower.stop();
    for (const w of this.waiters.splice(0)) w.resolve();
    for (const check of [...this.conditions]) check();
  }

  // --- internals ---------------------------------------------------------------------------

  private apply(entry: KvWatchEntry): void {
    const parsed = parseKey(entry.key);
    if (!parsed) return;
    const deleted = entry.operation !== 'PUT';
    switch (parsed.kind) {
      case 'offset':
        if (deleted) this.offsets.delete(entry.key);
        else this.offsets.set(entry.key, Number(entry.string()));
        return;
      case 'member':
        return this.applyMember(entry, parsed, deleted);
      case 'positions':
        if (!this.opened && !deleted) this.positionsAtOpen.set(entry.key, entry.json());
        return;
      case 'claim':
        return this.applyClaim(entry, parsed, deleted);
      case 'node':
        if (deleted) this.liveness.forget(parsed.node);
        else this.liveness.observe(parsed.node, entry.revision);
        return;
    }
  }

  private applyMember(entry: KvWatchEntry, key: { group: string; id: string }, deleted: boolean): void {
    if (deleted) return this.applyMemberDeleted(entry.key, key);
    const known = this.membersByGroup.get(key.group)?.get(key.id);
    const member = entry.json<StoredMember>();
    if (member.node === this.nodeId && this.opened) {
      if (known) known.revision = Math.max(known.revision, entry.revision);
      // A write of an instance this node no longer has (it was deleted or expired meanwhile).
      else void this.atRevision.write(entry.key, null, entry.revision).catch(() => undefined);
      return;
    }
    const own = this.own.get(entry.key);
    const ours = own ? !own.lost : known?.member.node === this.nodeId;
    if (ours && this.opened) {
      // Older than this node's own state of the instance: from before this node took it over.
      if (entry.revision <= (own?.revision ?? known?.revision ?? 0)) return;
      // Another node took the instance over: it serves it from now on.
      if (own) own.lost = true;
      this.membersOf(key.group).set(key.id, { member, revision: entry.revision });
      this.emit({ type: 'removed', group: key.group, id: key.id });
      return;
    }
    // Every fetch rewrites the positions; only a new member or subscription changes the group.
    const moved =
      !known ||
      known.member.seq !== member.seq ||
      JSON.stringify(known.member.topics) !== JSON.stringify(member.topics);
    this.membersOf(key.group).set(key.id, { member, revision: entry.revision });
    if (this.opened && moved) this.emit({ type: 'changed', group: key.group });
  }

  private applyMemberDeleted(storeKey: string, key: { group: string; id: string }): void {
    const members = this.membersByGroup.get(key.group);
    const known = members?.get(key.id);
    if (!members || !known) return;
    this.own.delete(storeKey);
    members.delete(key.id);
    if (members.size === 0) this.membersByGroup.delete(key.group);
    if (known.member.node === this.nodeId) {
      // Not deleted by this node (that removes it from the copy first): another node took
      // this one for dead and removed the instance.
      this.written.delete(storeKey);
      this.emit({ type: 'removed', group: key.group, id: key.id });
    } else this.emit({ type: 'changed', group: key.group });
  }

  private applyClaim(
    entry: KvWatchEntry,
    key: { group: string; topic: string; partition: number },
    deleted: boolean,
  ): void {
    if (deleted) return this.applyClaimDeleted(entry.key, key);
    let held = this.claims.get(key.group);
    if (!held) this.claims.set(key.group, (held = new Map()));
    const holder = { topic: key.topic, partition: key.partition, instance: entry.string() };
    held.set(`${key.topic}/${key.partition}`, { holder, revision: entry.revision });
    if (this.opened) this.emit({ type: 'changed', group: key.group });
  }

  private applyClaimDeleted(
    storeKey: string,
    key: { group: string; topic: string; partition: number },
  ): void {
    this.releasing.delete(storeKey);
    const held = this.claims.get(key.group);
    held?.delete(`${key.topic}/${key.partition}`);
    if (held?.size === 0) this.claims.delete(key.group);
    if (this.opened) this.emit({ type: 'changed', group: key.group });
  }

  /**
   * After a resync (the cluster came back, maybe without its last acknowledged writes): what
   * the copy holds and the bucket does not was lost. A lost member or claim of another node is
   * dropped as if deleted; this node's own members are written again, and every value this node
   * wrote is written again at its next change (the memory of what was written is reset).
   */
  private dropLost(keys: ReadonlySet<string>): void {
    this.written.clear();
    for (const [group, members] of [...this.membersByGroup]) {
      for (const [id, { member }] of [...members]) {
        const key = memberKey(group, id);
        if (keys.has(key)) continue;
        if (member.node !== this.nodeId) {
          this.applyMemberDeleted(key, { group, id });
          continue;
        }
        // Written again from nothing: the next write of the chain is a create.
        const own = this.own.get(key);
        if (own) own.revision = 0;
        else this.membersOf(group).set(id, { member, revision: 0 });
        this.ownWrite(group, id, JSON.stringify(member));
      }
    }
    for (const [group, held] of [...this.claims]) {
      for (const { holder } of [...held.values()]) {
        const key = claimKey(group, holder.topic, holder.partition);
        if (!keys.has(key))
          this.applyClaimDeleted(key, { group, topic: holder.topic, partition: holder.partition });
      }
    }
  }

  private membersOf(group: string): Map<string, { member: StoredMember; revision: number }> {
    let members = this.membersByGroup.get(group);
    if (!members) this.membersByGroup.set(group, (members = new Map()));
    return members;
  }

  /**
   * Queues a write (null: delete) of an instance this node serves, after its writes before, at
   * the revision the last one was stored at. A refusal means another node took the instance.
   */
  private ownWrite(group: string, id: string, value: string | null): void {
    const key = memberKey(group, id);
    let own = this.own.get(key);
    if (!own) {
      own = {
        revision: this.membersByGroup.get(group)?.get(id)?.revision ?? 0,
        next: undefined,
        last: undefined,
        chain: Promise.resolve('stored'),
        lost: false,
      };
      this.own.set(key, own);
    }
    if (own.lost || (value !== null && value === own.last && own.next === undefined)) return;
    const queued = own.next !== undefined;
    own.next = value;
    // A step not started yet takes the newest value when it starts.
    if (queued) return;
    const entry = own;
    const step = entry.chain.then((outcome) =>
      outcome === 'lost' ? outcome : this.writeOwn(key, group, id, entry),
    );
    entry.chain = step;
    this.write(step.then(() => undefined));
  }

  private async writeOwn(key: string, group: string, id: string, own: Own): Promise<OwnOutcome> {
    const value = own.next;
    own.next = undefined;
    if (value === undefined || own.lost) return own.lost ? 'lost' : 'stored';
    try {
      // Created from nothing at revision 0 (a create cannot carry a revision to follow).
      const revision =
        own.revision > 0
          ? await this.atRevision.write(key, value, own.revision)
          : await this.created(key, value);
      if (revision !== undefined) {
        if (value === null) {
          if (this.own.get(key) === own) this.own.delete(key);
          return 'stored';
        }
        own.revision = revision;
        own.last = value;
        this.acked = Math.max(this.acked, revision);
        return 'stored';
      }
    } catch (error) {
      // Unknown outcome (JetStream away): flush() and instanceSaved() report it.
      this.failure ??= error;
      this.onError('writing a consumer instance', error);
      return 'failed';
    }
    if (!own.lost) {
      own.lost = true;
      if (value !== null) this.emit({ type: 'removed', group, id });
    }
    return 'lost';
  }

  /** A new key's first value (null: nothing to delete); undefined when the key exists already. */
  private created(key: string, value: string | null): Promise<number | undefined> {
    return value === null ? Promise.resolve(0) : this.atRevision.create(key, value);
  }

  private write(operation: Promise<number | void>): void {
    const tracked = operation.then(
      (revision) => {
        if (typeof revision === 'number') this.acked = Math.max(this.acked, revision);
      },
      (error: unknown) => {
        this.failure ??= error;
        this.onError('writing group state', error);
      },
    );
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }

  /** Resolves once the watch has delivered `revision` (bounded: a stalled watch is an error). */
  private visible(revision: number): Promise<void> {
    if (this.seen >= revision || this.closed) return Promise.resolve();
    const limit = this.options.visibleTimeoutMs ?? 30_000;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        const at = this.waiters.indexOf(waiter);
        if (at >= 0) this.waiters.splice(at, 1);
        reject(
          storeFailure(
            new Error(`the group-state watch did not deliver revision ${revision} in ${limit} ms`),
          ),
        );
      }, limit);
      const waiter = {
        revision,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** Resolves once `condition` holds after a delivery of the watch; 503 at the deadline. */
  private until(condition: () => boolean, deadline: number): Promise<void> {
    if (condition() || this.closed) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (!condition() && !this.closed) return;
        clearTimeout(timer);
        this.conditions.delete(check);
        resolve();
      };
      const timer = setTimeout(
        () => {
          this.conditions.delete(check);
          reject(storeFailure(new Error('the group-state watch did not deliver the instance in time')));
        },
        Math.max(0, deadline - Date.now()),
      );
      this.conditions.add(check);
    });
  }

  private wakeWaiters(): void {
    for (const check of [...this.conditions]) check();
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const w = this.waiters[i]!;
      if (w.revision <= this.seen) {
        this.waiters.splice(i, 1);
        w.resolve();
      }
    }
  }

  private emit(event: GroupStoreEvent): void {
    for (const listener of this.listeners) listener(event);
  }

  /** A claim or release that failed is tried again by the next rebalance, one heartbeat later. */
  private retryLater(group: string): void {
    if (this.closed) return;
    setTimeout(() => {
      if (!this.closed) this.emit({ type: 'changed', group });
    }, this.options.heartbeatMs).unref();
  }

  private beat(): void {
    if (this.closed) return;
    const value = JSON.stringify({ node: this.nodeId, url: this.options.url ?? null, at: Date.now() });
    this.kv.put(nodeKey(this.nodeId), value).catch((error: unknown) => this.onError('heartbeat', error));
  }

  /**
   * Removes the members of nodes whose heartbeat stopped. Before deleting, the heartbeat is read
   * once more from JetStream: a node that was only cut off from this one (its watch lagging)
   * is not expired for what this node failed to see.
   */
  private expireDeadNodes(): void {
    if (this.closed) return;
    const suspects = new Map<string, Array<{ group: string; id: string; revision: number }>>();
    for (const [group, members] of this.membersByGroup) {
      for (const [id, { member, revision }] of members) {
        const node = member.node;
        if (node === undefined || node === this.nodeId || !this.liveness.isDead(node)) continue;
        if (this.expiring.has(memberKey(group, id))) continue;
        let list = suspects.get(node);
        if (!list) suspects.set(node, (list = []));
        list.push({ group, id, revision });
      }
    }
    for (const [node, members] of suspects) void this.expireNode(node, members);
  }

  private async expireNode(
    node: string,
    members: Array<{ group: string; id: string; revision: number }>,
  ): Promise<void> {
    const keys = members.map((m) => memberKey(m.group, m.id));
    for (const key of keys) this.expiring.add(key);
    try {
      const heartbeat = await this.kv.get(nodeKey(node));
      if (heartbeat && heartbeat.operation === 'PUT' && heartbeat.revision !== this.liveness.revision(node)) {
        this.liveness.observe(node, heartbeat.revision);
        return;
      }
      // At the revision seen: if the node wrote the member since, it is alive after all; if
      // another survivor deleted it first, its delete wins and this one fails harmlessly.
      await Promise.allSettled(
        members.map(async (m) => {
          const deleted = await this.atRevision.write(memberKey(m.group, m.id), null, m.revision);
          if (deleted !== undefined) await this.kv.delete(positionsKey(m.group, m.id));
        }),
      );
    } catch (error) {
      this.onError(`expiring the instances of node ${node}`, error);
    } finally {
      for (const key of keys) this.expiring.delete(key);
    }
  }
}
