// API keys on PostgreSQL: two key stores on one database stand for two nodes. A key created on
// one is accepted by the other once the change notification has been heard, and refused once
// revoked; the CLI (`sluice keys` with AUTOMATION_DATABASE_URL) writes the same table.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postgresSkip, startPostgres, type PostgresServer } from '../../helpers/postgres.js';
import { waitUntil } from '../../helpers/wait.js';
import { PgDatabase } from '../../../src/automation/pg/pool.js';
import { migrate } from '../../../src/automation/pg/migrations.js';
import { PgKeyStore } from '../../../src/automation/pg/key-store.js';

describe('API keys on PostgreSQL', { skip: postgresSkip }, () => {
  let server: PostgresServer;
  let url: string;
  const dbs: PgDatabase[] = [];
  const stores: PgKeyStore[] = [];
  const node = async () => {
    const db = new PgDatabase({ url });
    dbs.push(db);
    const store = new PgKeyStore(db);
    stores.push(store);
    await store.start();
    return store;
  };

  before(async () => {
    server = await startPostgres();
    url = await server.createDatabase();
    const db = new PgDatabase({ url });
    await migrate(db);
    await db.close();
  });

  after(async () => {
    for (const s of stores) await s.close();
    for (const d of dbs) await d.close();
    await server?.stop();
  });

  test('created on one node, accepted by the other; revoked, refused by both', async () => {
    const a = await node();
    const b = await node();
    const created = await a.create({ tenant: 't1', user: 'u', name: 'k', scopes: ['automation'] });
    assert.equal(a.authenticate(created.token)?.tenant, 't1');
    const principal = await waitUntil(
      'node B to accept the key',
      () => b.authenticate(created.token) ?? false,
    );
    assert.deepEqual(principal, {
      keyId: created.record.id,
      tenant: 't1',
      user: 'u',
      name: 'k',
      scopes: ['automation'],
    });
    assert.equal(
      b.authenticate(created.token.slice(0, -1) + (created.token.endsWith('A') ? 'B' : 'A')),
      null,
    );
    assert.equal(await b.revoke(created.record.id), true);
    assert.equal(b.authenticate(created.token), null);
    await waitUntil('node A to refuse the revoked key', () => a.authenticate(created.token) === null);
    const listed = await a.list();
    assert.ok(listed.some((k) => k.id === created.record.id && k.revokedAt));
    assert.ok(listed.every((k) => !('hash' in k)));
    assert.equal(await a.revoke('nosuchkey123'), false);
  });

  test('a node started later loads the keys already there; sluice keys writes the same table', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-keys-'));
    try {
      const cli = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          'src/cli.ts',
          'keys',
          'create',
          '--tenant',
          'cli-tenant',
          '--scopes',
          'automation',
        ],
        {
          env: {
            ...process.env,
            SLUICE_DATA_DIR: dataDir,
            AUTOMATION_DATABASE_URL: url,
            LOG_LEVEL: 'silent',
          },
          encoding: 'utf8',
        },
      );
      assert.equal(cli.status, 0, cli.stderr);
      const token = /token \(shown once\): (\S+)/.exec(cli.stdout)?.[1];
      assert.ok(token, cli.stdout);
      const late = await node();
      assert.equal(late.authenticate(token)?.tenant, 'cli-tenant');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
  test('a lost LISTEN connection is reported, and its return with the time away; refusals say why', async () => {
    const db = new PgDatabase({ url });
    dbs.push(db);
    const events: (string | number)[] = [];
    const watched = new PgKeyStore(db, {
      onDisconnected: () => events.push('lost'),
      onReconnected: (awayMs) => events.push(awayMs),
    });
    stores.push(watched);
    await watched.start();
    const other = await node();
    // A real fault: the server ends the listening connections of every key store.
    const admin = new PgDatabase({ url });
    dbs.push(admin);
    await admin.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'sluice-api-keys'`,
    );
    await waitUntil('the return to be reported', () => events.length >= 2);
    assert.equal(events[0], 'lost');
    assert.equal(typeof events[1], 'number');
    assert.ok((events[1] as number) >= 0);
    assert.equal(events.length, 2, 'one loss, one return');
    // Listening again: a key made on another node is heard, and a revoked one is refused as such.
    const created = await other.create({ name: 'after' });
    await waitUntil('the key to be heard', () => watched.authenticate(created.token) ?? false);
    await other.revoke(created.record.id);
    await waitUntil('the revocation to be heard', () => watched.authenticate(created.token) === null);
    assert.equal(watched.refusal(created.token), 'revoked');
    assert.equal(watched.refusal(created.token.slice(0, -4) + 'AAAA'), 'revoked');
    assert.equal(watched.refusal('sk_nope'), 'unknown');
  });
});
