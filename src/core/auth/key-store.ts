// Bearer API keys, stored hashed in LMDB. A token is `sk_<keyId>_<secret>`: the key id finds
// the record without scanning, and only a SHA-256 of the 256-bit secret is stored (a fast hash
// is enough for a random secret; there is nothing to brute-force). Comparison is constant-time.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { checkScopes } from './scopes.js';
import type { Authenticator, Principal } from './types.js';

export interface KeyRecord {
  id: string;
  tenant: string;
  user: string;
  name: string;
  scopes: string[];
  /** hex SHA-256 of the secret part */
  hash: string;
  createdAt: string;
  revokedAt?: string;
}

export interface CreatedKey {
  record: Omit<KeyRecord, 'hash'>;
  /** The full token; shown once, never stored. */
  token: string;
}

const TOKEN = /^sk_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$/;

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

function alnumId(length: number): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += alphabet[b % alphabet.length];
  return out;
}

export class KeyStore implements Authenticator {
  private readonly adminTokenHash: Buffer | undefined;

  private constructor(
    private readonly root: RootDatabase,
    private readonly keys: Database<KeyRecord, string>,
    adminToken: string | undefined,
  ) {
    this.adminTokenHash = adminToken ? sha256(adminToken) : undefined;
  }

  static open(dataDir: string, adminToken?: string): KeyStore {
    const path = join(dataDir, 'auth');
    mkdirSync(path, { recursive: true });
    const root = open({ path, compression: false });
    const keys = root.openDB<KeyRecord, string>({ name: 'keys' });
    return new KeyStore(root, keys, adminToken);
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
    const match = TOKEN.exec(token);
    if (!match) return null;
    const record = this.keys.get(match[1]!);
    if (!record || record.revokedAt) return null;
    const expected = Buffer.from(record.hash, 'hex');
    if (!timingSafeEqual(sha256(match[2]!), expected)) return null;
    return {
      keyId: record.id,
      tenant: record.tenant,
      user: record.user,
      name: record.name,
      scopes: record.scopes,
    };
  }

  /** No `scopes` means an admin key; a given list must be non-empty and known (ScopeError). */
  async create(input: {
    tenant?: string;
    user?: string;
    name?: string;
    scopes?: string[];
  }): Promise<CreatedKey> {
    const scopes = input.scopes === undefined ? ['admin'] : checkScopes(input.scopes);
    const id = alnumId(12);
    const secret = randomBytes(32).toString('base64url');
    const record: KeyRecord = {
      id,
      tenant: input.tenant ?? 'default',
      user: input.user ?? 'admin',
      name: input.name ?? 'unnamed',
      scopes,
      hash: sha256(secret).toString('hex'),
      createdAt: new Date().toISOString(),
    };
    await this.keys.put(id, record);
    const { hash: _hash, ...visible } = record;
    return { record: visible, token: `sk_${id}_${secret}` };
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
    if (!record.revokedAt) await this.keys.put(id, { ...record, revokedAt: new Date().toISOString() });
    return true;
  }

  /** On first start (no key at all) creates one admin key and returns it, to be printed once. */
  async ensureInitialKey(): Promise<CreatedKey | undefined> {
    return this.root.transaction(() => {
      for (const _ of this.keys.getKeys({ limit: 1 })) return undefined;
      const id = alnumId(12);
      const secret = randomBytes(32).toString('base64url');
      const record: KeyRecord = {
        id,
        tenant: 'default',
        user: 'admin',
        name: 'initial admin key',
        scopes: ['admin'],
        hash: sha256(secret).toString('hex'),
        createdAt: new Date().toISOString(),
      };
      void this.keys.put(id, record);
      const { hash: _hash, ...visible } = record;
      return { record: visible, token: `sk_${id}_${secret}` };
    });
  }

  async close(): Promise<void> {
    await this.root.close();
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
  };
}
