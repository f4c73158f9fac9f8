// Signed download tokens for a run's artifact ZIP: HMAC-SHA256 over (run id, bundle, expiry).
// A token opens only that ZIP of that run until it expires; no bearer key is needed with it.

import { createHmac, timingSafeEqual } from 'node:crypto';

export class DownloadTokens {
  constructor(
    private readonly secret: Buffer,
    private readonly ttlMs: number,
  ) {}

  private mac(runId: string, bundle: string, expires: number): Buffer {
    return createHmac('sha256', this.secret).update(`zip\0${runId}\0${bundle}\0${expires}`).digest();
  }

  issue(runId: string, bundle: '' | 'review', now = Date.now()): { token: string; expiresAt: string } {
    const expires = Math.floor((now + this.ttlMs) / 1000);
    const token = `${expires.toString(36)}.${bundle || 'o'}.${this.mac(runId, bundle, expires).toString('base64url')}`;
    return { token, expiresAt: new Date(expires * 1000).toISOString() };
  }

  verify(
    token: string,
    runId: string,
    bundle: '' | 'review',
    now = Date.now(),
  ): 'ok' | 'expired' | 'invalid' {
    const [exp, b, sig] = token.split('.');
    if (!exp || !b || !sig || !/^[0-9a-z]+$/.test(exp)) return 'invalid';
    if ((b === 'o' ? '' : b) !== bundle) return 'invalid';
    const expires = parseInt(exp, 36);
    const given = Buffer.from(sig, 'base64url');
    const expected = this.mac(runId, bundle, expires);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return expires * 1000 >= now ? 'ok' : 'expired';
  }
}
