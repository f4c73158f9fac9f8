// The topics of the JetStream backend: one key-value bucket shared by every node, holding each
// topic's name, id, partition count and creation time, plus the counter topic ids are taken from.
// Every node keeps a local copy, loaded at start and kept current by a watch on the bucket, so
// topic lookups stay synchronous (the TopicLog port answers them from memory).

import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { TopicInfo } from './types.js';

const TOPIC_KEYS = 't.>';
const NEXT_ID = 'next-id';

/** KV keys allow letters, digits and `-/_=.`; topic names may hold `..` and leading dots. */
export function topicKey(name: string): string {
  return `t.${Buffer.from(name, 'utf8').toString('base64url')}`;
}

export class TopicRegistry {
  private readonly byName = new Map<string, TopicInfo>();
  private readonly byId = new Map<number, TopicInfo>();
  private stopWatch: (() => void) | undefined;

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
    // Keys first (complete before the service answers), then a watch that also replays them, so
    // a topic created between the two is not missed.
    for await (const key of await kv.keys(TOPIC_KEYS)) {
      const entry = await kv.get(key);
      if (entry?.operation === 'PUT') registry.remember(entry.json<TopicInfo>());
    }
    const watch = await kv.watch({ key: TOPIC_KEYS });
    registry.stopWatch = () => watch.stop();
    void (async () => {
      for await (const entry of watch) {
        if (entry.operation !== 'PUT') continue;
        const info = entry.json<TopicInfo>();
        registry.remember(info);
      }
    })().catch(() => undefined);
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
          if (isConflict(error)) continue;
          throw error;
        }
      }
      const id = Number(entry.string());
      try {
        await this.kv.update(NEXT_ID, String(id + 1), entry.revision);
        return id;
      } catch (error) {
        if (!isConflict(error)) throw error;
      }
    }
  }

  /** Stores the topic unless its name is taken (by any node); false when it was. */
  async createIfAbsent(info: TopicInfo): Promise<boolean> {
    try {
      await this.kv.create(topicKey(info.name), JSON.stringify(info));
    } catch (error) {
      if (isConflict(error)) return false;
      throw error;
    }
    this.remember(info);
    return true;
  }

  close(): void {
    this.stopWatch?.();
  }

  private remember(value: TopicInfo): TopicInfo {
    const existing = this.byName.get(value.name);
    if (existing) return existing;
    const info: TopicInfo = Object.freeze({
      name: value.name,
      id: value.id,
      partitions: value.partitions,
      createdAt: value.createdAt,
    });
    this.byName.set(info.name, info);
    this.byId.set(info.id, info);
    return info;
  }
}

/** KV create/update lost a race: the key exists, or changed since it was read. */
function isConflict(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  // 10071: wrong last sequence (the JetStream API's answer to a failed expectation).
  return code === 10071 || /wrong last sequence|key exists/i.test((error as Error).message ?? '');
}
