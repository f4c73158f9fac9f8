// Bearer API keys, stored hashed in LMDB. The token format, how a key is minted and how a token
// is checked are shared with the PostgreSQL key store (key-tokens.ts).

import { timingSafeEqual } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { guardLmdbCommitFailures } from '../disk/lmdb-commit.js';
import { DiskReserve } from '../disk/reserve.js';
import { createLogger } from '../log.js';
import {
  mintKey,
  refusalOf,
  sha256,
  verifyToken,
  type CreatedKey,
  type KeyAdmin,
  type KeyRecord,
  type NewKeyInput,
} from './key-tokens.js';
import type { Authenticator, KeyRefusal, Principal } from './types.js';

export type { CreatedKey, KeyRecord } from './key-tokens.js';

export class KeyStore implements Authenticator, KeyAdmin {
  private readonly adminTokenHash: Buffer | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly root: RootDatabase,
    private readonly keys: Database<KeyRecord, string>,
    adminToken: string | undefined,
    /** Writes keep this free on the disk (SLUICE_DISK_RESERVE); absent where keys are only read. */
    private readonly reserve: DiskReserve | undefined,
  ) {
    this.adminTokenHash = adminToken ? sha256(adminToken) : undefined;
  }

  /** `reserveBytes`: writes leave this much free on the disk (0: no check, for readers). */
  static open(dataDir: string, adminToken?: string, reserveBytes = 0): KeyStore {
    const path = join(dataDir, 'auth');
    mkdirSync(path, { recursive: true });
    // A failed commit (a full disk) must reach the caller as an error, never end the thread.
    guardLmdbCommitFailures((message, cause) => createLogger('auth').warn({ err: cause, path }, message));
    const root = open({ path, compression: false });
    const keys = root.openDB<KeyRecord, string>({ name: 'keys' });
    const reserve =
      reserveBytes > 0
        ? new DiskReserve({ store: 'key store', path, reserveBytes, onChange: () => undefined })
        : undefined;
    return new KeyStore(root, keys, adminToken, reserve);
  }

  authenticate(token: string): Principal | null {
    if (this.adminTokenHash && timingSafeEqual(sha256(token), this.adminTokenHash)) {
      return {
        keyId: 'env:SLUICE_ADMIN_TOKEN',
        tenant: 'default',
        user: 'admin',
        name: 'SLUICE_ADMIN_TOKEN',
        scopes: ['admin'],
      };
    }
    return verifyToken(token, (id) => this.keys.get(id));
  }

  refusal(token: string): KeyRefusal {
    return refusalOf(token, (id) => this.keys.get(id));
  }

  /** No `scopes` means an admin key; a given list must be non-empty and known (ScopeError). */
  async create(input: NewKeyInput): Promise<CreatedKey> {
    const { record, created } = mintKey(input);
    this.reserve?.admit(1024);
    await this.keys.put(record.id, record);
    return created;
  }

  list(): Omit<KeyRecord, 'hash'>[] {
    const out: Omit<KeyRecord, 'hash'>[] = [];
    for (const { value } of this.keys.getRange()) {
      const { hash: _hash, ...visible } = value;
      out.push(visible);
    }
    return out;
  }

  /** Returns false when no such key exists. Revoked keys stay listed, marked with revokedAt. */
  async revoke(id: string): Promise<boolean> {
    const record = this.keys.get(id);
    if (!record) return false;
    this.reserve?.admit(1024);
    if (!record.revokedAt) await this.keys.put(id, { ...record, revokedAt: new Date().toISOString() });
    return true;
  }

  /** On first start (no key at all) creates one admin key and returns it, to be printed once. */
  async ensureInitialKey(): Promise<CreatedKey | undefined> {
    return this.root.transaction(() => {
      for (const _ of this.keys.getKeys({ limit: 1 })) return undefined;
      this.reserve?.admit(1024);
      const { record, created } = mintKey({ name: 'initial admin key' });
      void this.keys.put(record.id, record);
      return created;
    });
  }

  /** Closes once; a second call waits for the first. */
  close(): Promise<void> {
    this.closing ??= this.root.close();
    return this.closing;
  }
}

/** An authenticator that accepts exactly one token as an admin key (tests, scripted set-ups). */
export function staticAuthenticator(token: string): Authenticator {
  const expected = sha256(token);
  return {
    authenticate(candidate: string) {
      if (!timingSafeEqual(sha256(candidate), expected)) return null;
      return { keyId: 'static', tenant: 'default', user: 'admin', name: 'static token', scopes: ['admin'] };
    },
    refusal: () => 'unknown',
  };
}
