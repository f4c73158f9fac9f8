export { KeyStore, staticAuthenticator, type CreatedKey, type KeyRecord } from './key-store.js';
export { checkScopes, parseScopeList, ScopeError, SCOPES } from './scopes.js';
export { AUTH_CHALLENGE, BASIC_CHALLENGE, parseAuthorization, type Credentials } from './credentials.js';
export {
  chainAuthenticators,
  hasScope,
  type Authenticator,
  type KeyRefusal,
  type Principal,
} from './types.js';
export { keyIdDigest } from './key-tokens.js';
export type { KeyAdmin, NewKeyInput, VisibleKey } from './key-tokens.js';
import { KeyStore as Store } from './key-store.js';
/**
 * Opens (creating when needed) the key store under `<dataDir>/auth`; a writer passes
 * `reserveBytes` (SLUICE_DISK_RESERVE) so a key is never written onto a nearly full disk.
 */
export function openKeyStore(dataDir: string, adminToken?: string, reserveBytes = 0): Store {
  return Store.open(dataDir, adminToken, reserveBytes);
}
