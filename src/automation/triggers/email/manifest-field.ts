// The `triggers.email` field of a manifest, `{enabled, aliases}`, read and checked here so the
// manifest parser (registry/manifest.ts) and the SMTP listener agree on what an alias is.

import type { ManifestIssue, Triggers } from '../../registry/manifest.js';

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * An alias is the local part of `<alias>@<AUTOMATION_EMAIL_DOMAIN>` (docs/automation.md
 * "Triggers"): letters, digits, `.`, `_`, `+`, `-`, starting with a letter or digit; compared
 * without case.
 */
export const EMAIL_ALIAS = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/;

export function emailTrigger(v: unknown, issues: ManifestIssue[]): Triggers['email'] {
  const email: Triggers['email'] = { enabled: false, aliases: [] };
  if (v === null) return email;
  if (!isObject(v)) {
    issues.push({ field: 'triggers.email', message: 'must be an object {enabled, aliases}' });
    return email;
  }
  email.enabled = v['enabled'] === true;
  const aliases = v['aliases'];
  if (aliases === undefined || aliases === null) return email;
  if (!Array.isArray(aliases) || !aliases.every((a) => typeof a === 'string' && EMAIL_ALIAS.test(a)))
    issues.push({
      field: 'triggers.email.aliases',
      message: 'must be a list of aliases (the part before @: letters, digits, . _ + -)',
    });
  else email.aliases = aliases as string[];
  return email;
}
