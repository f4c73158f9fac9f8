// The key store contract (key-store-contract.ts) on this node's LMDB key store.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { openKeyStore } from '../../src/core/auth/index.js';
import { keyStoreContract } from './key-store-contract.js';

const dir = mkdtempSync(join(tmpdir(), 'sluice-auth-contract-'));
after(() => rmSync(dir, { recursive: true, force: true }));
keyStoreContract('LMDB', () => Promise.resolve(openKeyStore(dir)));
