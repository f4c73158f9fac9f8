// API keys on the JetStream backend: the key store contract on the `<prefix>_keys` bucket of a
// 3-node NATS cluster (R3), and two Sluice streams nodes (services started in-process, each with
// its own data directory, node id and LMDB key store) sharing the keys: a key made with
// `sluice keys create` pointed at the cluster is accepted by both nodes, a node restarted
// afterwards still knows it, and a revoke makes both answer 401 (waited for by polling; the
// deadline is a hang guard only).
import { strict as assert } from 'node:assert';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import type { RunningService } from '../../src/core/service.js';
import { startStreams } from '../../src/streams/index.js';
import { openJetStreamKeyStore } from '../../src/streams/nats/key-store.js';
import { keyStoreContract } from '../core/key-store-contract.js';
import { makeTestContext, type TestContext } from '../helpers/context.js';
import { natsAvailable, startNatsCluster, type NatsCluster } from '../helpers/nats.js';
import { waitUntil } from '../helpers/wait.js';
import { natsSettings } from './nats-settings.js';

const run = promisify(execFile);
const skip = natsAvailable ? false : 'nats-server is not installed';

let cluster: NatsCluster | undefined;
before(async () => {
  if (natsAvailable) cluster = await startNatsCluster(3);
});
after(async () => {
  await cluster?.stop();
});

keyStoreContract('JetStream bucket (3 nodes, R3)', async () => {
  if (!cluster) throw new Error('nats-server is not installed');
  return openJetStreamKeyStore(natsSettings(cluster.urls, { prefix: 'contract' }), {
    name: 'contract',
    follow: true,
    onError: () => undefined,
  });
});

