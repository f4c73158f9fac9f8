// The `auth` group.
import type { CallOptions, Transport } from '../transport.js';
import type { AuthCheckResponse } from '../types.js';

export class AuthGroup {
  constructor(private readonly transport: Transport) {}

  /** GET /auth/check: tenant, user, key and scope of the key in use. */
  async check(call?: CallOptions): Promise<AuthCheckResponse> {
    return this.transport.json({ method: 'GET', path: '/auth/check', call });
  }
}
