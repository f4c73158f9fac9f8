// Which automation an address `<alias>@<domain>` reaches: an active automation whose manifest
// enables email and lists the alias, synced by a key (its tenant owns the runs the mail starts).
// Read from the automation store at each lookup, so a sync on any node takes effect at once.

import type { AutomationRecord } from '../../registry/service.js';

export type AliasLookup =
  | { found: AutomationRecord & { syncedBy: { tenant: string; user: string } } }
  | { refused: 'wrong_domain' | 'unknown_alias' | 'not_synced' | 'ambiguous_alias' };

export class AliasDirectory {
  constructor(
    private readonly domain: string,
    private readonly automations: () => Promise<AutomationRecord[]>,
  ) {}

  async lookup(address: string): Promise<AliasLookup> {
    const a = address.trim().toLowerCase();
    const at = a.lastIndexOf('@');
    if (at <= 0 || a.slice(at + 1) !== this.domain) return { refused: 'wrong_domain' };
    const alias = a.slice(0, at);
    const matches = (await this.automations()).filter(
      (r) =>
        r.status === 'active' &&
        r.triggers.email.enabled &&
        r.triggers.email.aliases.some((x) => x.toLowerCase() === alias),
    );
    if (matches.length === 0) return { refused: 'unknown_alias' };
    if (matches.length > 1) return { refused: 'ambiguous_alias' };
    const found = matches[0]!;
    if (!found.syncedBy) return { refused: 'not_synced' };
    return { found: found as AutomationRecord & { syncedBy: { tenant: string; user: string } } };
  }
}
