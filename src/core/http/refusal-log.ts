// One log line per refused request key (401/403 before any handler), so an operator can see a
// client with a wrong, revoked or under-scoped key. The line names the service, the route
// template (never the path with its ids) and the reason; never the key: at most a short digest of
// the key id the token names. A flood of bad keys cannot flood the log: at most `perSecond` lines
// each second, then one line saying how many were left out.

import { keyIdDigest } from '../auth/key-tokens.js';
import type { Logger } from '../log.js';

/** missing / malformed credentials, a key the store does not accept, or one without the scope. */
export type RefusalReason = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'wrong_secret' | 'scope';

export interface Refusal {
  readonly method: string;
  readonly route: string;
  readonly reason: RefusalReason;
  /** The token as sent, to derive the key-id digest; never logged itself. */
  readonly token: string | undefined;
  /** The scope the route needed, for `scope` refusals. */
  readonly scope?: string;
}

export const REFUSAL_LINES_PER_SECOND = 10;

export class RefusalLog {
  private windowStart = 0;
  private written = 0;
  private suppressed = 0;
  private flushTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: Logger | undefined,
    private readonly service: string,
    private readonly perSecond = REFUSAL_LINES_PER_SECOND,
    private readonly now: () => number = Date.now,
  ) {}

  note(refusal: Refusal): void {
    if (!this.log) return;
    const now = this.now();
    if (now - this.windowStart >= 1000) this.startWindow(now);
    if (this.written >= this.perSecond) {
      this.suppressed++;
      // Said once the window ends, even when no further refusal comes to say it.
      this.flushTimer ??= setTimeout(() => this.startWindow(this.now()), 1000 - (now - this.windowStart));
      this.flushTimer.unref();
      return;
    }
    this.written++;
    const keyId = refusal.token === undefined ? undefined : keyIdDigest(refusal.token);
    this.log.info(
      {
        service: this.service,
        method: refusal.method,
        route: refusal.route,
        reason: refusal.reason,
        ...(refusal.scope ? { scope: refusal.scope } : {}),
        ...(keyId ? { keyIdSha256: keyId } : {}),
      },
      'request refused: API key',
    );
  }

  private startWindow(now: number): void {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    if (this.suppressed > 0)
      this.log?.info(
        { service: this.service, suppressed: this.suppressed, perSecond: this.perSecond },
        `request refusals not logged: ${this.suppressed} more in one second than the ${this.perSecond} logged`,
      );
    this.windowStart = now;
    this.written = 0;
    this.suppressed = 0;
  }
}
