// The scope names a key may carry, and the checks a new key's scope list must pass. Every name a
// route requires is here (streams routes: streams:read / streams:write; automation routes:
// automation:read for GET and HEAD, automation:write otherwise); the rate limit service's
// decision routes need no key, its console views need ratelimit:read. A key with an unknown or empty scope list is refused at creation: a typo would
// otherwise give a key that opens nothing, and an empty list used to fall back to admin.

import { CodedError } from '../errors.js';

/** Scope name → what it grants (printed by the CLI when a name is wrong). */
export const SCOPES: Readonly<Record<string, string>> = Object.freeze({
  admin: 'every route of every service',
  streams: 'streams:read and streams:write',
  'streams:read': 'streams: every route but creating topics and producing',
  'streams:write': 'streams: create topics, produce',
  automation: 'automation:read and automation:write',
  'automation:read': 'automation: GET and HEAD routes',
  'automation:write': 'automation: every other method',
  ratelimit: 'ratelimit:read',
  'ratelimit:read':
    'rate limit: the console views (loaded rules, rule counters, dry runs); decisions need no key',
});

export class ScopeError extends CodedError {
  constructor(message: string) {
    super('invalid_scopes', message);
  }
}

const known = (): string => Object.keys(SCOPES).join(', ');

/** The list without duplicates; throws ScopeError when it is empty or names an unknown scope. */
export function checkScopes(scopes: readonly string[]): string[] {
  if (scopes.length === 0) throw new ScopeError(`the scope list is empty; give at least one of: ${known()}`);
  for (const scope of scopes) {
    if (!Object.prototype.hasOwnProperty.call(SCOPES, scope))
      throw new ScopeError(`unknown scope ${JSON.stringify(scope)}; known scopes: ${known()}`);
  }
  return [...new Set(scopes)];
}

/** A comma list as typed on the command line (`streams:read, automation`). */
export function parseScopeList(text: string): string[] {
  return checkScopes(
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
}
