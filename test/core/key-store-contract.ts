// What every API key store does, whatever holds the keys (LMDB on this node, a JetStream bucket
// shared by the cluster): a created key authenticates with its tenant, user and scopes; a tampered
// or malformed token does not; listing never shows a hash or secret; a revoke takes effect at once
// on the store that made it and stays listed; unknown or malformed ids are not revoked.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { hasScope, type Authenticator, type KeyAdmin } from '../../src/core/auth/index.js';

export type ContractStore = Authenticator & KeyAdmin;

export function keyStoreContract(name: string, open: () => Promise<ContractStore>): void {
  describe(`key store contract: ${name}`, () => {
    let store: ContractStore;
    before(async () => {
      store = await open();
    });
    after(async () => {
      await store?.close();
    });

    it('a created key authenticates with its tenant, user, name and scopes', async () => {
      const created = await store.create({
        tenant: 'acme',
        user: 'ana',
        name: 'ci',
        scopes: ['streams:read'],
      });
      const principal = store.authenticate(created.token);
      assert.ok(principal);
      assert.deepEqual(
        { keyId: principal.keyId, tenant: principal.tenant, user: principal.user, name: principal.name },
        { keyId: created.record.id, tenant: 'acme', user: 'ana', name: 'ci' },
      );
      assert.ok(hasScope(principal, 'streams:read'));
      assert.ok(!hasScope(principal, 'streams:write'));
      const admin = await store.create({});
      assert.deepEqual(store.authenticate(admin.token)?.scopes, ['admin']);
    });

    it('refuses a tampered, malformed or empty token', async () => {
      const created = await store.create({ name: 'tamper' });
      const tampered = created.token.slice(0, -1) + (created.token.endsWith('A') ? 'B' : 'A');
      assert.equal(store.authenticate(tampered), null);
      assert.equal(store.authenticate('sk_short'), null);
      assert.equal(store.authenticate(''), null);
      assert.equal(store.authenticate(`sk_${'x'.repeat(12)}_${'y'.repeat(43)}`), null);
    });

    it('lists keys without their hash or secret', async () => {
      const created = await store.create({ name: 'listed' });
      const listed = await store.list();
      const mine = listed.find((k) => k.id === created.record.id);
      assert.deepEqual(mine, created.record);
      assert.ok(listed.every((k) => !('hash' in k)));
      const secret = created.token.slice(`sk_${created.record.id}_`.length);
      assert.ok(!JSON.stringify(listed).includes(secret));
    });

    it('revokes: the token stops working, the key stays listed with revokedAt', async () => {
      const created = await store.create({ name: 'to revoke' });
      assert.ok(store.authenticate(created.token));
      assert.equal(await store.revoke(created.record.id), true);
      assert.equal(store.authenticate(created.token), null);
      assert.equal(await store.revoke(created.record.id), true, 'revoking again is not an error');
      const listed = (await store.list()).find((k) => k.id === created.record.id);
      assert.ok(listed?.revokedAt);
      assert.equal(await store.revoke('nope'), false);
      assert.equal(await store.revoke('bad id *.>'), false);
      assert.equal(await store.revoke(''), false);
    });

    it('refuses an empty or unknown scope list instead of creating an admin key', async () => {
      const before = (await store.list()).length;
      await assert.rejects(store.create({ scopes: [] }), { name: 'ScopeError' });
      await assert.rejects(store.create({ scopes: ['nope'] }), { name: 'ScopeError' });
      assert.equal((await store.list()).length, before);
    });
  });
}
