// The topics of the JetStream backend: one key-value bucket shared by every node, holding each
// topic's name, id, partition count, creation time and configs, plus the counter topic ids are
// taken from. A config change rewrites the topic's entry; a removal deletes it.
// Every node keeps a local copy, loaded at start and kept current by a watch on the bucket
// (BucketFollower, which restarts a stalled watch), so topic lookups stay synchronous (the
// TopicLog port answers them from memory).

import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import { isWrongLastSequence } from '../nats/api-codes.js';
import { BucketFollower, onReconnect } from '../nats/bucket-follower.js';
import { KEEP_EVERYTHING, type TopicInfo } from './types.js';

const NEXT_ID = 'next-id';
/** How often the topics watch's progress is checked, and how long it may lag (BucketFollower). */
const PROBE_MS = 1_000;
const STALL_MS = 5_000;

/** KV keys allow letters, digits and `-/_=.`; topic names may hold `..` and leading dots. */
export function topicKey(name: string): string {
  return `t.${Buffer.from(name, 'utf8').toString('base64url')}`;
}

export class TopicRegistry {
  private readonly byName = new Map<string, TopicInfo>();
  private readonly byId = new Map<number, TopicInfo>();
  private follower: BucketFollower | undefined;
  private waiting: Array<{ revision: number; resolve: () => void }> = [];

  private constructor(private readonly kv: KV) {}

  static async open(
    nc: NatsConnection,
    bucket: string,
    replicas: number,
    timeoutMs: number,
  ): Promise<TopicRegistry> {
    const kvm = new Kvm(nc);
    // create() binds to the bucket when it exists with this configuration.
    const kv = await kvm.create(bucket, { replicas, history: 1, timeout: timeoutMs });
    const registry = new TopicRegistry(kv);
    // The follower's watch replays every key before it follows changes; the registry is
    // complete once it delivered the bucket's last revision at the start.
    const follower = new BucketFollower(kv, {
      apply: (entry) => {
        if (!entry.key.startsWith('t.')) return;
        if (entry.operation === 'PUT') registry.remember(entry.json<TopicInfo>());
        else registry.forget(nameOfKey(entry.key));
      },
      delivered: () => registry.wake(),
      replayed: (keys) => void registry.restoreLost(keys),
      onError: () => undefined,
      probeMs: PROBE_MS,
      stallMs: STALL_MS,
    });
    registry.follower = follower;
    const last = await follower.start();
    onReconnect(nc, () => follower.resync());
    await registry.caughtUp(last, timeoutMs);
    return registry;
  }

  get(name: string): TopicInfo | undefined {
    return this.byName.get(name);
  }

  byIdentifier(id: number): TopicInfo | undefined {
    return this.byId.get(id);
  }

  all(): TopicInfo[] {
    return [...this.byName.values()];
  }

  /** A topic id no other node has taken (an optimistic update of the shared counter). */
  async allocateId(): Promise<number> {
    for (;;) {
      const entry = await this.kv.get(NEXT_ID);
      if (!entry || entry.operation !== 'PUT') {
        try {
          await this.kv.create(NEXT_ID, '2');
          return 1;
        } catch (error) {
          if (isWrongLastSequence(error)) continue;
          throw error;
        }
      }
      const id = Number(entry.string());
      try {
        await this.kv.update(NEXT_ID, String(id + 1), entry.revision);
        return id;
      } catch (error) {
        if (!isWrongLastSequence(error)) throw error;
      }
    }
  }

  /** Stores the topic unless its name is taken (by any node); false when it was. */
  async createIfAbsent(info: TopicInfo): Promise<boolean> {
    try {
      await this.kv.create(topicKey(info.name), JSON.stringify(info));
    } catch (error) {
      if (isWrongLastSequence(error)) return false;
      throw error;
    }
    this.remember(info);
    return true;
  }

  /** Rewrites the topic's entry (its configs changed). */
  async update(info: TopicInfo): Promise<void> {
    await this.kv.put(topicKey(info.name), JSON.stringify(info));
    this.remember(info);
  }

  /** Deletes the topic's entry; every node forgets the topic when its watch delivers that. */
  async remove(name: string): Promise<void> {
    await this.kv.delete(topicKey(name));
    this.forget(name);
  }

  close(): void {
    void this.follower?.stop();
    for (const w of this.waiting.splice(0)) w.resolve();
  }

  /**
   * After a resync: topics this node knows that the bucket lost (its last acknowledged writes,
   * see BucketFollower) are written again, and the id counter is moved past every known id, so a
   * new topic never takes the id (and the streams) of one whose record was lost.
   */
  private async restoreLost(keys: ReadonlySet<string>): Promise<void> {
    try {
      let highest = 0;
      for (const info of this.byName.values()) {
        highest = Math.max(highest, info.id);
        if (!keys.has(topicKey(info.name))) await this.kv.put(topicKey(info.name), JSON.stringify(info));
      }
      const next = await this.kv.get(NEXT_ID);
      if (highest > 0 && (!next || next.operation !== 'PUT' || Number(next.string()) <= highest)) {
        await this.kv.put(NEXT_ID, String(highest + 1));
      }
    } catch {
      // The cluster went away again: the next reconnection resyncs once more.
    }
  }

  private wake(): void {
    const seen = this.follower?.seen ?? 0;
    this.waiting = this.waiting.filter((w) => (w.revision <= seen ? (w.resolve(), false) : true));
  }

  /** Resolves once the copy holds `revision`; a watch that does not get there fails the start. */
  private caughtUp(revision: number, timeoutMs: number): Promise<void> {
    if ((this.follower?.seen ?? 0) >= revision) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => {
          void this.follower?.stop();
          reject(new Error(`the topics bucket was not read up to revision ${revision} in ${timeoutMs} ms`));
        },
        Math.max(timeoutMs, STALL_MS * 2),
      );
      this.waiting.push({
        revision,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  private remember(value: TopicInfo): TopicInfo {
    const configs = Object.freeze({ ...(value.configs ?? KEEP_EVERYTHING) });
    const existing = this.byName.get(value.name);
    if (
      existing &&
      existing.id === value.id &&
      existing.configs.retentionMs === configs.retentionMs &&
      existing.configs.retentionBytes === configs.retentionBytes
    )
      return existing;
    // New configs, or a topic removed and created again (a new id).
    if (existing && existing.id !== value.id) this.byId.delete(existing.id);
    const info: TopicInfo = Object.freeze({
      name: value.name,
      id: value.id,
      partitions: value.partitions,
      createdAt: value.createdAt,
      configs,
    });
    this.byName.set(info.name, info);
    this.byId.set(info.id, info);
    return info;
  }

  private forget(name: string): void {
    const existing = this.byName.get(name);
    if (!existing) return;
    this.byName.delete(name);
    this.byId.delete(existing.id);
  }
}

function nameOfKey(key: string): string {
  return Buffer.from(key.slice(2), 'base64url').toString('utf8');
}
