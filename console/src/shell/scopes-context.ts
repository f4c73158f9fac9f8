// The signed-in key's scopes, for views that offer an action only to keys that may take it
// (the server checks again: hiding a control is a courtesy, not the protection).

import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import { hasScope } from './scopes.js';

/** Undefined: the process needs no key, so every action is open. */
export const ScopesContext = createContext<readonly string[] | undefined>(undefined);

export function useScope(required: string): boolean {
  const scopes = useContext(ScopesContext);
  return scopes === undefined || hasScope(scopes, required);
}
