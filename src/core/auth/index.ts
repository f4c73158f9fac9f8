export { KeyStore, staticAuthenticator, type CreatedKey, type KeyRecord } from './key-store.js';
export { checkScopes, parseScopeList, ScopeError, SCOPES } from './scopes.js';
export { AUTH_CHALLENGE, BASIC_CHALLENGE, parseAuthorization, type Credentials } from './credentials.js';
export { chainAuthenticators, hasScope, type Authenticator, type Principal } from './types.js';
export type { KeyAdmin, NewKeyInput, VisibleKey } from './key-tokens.js';
import { KeyStore as Store } from './key-store.js';
/** Opens (creating when needed) the key store under `<dataDir>/auth`. */
export function openKeyStore(dataDir: string, adminToken?: string): Store {
  return Store.open(dataDir, adminToken);
}
