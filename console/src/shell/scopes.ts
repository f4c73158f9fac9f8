// Which sections a key may open, from the scopes /console/whoami reports. The rule is the
// server's (src/core/auth/types.ts hasScope): `admin` opens everything, a bare service scope
// covers its `:read` and `:write`. A section's views read, so it needs its service's read scope.

// Types from services.ts only: this module is also tested under Node, without the DOM's types.
import type { ServiceId } from '../services.js';

/** The scope a section's views need (docs/console.md, "Sign-in"). */
export const SECTION_SCOPE: Readonly<Record<ServiceId, string>> = {
  automation: 'automation:read',
  streams: 'streams:read',
  ratelimit: 'ratelimit:read',
};

/** The key every view accepts, as the sign-in hint suggests it. */
export const ALL_VIEWS_SCOPES = 'automation,streams,ratelimit';

export function hasScope(scopes: readonly string[], required: string): boolean {
  return scopes.some((s) => s === 'admin' || s === required || required.startsWith(`${s}:`));
}

/** Undefined scopes: the process needs no key, so every section is open. */
export function sectionAllowed(id: ServiceId, scopes: readonly string[] | undefined): boolean {
  return scopes === undefined || hasScope(scopes, SECTION_SCOPE[id]);
}
