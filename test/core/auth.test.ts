import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { hasScope, openKeyStore } from '../../src/core/auth/index.js';

describe('API keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-auth-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('creates, verifies, lists without secrets, and revokes keys', async () => {
    const store = openKeyStore(dir);
    try {
      const first = await store.ensureInitialKey();
      assert.ok(first, 'an initial admin key is created when none exists');
      assert.equal(await store.ensureInitialKey(), undefined, 'only once');
      assert.deepEqual(store.authenticate(first.token)?.scopes, ['admin']);

      const created = await store.create({
        tenant: 'acme',
        user: 'ana',
        name: 'ci',
        scopes: ['streams:read'],
      });
      const principal = store.authenticate(created.token);
      assert.deepEqual(
        { tenant: principal?.tenant, user: principal?.user, name: principal?.name },
        { tenant: 'acme', user: 'ana', name: 'ci' },
      );
      assert.ok(principal && hasScope(principal, 'streams:read'));
      assert.ok(principal && !hasScope(principal, 'streams:write'));

      // A token with the right id but a wrong secret, and garbage, are refused.
      const tampered = created.token.slice(0, -1) + (created.token.endsWith('A') ? 'B' : 'A');
      assert.equal(store.authenticate(tampered), null);
      assert.equal(store.authenticate('sk_short'), null);
      assert.equal(store.authenticate(''), null);

      const listed = store.list();
      assert.equal(listed.length, 2);
      assert.ok(listed.every((k) => !('hash' in k)));
      assert.ok(!JSON.stringify(listed).includes(created.token.split('_')[2]!));

      assert.equal(await store.revoke(created.record.id), true);
      assert.equal(store.authenticate(created.token), null);
      assert.equal(await store.revoke('nope'), false);
    } finally {
      await store.close();
    }
  });

  it('accepts SLUICE_ADMIN_TOKEN as an admin key', async () => {
    const store = openKeyStore(dir, 'env-token');
    try {
      assert.deepEqual(store.authenticate('env-token')?.scopes, ['admin']);
      assert.equal(store.authenticate('env-token2'), null);
    } finally {
      await store.close();
    }
  });

  it('scope rules: admin covers all, a service scope covers its read and write', () => {
    const p = (scopes: string[]) => ({ keyId: 'k', tenant: 't', user: 'u', name: 'n', scopes });
    assert.ok(hasScope(p(['admin']), 'automation:write'));
    assert.ok(hasScope(p(['automation']), 'automation:write'));
    assert.ok(!hasScope(p(['automation:read']), 'automation:write'));
    assert.ok(!hasScope(p(['auto']), 'automation:read'));
  });

  it('sluice keys create | list | revoke through the CLI', () => {
    const cliDir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keys', ...args], {
        env: { ...process.env, SLUICE_DATA_DIR: cliDir },
        encoding: 'utf8',
      });
    try {
      const created = run('create', '--tenant', 'acme', '--name', 'deploy', '--scopes', 'streams');
      assert.equal(created.status, 0, created.stderr);
      const id = JSON.parse(created.stdout.split('\n')[0]!).id as string;
      assert.match(created.stdout, /token \(shown once\): sk_/);
      const listed = run('list');
      assert.match(listed.stdout, new RegExp(id));
      assert.equal(run('revoke', id).status, 0);
      assert.match(run('list').stdout, /revokedAt/);
      assert.equal(run('revoke', 'missing').status, 1);
    } finally {
      rmSync(cliDir, { recursive: true, force: true });
    }
  });
});
