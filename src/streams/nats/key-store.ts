// API keys in a JetStream key-value bucket, shared by every Sluice node of one NATS cluster (used
// when STREAMS_BACKEND=jetstream). The records are the LMDB key store's (src/core/auth/key-store.ts):
// one JSON KeyRecord per key id, holding only the SHA-256 of the key's secret. The HTTP core
// authenticates synchronously, before it reads a body, so a serving node keeps the whole bucket in
// memory, fed by a KV watch (BucketFollower): a key created or revoked on any node reaches the
// others as soon as the watch delivers it. The CLI opens the bucket without following it.

import { jetstream } from '@nats-io/jetstream';
import { Kvm, type KV, type KvWatchEntry } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import {
  mintKey,
  refusalOf,
  verifyToken,
  type CreatedKey,
  type KeyAdmin,
  type KeyRecord,
  type NewKeyInput,
  type VisibleKey,
} from '../../core/auth/key-tokens.js';
import type { Authenticator, KeyRefusal, Principal } from '../../core/auth/types.js';
import type { Logger } from '../../core/log.js';
import type { NatsSettings } from '../settings.js';
import { BucketFollower, onReconnect } from './bucket-follower.js';
import { connectNats } from './connection.js';

/** Key ids are `mintKey`'s: 12 letters and digits (also a valid KV key). */
const KEY_ID = /^[A-Za-z0-9]{12}$/;

export interface JetStreamKeyStoreOptions {
  readonly nc: NatsConnection;
  /** `<STREAMS_NATS_PREFIX>_keys`. */
  readonly bucket: string;
  /** STREAMS_REPLICAS. */
  readonly replicas: number;
  /** Timeout of JetStream API calls (STREAMS_NATS_TIMEOUT). */
  readonly timeoutMs: number;
  /** A serving node follows the bucket; the CLI only reads and writes it. */
  readonly follow: boolean;
  /** How long `open` waits for a cluster that is not ready yet (ms). */
  readonly startTimeoutMs: number;
  /** Close (drain) the connection when the store closes. */
  readonly ownsConnection: boolean;
  readonly onError: (what: string, error: unknown) => void;
}

/** A stored record, or undefined for a value this code did not write (it is then ignored). */
function parseRecord(id: string, bytes: Uint8Array): KeyRecord | undefined {
  try {
    const value = JSON.parse(new TextDecoder().decode(bytes)) as Partial<KeyRecord>;
    if (value.id !== id || typeof value.hash !== 'string' || !/^[0-9a-f]{64}$/.test(value.hash)) return;
    if (typeof value.tenant !== 'string' || typeof value.user !== 'string') return;
    if (!Array.isArray(value.scopes) || !value.scopes.every((s) => typeof s === 'string')) return;
    return value as KeyRecord;
  } catch {
    return undefined;
  }
}

const visible = ({ hash: _hash, ...rest }: KeyRecord): VisibleKey => rest;

/** Reads of a known key that a lagging replica does not have yet (readKnown): 40 × 25 ms. */
const STALE_READ_TRIES = 40;
const STALE_READ_PAUSE_MS = 25;

export class JetStreamKeyStore implements Authenticator, KeyAdmin {
  private readonly keys = new Map<string, KeyRecord>();
  private follower: BucketFollower | undefined;

  private constructor(
    private readonly kv: KV,
    private readonly options: JetStreamKeyStoreOptions,
  ) {}