describe('API keys shared by the streams nodes of a JetStream cluster', { skip }, () => {
  const PREFIX = 'shared';
  let cliDir: string;
  const env = (): Record<string, string> => ({
    STREAMS_BACKEND: 'jetstream',
    STREAMS_NATS_SERVERS: cluster!.urls.join(','),
    STREAMS_NATS_PREFIX: PREFIX,
    STREAMS_REPLICAS: '3',
  });

  interface Node {
    test: TestContext;
    service: RunningService;
  }
  const nodes: Node[] = [];
  async function startNode(id: string, reuse?: TestContext): Promise<Node> {
    const ctx = reuse ?? (await makeTestContext({ env: { ...env(), STREAMS_NODE_ID: id } }));
    const service = await startStreams(ctx.ctx);
    return { test: ctx, service };
  }
  const status = async (node: Node, token: string): Promise<number> => {
    const response = await fetch(`${node.service.addresses.http}/streams/topics`, {
      headers: { authorization: `Bearer ${token}` },
    });
    await response.arrayBuffer();
    return response.status;
  };
  const cli = async (...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> => {
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('STREAMS_') && !k.startsWith('AUTOMATION_')),
    );
    try {
      const { stdout, stderr } = await run(
        process.execPath,
        ['--import', 'tsx', 'src/cli.ts', 'keys', ...args],
        {
          env: { ...inherited, SLUICE_DATA_DIR: cliDir, LOG_LEVEL: 'silent', ...env() },
        },
      );
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };

  before(async () => {
    cliDir = mkdtempSync(join(tmpdir(), 'sluice-keys-cli-'));
    nodes.push(await startNode('node-a'), await startNode('node-b'));
  });
  after(async () => {
    for (const node of nodes) {
      await node.service.close();
      await node.test.cleanup();
    }
    rmSync(cliDir, { recursive: true, force: true });
  });

  test('a key made by the CLI works on both nodes, after a restart, and a revoke reaches both', async () => {
    const [a, b] = nodes as [Node, Node];
    const created = await cli('create', '--tenant', 'acme', '--name', 'shared', '--scopes', 'streams');
    assert.equal(created.code, 0, created.stderr);
    const record = JSON.parse(created.stdout.split('\n')[0]!) as { id: string };
    const token = /token \(shown once\): (\S+)/.exec(created.stdout)![1]!;

    // The CLI wrote to the bucket, not to an LMDB store of its own data directory: there is none
    // (the CLI creates no key store unasked), so a look at it is refused.
    const lmdb = await cli('list', '--store', 'lmdb');
    assert.equal(lmdb.code, 1, lmdb.stderr);
    assert.match(lmdb.stderr, /no Sluice data in/);
    assert.equal(lmdb.stdout, '');

    for (const node of [a, b]) {
      await waitUntil(
        `node ${node.test.ctx.env.string('STREAMS_NODE_ID', '')} to accept the key`,
        async () => ((await status(node, token)) === 200 ? true : false),
      );
    }
    assert.equal(await status(b, token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A')), 401);
    // Each node's own LMDB keys (here SLUICE_ADMIN_TOKEN) still work beside the shared ones.
    assert.equal(await status(b, b.test.token), 200);
    assert.equal(await status(a, b.test.token), 401, "node B's admin token is B's own");

    // Node B restarted (same data directory): it loads the bucket again.
    await b.service.close();
    b.service = (await startNode('node-b', b.test)).service;
    assert.equal(await status(b, token), 200);

    const revoked = await cli('revoke', record.id);
    assert.equal(revoked.code, 0, revoked.stderr);
    for (const node of [a, b]) {
      await waitUntil('the revoke to reach the node', async () =>
        (await status(node, token)) === 401 ? true : false,
      );
    }

    const listed = await cli('list');
    assert.equal(listed.code, 0, listed.stderr);
    const keys = listed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const mine = keys.find((k) => k.id === record.id);
    assert.ok(mine?.revokedAt, 'the revoked key stays listed with revokedAt');
    assert.ok(keys.every((k) => !('hash' in k)));
    assert.equal((await cli('revoke', 'nosuchkey123')).code, 1);
  });

  test('a key created and revoked through one store object reaches the serving nodes', async () => {
    const b = nodes[1]!;
    const store = await openJetStreamKeyStore(natsSettings(cluster!.urls, { prefix: PREFIX }), {
      name: 'node-a-admin',
      follow: true,
      onError: () => undefined,
    });
    try {
      const created = await store.create({ scopes: ['streams:read'] });
      await waitUntil('node B to accept the key', async () =>
        (await status(b, created.token)) === 200 ? true : false,
      );
      assert.equal(await store.revoke(created.record.id), true);
      await waitUntil('node B to refuse the revoked key', async () =>
        (await status(b, created.token)) === 401 ? true : false,
      );
    } finally {
      await store.close();
    }
  });

  test('the CLI refuses a bad --store, does not guess between PostgreSQL and JetStream, and reports an unreachable cluster', async () => {
    const bogus = await cli('list', '--store', 'redis');
    assert.equal(bogus.code, 2);
    assert.match(bogus.stderr, /--store must be one of lmdb, postgres, jetstream/);
    const inherited = Object.fromEntries(
      Object.entries(process.env).filter(([k]) => !k.startsWith('STREAMS_') && !k.startsWith('AUTOMATION_')),
    );
    const both = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keys', 'list'], {
      env: {
        ...inherited,
        ...env(),
        SLUICE_DATA_DIR: cliDir,
        AUTOMATION_DATABASE_URL: 'postgres://127.0.0.1:1/none',
      },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    assert.equal(both.code, 2);
    assert.match(both.stderr, /choose the key store with --store postgres .* or --store jetstream/);

    // A cluster that cannot be reached: one line and exit 1, no stack trace.
    const unreachable = await run(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'keys', 'list'], {
      env: { ...inherited, ...env(), SLUICE_DATA_DIR: cliDir, STREAMS_NATS_SERVERS: 'nats://127.0.0.1:1' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    assert.equal(unreachable.code, 1);
    assert.match(unreachable.stderr, /^sluice keys: cannot connect to NATS at nats:\/\/127\.0\.0\.1:1/);
    assert.doesNotMatch(unreachable.stderr, /\n\s+at /);
  });
});
