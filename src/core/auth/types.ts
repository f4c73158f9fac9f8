// Who a bearer key belongs to. Keys are stored hashed (see key-store.ts); a principal is what a
// request handler sees after the key was verified.

export interface Principal {
  readonly keyId: string;
  readonly tenant: string;
  readonly user: string;
  readonly name: string;
  /** `admin` grants everything; `<service>` grants `<service>:read` and `<service>:write`. */
  readonly scopes: readonly string[];
}

/** Why a token was refused (see refusalOf in key-tokens.ts); logged, never sent to the client. */
export type KeyRefusal = 'unknown' | 'revoked' | 'wrong_secret';

/** Verifies a bearer token; returns null for an unknown, revoked or malformed token. */
export interface Authenticator {
  authenticate(token: string): Principal | null;
  /** Why `authenticate` refused `token`, for the log (a second look, on the refusal path only). */
  refusal(token: string): KeyRefusal;
}

/** Keys from `first` (a shared store), then `fallback` (this node's own keys and SLUICE_ADMIN_TOKEN). */
export function chainAuthenticators(first: Authenticator, fallback: Authenticator): Authenticator {
  return {
    authenticate: (token) => first.authenticate(token) ?? fallback.authenticate(token),
    refusal: (token) => {
      const reason = first.refusal(token);
      return reason === 'unknown' ? fallback.refusal(token) : reason;
    },
  };
}

export function hasScope(principal: Principal, required: string): boolean {
  for (const scope of principal.scopes) {
    if (scope === 'admin' || scope === required) return true;
    // `streams` covers `streams:read` and `streams:write`.
    if (required.startsWith(scope + ':')) return true;
  }
  return false;
}
