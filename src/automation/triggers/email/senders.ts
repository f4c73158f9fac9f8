// Who may send mail that starts runs: AUTOMATION_EMAIL_SENDERS, exact addresses and `*@domain`
// patterns (settings.ts lower-cases them). The envelope sender (MAIL FROM) is what is checked;
// docs/security.md says what that does and does not prove.

export class SenderPolicy {
  private readonly addresses = new Set<string>();
  private readonly domains = new Set<string>();

  constructor(patterns: readonly string[]) {
    for (const p of patterns) {
      if (p.startsWith('*@')) this.domains.add(p.slice(2));
      else this.addresses.add(p);
    }
  }

  /** Whether `address` (as given in MAIL FROM) may send; the null sender `<>` never may. */
  allows(address: string): boolean {
    const a = address.trim().toLowerCase();
    const at = a.lastIndexOf('@');
    if (at <= 0 || at === a.length - 1) return false;
    return this.addresses.has(a) || this.domains.has(a.slice(at + 1));
  }
}
