// Signed link tokens, HMAC-SHA256 with one secret and a distinct label per kind of link:
// - a run's artifact ZIP: over (run id, bundle, expiry); opens only that ZIP of that run;
// - an upload session's PUT URL: over (tenant, upload id, expiry); takes only that session's bytes.
// Each is valid until its expiry, with no bearer key.

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

  private uploadMac(tenant: string, uploadId: string, expires: number): Buffer {
    return createHmac('sha256', this.secret).update(`upload\0${tenant}\0${uploadId}\0${expires}`).digest();
  }

  /** The token of an upload session's PUT URL; valid until `expiresAt` (epoch ms, kept to the second). */
  signUpload(tenant: string, uploadId: string, expiresAt: number): string {
    const expires = Math.floor(expiresAt / 1000);
    return `${expires.toString(36)}.${this.uploadMac(tenant, uploadId, expires).toString('base64url')}`;
  }

  verifyUpload(
    token: string,
    tenant: string,
    uploadId: string,
    now = Date.now(),
  ): 'ok' | 'expired' | 'invalid' {
    const [exp, sig, extra] = token.split('.');
    if (!exp || !sig || extra !== undefined || !/^[0-9a-z]{1,12}$/.test(exp)) return 'invalid';
    const expires = parseInt(exp, 36);
    const given = Buffer.from(sig, 'base64url');
    const expected = this.uploadMac(tenant, uploadId, expires);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return expires * 1000 > now ? 'ok' : 'expired';
  }
}
