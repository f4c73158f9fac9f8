import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { hasScope, openKeyStore, ScopeError } from '../../src/core/auth/index.js';

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
      // The secret is everything after `sk_<id>_` (base64url, so it may hold `_` itself).
      const secret = created.token.slice(`sk_${created.record.id}_`.length);
      assert.equal(secret.length, 43);
      assert.ok(!JSON.stringify(listed).includes(secret));

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

  it('refuses an empty or unknown scope list instead of creating an admin key', async () => {
    const store = openKeyStore(mkdtempSync(join(dir, 'scopes-')));
    try {
      await assert.rejects(store.create({ name: 'none', scopes: [] }), ScopeError);
      await assert.rejects(
        store.create({ name: 'typo', scopes: ['streams:raed'] }),
        /unknown scope "streams:raed"/,
      );
      assert.equal(store.list().length, 0);
      const both = await store.create({ scopes: ['streams:read', 'automation', 'streams:read'] });
      assert.deepEqual(both.record.scopes, ['streams:read', 'automation']);
      assert.deepEqual((await store.create({})).record.scopes, ['admin']);
    } finally {
      await store.close();
    }
  });

  it('sluice keys create refuses --scopes that is empty, only commas or unknown, and creates nothing', () => {
    const cliDir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
    const run = (...args: string[]) =>
      // --init: the temp folder holds no server data yet, and the CLI creates none unasked.
      spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keys', ...args, '--init'], {
        env: { ...process.env, SLUICE_DATA_DIR: cliDir },
        encoding: 'utf8',
      });
    try {
      for (const [scopes, message] of [
        ['', /--scopes: the scope list is empty; give at least one of: admin, streams/],
        [',', /the scope list is empty/],
        [' , ,', /the scope list is empty/],
        ['bogus', /unknown scope "bogus"; known scopes: admin, streams, streams:read/],
        ['streams:read,root', /unknown scope "root"/],
      ] as const) {
        const refused = run('create', '--name', 'x', `--scopes=${scopes}`);
        assert.equal(refused.status, 2, `exit status for --scopes=${JSON.stringify(scopes)}`);
        assert.match(refused.stderr, message);
        assert.match(refused.stderr, /no key created/);
        assert.equal(refused.stdout, '');
      }
      const missingValue = run('create', '--scopes');
      assert.equal(missingValue.status, 2);
      assert.match(missingValue.stderr, /--scopes/);
      assert.equal(run('list').stdout, '', 'no key was created by any refused call');

      const listed = run('create', '--scopes', 'streams:read, automation');
      assert.equal(listed.status, 0, listed.stderr);
      assert.deepEqual(JSON.parse(listed.stdout.split('\n')[0]!).scopes, ['streams:read', 'automation']);
      const admin = run('create');
      assert.equal(admin.status, 0, admin.stderr);
      assert.deepEqual(JSON.parse(admin.stdout.split('\n')[0]!).scopes, ['admin']);
    } finally {
      rmSync(cliDir, { recursive: true, force: true });
    }
  });

  it('sluice keys create | list | revoke through the CLI', () => {
    const cliDir = mkdtempSync(join(tmpdir(), 'sluice-cli-'));
    const run = (...args: string[]) =>
      // --init: the temp folder holds no server data yet, and the CLI creates none unasked.
      spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keys', ...args, '--init'], {
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