  static async open(options: JetStreamKeyStoreOptions): Promise<JetStreamKeyStore> {
    const deadline = Date.now() + options.startTimeoutMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const kv = await new Kvm(jetstream(options.nc, { timeout: options.timeoutMs })).create(
          options.bucket,
          { replicas: options.replicas, history: 1, timeout: options.timeoutMs },
        );
        const store = new JetStreamKeyStore(kv, options);
        if (options.follow) await store.start();
        return store;
      } catch (error) {
        if (Date.now() >= deadline || options.nc.isClosed()) {
          if (options.ownsConnection) await options.nc.close().catch(() => undefined);
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(2_000, 100 * 2 ** attempt)));
      }
    }
  }

  /** Loads the bucket into memory and keeps following it; resolves once the copy is complete. */
  private async start(): Promise<void> {
    const follower = new BucketFollower(this.kv, {
      apply: (entry) => this.apply(entry),
      replayed: (present) => {
        for (const id of [...this.keys.keys()]) if (!present.has(id)) this.keys.delete(id);
      },
      onError: this.options.onError,
      probeMs: 1_000,
      stallMs: 5_000,
    });
    this.follower = follower;
    try {
      const last = await follower.start();
      onReconnect(this.options.nc, () => follower.resync());
      const deadline = Date.now() + this.options.startTimeoutMs;
      while (follower.seen < last) {
        if (Date.now() > deadline) throw new Error(`the API key bucket ${this.options.bucket} did not load`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    } catch (error) {
      await follower.stop();
      this.follower = undefined;
      throw error;
    }
  }

  private apply(entry: KvWatchEntry): void {
    if (entry.operation !== 'PUT') {
      this.keys.delete(entry.key);
      return;
    }
    const record = parseRecord(entry.key, entry.value);
    if (record) this.keys.set(record.id, record);
    else
      this.options.onError('reading an API key', new Error(`bucket entry ${entry.key} is not a key record`));
  }

  authenticate(token: string): Principal | null {
    return verifyToken(token, (id) => this.keys.get(id));
  }

  refusal(token: string): KeyRefusal {
    return refusalOf(token, (id) => this.keys.get(id));
  }

  /** No `scopes` means an admin key, as in the LMDB key store. */
  async create(input: NewKeyInput): Promise<CreatedKey> {
    const { record, created } = mintKey(input);
    await this.kv.create(record.id, JSON.stringify(record));
    this.keys.set(record.id, record);
    return created;
  }

  /** Every key in the bucket, revoked ones with revokedAt, oldest first. */
  async list(): Promise<VisibleKey[]> {
    const out: KeyRecord[] = [];
    for await (const id of await this.kv.keys()) {
      const record = await this.read(id);
      if (record) out.push(record.record);
    }
    out.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
    return out.map(visible);
  }

  /** False when no such key exists; revoked keys stay listed with revokedAt. */
  async revoke(id: string): Promise<boolean> {
    if (!KEY_ID.test(id)) return false;
    for (;;) {
      const found = await this.readKnown(id);
      if (!found) return false;
      if (found.record.revokedAt) return true;
      const next = { ...found.record, revokedAt: new Date().toISOString() };
      try {
        await this.kv.update(id, JSON.stringify(next), found.revision);
      } catch (error) {
        // Someone else changed the key meanwhile: read it again.
        if ((await this.read(id))?.revision !== found.revision) continue;
        throw error;
      }
      this.keys.set(id, next);
      return true;
    }
  }

  async close(): Promise<void> {
    await this.follower?.stop();
    if (this.options.ownsConnection) await this.options.nc.drain().catch(() => undefined);
  }

  /**
   * The key as the bucket holds it. A key this node knows of (it made it, or the watch brought
   * it) may still be missing from the replica that answers: KV gets are JetStream direct gets,
   * which any replica serves, so a read right after a write can be stale ("Direct Get" in the
   * JetStream docs). Such a key is read again until it shows, for a bounded number of tries.
   */
  private async readKnown(id: string): Promise<{ record: KeyRecord; revision: number } | undefined> {
    for (let attempt = 0; ; attempt++) {
      const found = await this.read(id);
      if (found || !this.keys.has(id) || attempt >= STALE_READ_TRIES) return found;
      await new Promise((resolve) => setTimeout(resolve, STALE_READ_PAUSE_MS));
    }
  }

  private async read(id: string): Promise<{ record: KeyRecord; revision: number } | undefined> {
    const entry = await this.kv.get(id);
    if (!entry || entry.operation !== 'PUT') return undefined;
    const record = parseRecord(id, entry.value);
    return record && { record, revision: entry.revision };
  }
}

/** The bucket's name for a deployment: `<STREAMS_NATS_PREFIX>_keys`. */
export const keysBucket = (settings: NatsSettings): string => `${settings.prefix}_keys`;

/**
 * The cluster's key bucket on its own connection (closed with the store): `follow` for a serving
 * node (the keys in memory, kept current), not for `sluice keys`.
 */
export async function openJetStreamKeyStore(
  settings: NatsSettings,
  options: {
    name: string;
    follow: boolean;
    onError: (what: string, error: unknown) => void;
    /** Where losses and returns of the NATS connection are logged (none when absent). */
    log?: Logger;
  },
): Promise<JetStreamKeyStore> {
  const nc = await connectNats(settings, options.name, options.log);
  return JetStreamKeyStore.open({
    nc,
    bucket: keysBucket(settings),
    replicas: settings.replicas,
    timeoutMs: settings.timeoutMs,
    follow: options.follow,
    startTimeoutMs: 60_000,
    ownsConnection: true,
    onError: options.onError,
  });
}
