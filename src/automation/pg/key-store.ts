// API keys in PostgreSQL, shared by every node. The HTTP core authenticates synchronously, before
// it reads a body (src/core/auth/types.ts), so each node keeps the whole key table in memory: it
// is loaded at start and loaded again whenever a node announces a change on the channel
// sluice_api_keys (LISTEN/NOTIFY), and when the listening connection comes back after a break
// (notifications sent meanwhile are lost). A key created or revoked on one node is in effect on
// the others once they have reloaded: docs/deployment.md says how long that is. Only the SHA-256
// of a key's secret is stored, as in the LMDB key store (src/core/auth/key-store.ts).

import {
  mintKey,
  refusalOf,
  verifyToken,
  type CreatedKey,
  type KeyAdmin,
  type KeyRecord,
  type NewKeyInput,
} from '../../core/auth/key-tokens.js';
import type { Authenticator, KeyRefusal, Principal } from '../../core/auth/types.js';
import type { DatabaseSettings } from '../settings.js';
import { migrate } from './migrations.js';
import { PgListener } from './listener.js';
import { openPgDatabase, type PgDatabase } from './pool.js';

const CHANNEL = 'sluice_api_keys';
export class PgKeyStore implements Authenticator, KeyAdmin {
  private keys = new Map<string, KeyRecord>();
  private listener: PgListener | undefined;
  /** When the LISTEN connection was lost; undefined while it is up. */
  private lostAt: number | undefined;
  /** Bumped by every load, so an older load that finishes late does not win. */
  private generation = 0;

  constructor(
    private readonly db: PgDatabase,
    private readonly options: {
      onError?: (err: Error) => void;
      /** The LISTEN connection was lost (reloads stop until it is back). */
      onDisconnected?: () => void;
      /** The LISTEN connection is back after `awayMs`. */
      onReconnected?: (awayMs: number) => void;
    } = {},
  ) {}

  /** Loads the table and listens for changes (a node that serves requests); the CLI skips it. */
  async start(): Promise<void> {
    await this.load();
    await this.listen();
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
    await this.db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO api_keys (id, tenant, user_id, hash, created_at, record) VALUES ($1, $2, $3, $4, $5, $6)`,
        [record.id, record.tenant, record.user, record.hash, record.createdAt, JSON.stringify(record)],
      );
      await tx.query('SELECT pg_notify($1, $2)', [CHANNEL, record.id]);
    });
    this.keys.set(record.id, record);
    return created;
  }

  async list(): Promise<Omit<KeyRecord, 'hash'>[]> {
    const { rows } = await this.db.query<{ record: KeyRecord }>(
      'SELECT record FROM api_keys ORDER BY created_at, id',
    );
    return rows.map(({ record: { hash: _hash, ...visible } }) => visible);
  }

  /** False when no such key exists; revoked keys stay listed with revokedAt. */
  async revoke(id: string): Promise<boolean> {
    const revokedAt = new Date().toISOString();
    const found = await this.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ record: KeyRecord }>(
        'SELECT record FROM api_keys WHERE id = $1 FOR UPDATE',
        [id],
      );
      const record = rows[0]?.record;
      if (!record) return undefined;
      if (record.revokedAt) return record;
      const next = { ...record, revokedAt };
      await tx.query('UPDATE api_keys SET revoked_at = $2, record = $3 WHERE id = $1', [
        id,
        revokedAt,
        JSON.stringify(next),
      ]);
      await tx.query('SELECT pg_notify($1, $2)', [CHANNEL, id]);
      return next;
    });
    if (found) this.keys.set(id, found);
    return found !== undefined;
  }

  async close(): Promise<void> {
    const listener = this.listener;
    this.listener = undefined;
    await listener?.close();
  }

  /** The whole table (a few rows per tenant): replaced at once, never merged. */
  private async load(): Promise<void> {
    const generation = ++this.generation;
    const { rows } = await this.db.query<{ record: KeyRecord }>('SELECT record FROM api_keys');
    if (generation !== this.generation) return;
    this.keys = new Map(rows.map((r) => [r.record.id, r.record]));
  }

  private reload(): void {
    this.load().catch((err: Error) => this.options.onError?.(err));
  }

  private async listen(): Promise<void> {
    this.listener = new PgListener({
      url: this.db.options.url,
      applicationName: 'sluice-api-keys',
      channels: [CHANNEL],
      onNotification: () => this.reload(),
      // Changes made while no connection listened were not heard.
      onListening: () => {
        if (this.lostAt !== undefined) {
          this.options.onReconnected?.(Date.now() - this.lostAt);
          this.lostAt = undefined;
        }
        this.reload();
      },
      onDisconnected: (err) => {
        this.options.onError?.(err);
        if (this.lostAt === undefined) {
          this.lostAt = Date.now();
          this.options.onDisconnected?.();
        }
      },
      reconnectDelayMs: () => 1000,
    });
    await this.listener.start();
  }
}

/**
 * The database's key table for `sluice keys` (AUTOMATION_DATABASE_URL set): the schema is brought
 * up to date first; nothing is loaded or listened to. close() also closes the pool.
 */
export async function openPgKeyAdmin(settings: DatabaseSettings): Promise<PgKeyStore> {
  const db = openPgDatabase(settings, { applicationName: 'sluice-keys' });
  try {
    await migrate(db);
  } catch (err) {
    await db.close();
    throw err;
  }
  const store = new PgKeyStore(db);
  const close = store.close.bind(store);
  store.close = async () => {
    await close();
    await db.close();
  };
  return store;
}

/** Keys from the database first, then `fallback` (this node's own keys and SLUICE_ADMIN_TOKEN). */
export { chainAuthenticators } from '../../core/auth/types.js';
