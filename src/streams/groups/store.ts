// Persistence for consumer groups: committed offsets per (group, topic, partition) and each
// consumer instance's state (membership, subscription, positions), so both survive a restart.
// Reads are served from memory (loaded at open); writes go to LMDB un-awaited and ride the
// same group commits as produced records, except where a caller awaits `flush()`.

import type { Database, RootDatabase } from 'lmdb';

export type OffsetReset = 'earliest' | 'latest' | 'none';

export interface InstanceConfig {
  readonly offsetReset: OffsetReset;
  readonly autoCommit: boolean;
  /** Default long-poll time for this instance's fetches (ms), when it set one. */
  readonly requestTimeoutMs: number | undefined;
  /** Embedded format of fetched records (Confluent's `format`); absent means json. */
  readonly format?: 'json' | 'binary';
}

export interface InstanceRecord {
  readonly group: string;
  readonly id: string;
  readonly seq: number;
  readonly createdAt: number;
  readonly config: InstanceConfig;
  readonly topics: readonly string[];
  /** `topic/partition` → next offset to deliver. */
  readonly positions: Readonly<Record<string, number>>;
  /** Partitions given by a manual assignment (Kafka's assign()); absent when it has none. */
  readonly manual?: readonly { readonly topic: string; readonly partition: number }[];
}

type OffsetKey = [string, string, number];

export class GroupStore {
  private readonly offsetsDb: Database<number, OffsetKey>;
  private readonly instancesDb: Database<InstanceRecord, [string, string]>;
  private readonly committed = new Map<string, number>();
  private lastWrite: Promise<unknown> = Promise.resolve();

  constructor(root: RootDatabase) {
    this.offsetsDb = root.openDB<number, OffsetKey>({ name: 'group-offsets' });
    this.instancesDb = root.openDB<InstanceRecord, [string, string]>({ name: 'group-instances' });
    for (const { key, value } of this.offsetsDb.getRange()) {
      this.committed.set(offsetKey(key[0], key[1], key[2]), value);
    }
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

  loadInstances(): InstanceRecord[] {
    const out: InstanceRecord[] = [];
    for (const { value } of this.instancesDb.getRange()) out.push(value);
    return out;
  }

  saveInstance(record: InstanceRecord): void {
    this.track(this.instancesDb.put([record.group, record.id], record));
  }

  deleteInstance(group: string, id: string): void {
    this.track(this.instancesDb.remove([group, id]));
  }

  /** Resolves when every write issued so far is durable. */
  async flush(): Promise<void> {
    await this.lastWrite;
    await this.instancesDb.flushed;
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
