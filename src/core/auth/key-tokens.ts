// The API key token format, shared by every key store (LMDB in key-store.ts, PostgreSQL in
// src/automation/pg/key-store.ts): `sk_<keyId>_<secret>`. The key id finds the record without
// scanning; only a SHA-256 of the 256-bit secret is stored (a fast hash is enough for a random
// secret; there is nothing to brute-force), and it is compared in constant time.

import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { checkScopes } from './scopes.js';
import type { KeyRefusal, Principal } from './types.js';

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

/** What `sluice keys list` shows of a key: everything but the hash. */
export type VisibleKey = Omit<KeyRecord, 'hash'>;

/**
 * Managing keys (`sluice keys`): every key store has it — LMDB (this node's own keys), PostgreSQL
 * (the automation nodes'), a JetStream bucket (the streams nodes'). No `scopes` on create means an
 * admin key; revoke is false when no such key exists.
 */
export interface KeyAdmin {
  create(input: NewKeyInput): Promise<CreatedKey>;
  list(): Promise<VisibleKey[]> | VisibleKey[];
  revoke(id: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface NewKeyInput {
  tenant?: string;
  user?: string;
  name?: string;
  /** Absent: an admin key; a given list must be non-empty and known (ScopeError). */
  scopes?: string[];
}

const TOKEN = /^sk_([A-Za-z0-9]{12})_([A-Za-z0-9_-]{43})$/;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

function alnumId(length: number): string {
  let out = '';
  for (const b of randomBytes(length)) out += ALPHABET[b % ALPHABET.length];
  return out;
}

/** A new key: the record to store (hash only) and the token to show once. */
export function mintKey(input: NewKeyInput): { record: KeyRecord; created: CreatedKey } {
  const scopes = input.scopes === undefined ? ['admin'] : checkScopes(input.scopes);
  const secret = randomBytes(32).toString('base64url');
  const record: KeyRecord = {
    id: alnumId(12),
    tenant: input.tenant ?? 'default',
    user: input.user ?? 'admin',
    name: input.name ?? 'unnamed',
    scopes,
    hash: sha256(secret).toString('hex'),
    createdAt: new Date().toISOString(),
  };
  const { hash: _hash, ...visible } = record;
  return { record, created: { record: visible, token: `sk_${record.id}_${secret}` } };
}

/**
 * Why `token` was refused once verifyToken gave null, for the refusal log: a token that is not
 * `sk_<id>_<secret>` or names no key is `unknown`; a revoked key `revoked`; a known key with
 * another secret `wrong_secret`.
 */
export function refusalOf(token: string, find: (id: string) => KeyRecord | undefined): KeyRefusal {
  const match = TOKEN.exec(token);
  const record = match ? find(match[1]!) : undefined;
  if (!record) return 'unknown';
  return record.revokedAt ? 'revoked' : 'wrong_secret';
}

/**
 * A short digest of the key id a token names (never the id, never the token), so that log lines
 * of one refused key can be told from another's; undefined when the token names no key id.
 */
export function keyIdDigest(token: string): string | undefined {
  const match = TOKEN.exec(token);
  return match ? sha256(match[1]!).toString('hex').slice(0, 8) : undefined;
}

/** The principal of a token whose key `find` knows and has not revoked; null otherwise. */
export function verifyToken(token: string, find: (id: string) => KeyRecord | undefined): Principal | null {
  const match = TOKEN.exec(token);
  if (!match) return null;
  const record = find(match[1]!);
  if (!record || record.revokedAt) return null;
  if (!timingSafeEqual(sha256(match[2]!), Buffer.from(record.hash, 'hex'))) return null;
  return {
    keyId: record.id,
    tenant: record.tenant,
    user: record.user,
    name: record.name,
    scopes: record.scopes,
  };
}
