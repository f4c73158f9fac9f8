// Connection set-ups against real servers: sentinel (one master, two sentinels), a three-master
// cluster, a password and an ACL user, TLS with a CA and client certificates.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { EnvReader } from '../../../src/core/settings/index.js';
import { createConfiguredStores } from '../../../src/ratelimit/store/factory.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';
import type { CounterOp } from '../../../src/ratelimit/store/types.js';
import {
  makeCerts,
  redisAvailable,
  redisCli,
  startCluster,
  startRedis,
  startSentinelSetup,
  type ClusterSetup,
  type RedisProcess,
  type SentinelSetup,
  type TestCerts,
} from '../../helpers/redis.js';

const skip = redisAvailable ? false : 'redis-server is not installed';

/** Opens the configured store, counts some keys twice, and returns the answers. */
async function countTwice(env: Record<string, string>, keys: string[]): Promise<number[][]> {
  const stores = await createConfiguredStores(
    loadStoreSettings(new EnvReader({ KVSTORE_FAILURE_MODE: 'closed', KVSTORE_POOL_SIZE: '2', ...env })),
    {
      algorithm: 'fixed',
    },
  );
  try {
    const ops: CounterOp[] = keys.map((key) => ({ key, divider: 3600, hits: 1 }));
    const now = Date.now();
    const first = await stores!.store.increment(ops, now);
    const second = await stores!.store.increment(ops, now);
    return [first, second];
  } finally {
    await stores!.close();
  }
}

describe('Redis sentinel', { skip }, () => {
  let setup: SentinelSetup;
  before(async () => {
    setup = await startSentinelSetup({
      masterArgs: ['--requirepass', 'masterpw'],
      sentinelExtra: `sentinel auth-pass sluicemaster masterpw\nrequirepass sentinelpw`,
    });
  });
  after(async () => {
    await setup?.stop();
  });

  it('finds the master through two sentinels (with master and sentinel passwords) and counts there', async () => {
    const url = [setup.masterName, ...setup.sentinels.map((s) => `127.0.0.1:${s.port}`)].join(',');
    const [first, second] = await countTwice(
      {
        KVSTORE_TYPE: 'sentinel',
        KVSTORE_URL: url,
        KVSTORE_AUTH: 'masterpw',
        KVSTORE_SENTINEL_AUTH: 'sentinelpw',
      },
      ['s_a_', 's_b_'],
    );
    assert.deepEqual(first, [1, 1]);
    assert.deepEqual(second, [2, 2]);
    const keys = redisCli(setup.master.port, ['--no-auth-warning', '-a', 'masterpw', 'keys', 's_*'])
      .trim()
      .split('\n')
      .sort();
    assert.equal(keys.length, 2);
  });

  it('a wrong sentinel password fails the decision, not the process', async () => {
    const url = [setup.masterName, ...setup.sentinels.map((s) => `127.0.0.1:${s.port}`)].join(',');
    await assert.rejects(
      countTwice(
        {
          KVSTORE_TYPE: 'sentinel',
          KVSTORE_URL: url,
          KVSTORE_AUTH: 'masterpw',
          KVSTORE_SENTINEL_AUTH: 'wrong',
          KVSTORE_TIMEOUT: '1s',
        },
        ['s_c_'],
      ),
      /redis store unavailable/,
    );
  });
});

describe('Redis cluster', { skip }, () => {
  let cluster: ClusterSetup;
  before(async () => {
    cluster = await startCluster();
  });
  after(async () => {
    await cluster?.stop();
  });

  for (const parallelism of ['1', '0', '3']) {
    it(`counts keys spread over three masters in one call (parallelism ${parallelism})`, async () => {
      const keys = Array.from({ length: 24 }, (_, i) => `c${parallelism}_key${i}_`);
      const [first, second] = await countTwice(
        {
          KVSTORE_TYPE: 'cluster',
          KVSTORE_URL: cluster.nodes.map((n) => `127.0.0.1:${n.port}`).join(','),
          KVSTORE_PIPELINE_WINDOW: '150us',
          KVSTORE_CLUSTER_PIPELINE_PARALLELISM: parallelism,
        },
        keys,
      );
      assert.deepEqual(
        first,
        keys.map(() => 1),
      );
      assert.deepEqual(
        second,
        keys.map(() => 2),
      );
      // The keys really are on more than one master.
      const perNode = cluster.nodes.map((n) => Number(redisCli(n.port, ['dbsize']).trim()));
      assert.ok(perNode.filter((x) => x > 0).length >= 2, `keys per node ${perNode.join(',')}`);
    });
  }
});

describe('Redis authentication', { skip }, () => {
  let redis: RedisProcess;
  before(async () => {
    redis = await startRedis({ args: ['--requirepass', 'defaultpw'] });
    redisCli(redis.port, [
      '--no-auth-warning',
      '-a',
      'defaultpw',
      'acl',
      'setuser',
      'limiter',
      'on',
      '>limiterpw',
      '~*',
      '+@all',
    ]);
  });
  after(async () => {
    await redis?.stop();
  });

  it('KVSTORE_AUTH=<password> authenticates the default user', async () => {
    assert.deepEqual(
      await countTwice({ KVSTORE_URL: `127.0.0.1:${redis.port}`, KVSTORE_AUTH: 'defaultpw' }, ['a_pw_']),
      [[1], [2]],
    );
  });

  it('KVSTORE_AUTH=<user>:<password> authenticates an ACL user (upstream alias REDIS_AUTH)', async () => {
    assert.deepEqual(
      await countTwice({ REDIS_URL: `127.0.0.1:${redis.port}`, REDIS_AUTH: 'limiter:limiterpw' }, ['a_acl_']),
      [[1], [2]],
    );
  });

  it('a wrong password answers per the policy with the store error, and health stays red', async () => {
    const stores = await createConfiguredStores(
      loadStoreSettings(
        new EnvReader({
          KVSTORE_URL: `127.0.0.1:${redis.port}`,
          KVSTORE_AUTH: 'nope',
          KVSTORE_TIMEOUT: '500ms',
          KVSTORE_POOL_SIZE: '1',
        }),
      ),
      { algorithm: 'fixed' },
    );
    try {
      assert.equal(stores!.store.healthy(), false);
      // Default policy is open: the decision is answered as a fresh window.
      assert.deepEqual(
        await stores!.store.increment([{ key: 'a_bad_', divider: 60, hits: 1 }], Date.now()),
        [1],
      );
    } finally {
      await stores!.close();
    }
  });
});

describe('Redis over TLS', { skip }, () => {
  let certs: TestCerts;
  let redis: RedisProcess;
  before(async () => {
    certs = makeCerts();
    redis = await startRedis({
      tls: { cert: certs.serverCert, key: certs.serverKey, ca: certs.ca, authClients: 'yes' },
    });
  });
  after(async () => {
    await redis?.stop();
    certs?.cleanup();
  });

  it('connects with the CA and a client certificate', async () => {
    const env = {
      KVSTORE_URL: `127.0.0.1:${redis.port}`,
      KVSTORE_TLS: 'true',
      KVSTORE_TLS_CACERT: certs.ca,
      KVSTORE_TLS_CLIENT_CERT: certs.clientCert,
      KVSTORE_TLS_CLIENT_KEY: certs.clientKey,
    };
    assert.deepEqual(await countTwice(env, ['t_a_']), [[1], [2]]);
  });

  it('hostname verification applies unless skipped (server certificate names 127.0.0.1 and localhost only)', async () => {
    const base = {
      KVSTORE_TLS: 'true',
      KVSTORE_TLS_CACERT: certs.ca,
      KVSTORE_TLS_CLIENT_CERT: certs.clientCert,
      KVSTORE_TLS_CLIENT_KEY: certs.clientKey,
      KVSTORE_TIMEOUT: '1s',
    };
    // "::ffff:127.0.0.1" dials the same server under a name the certificate does not carry.
    const url = `[::ffff:127.0.0.1]:${redis.port}`;
    await assert.rejects(countTwice({ ...base, KVSTORE_URL: url }, ['t_b_']), /redis store unavailable/);
    assert.deepEqual(
      // This one must succeed, so its time-out is one only a hang reaches.
      await countTwice(
        { ...base, KVSTORE_URL: url, KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: 'true', KVSTORE_TIMEOUT: '60s' },
        ['t_c_'],
      ),
      [[1], [2]],
    );
  });

  it('without a client certificate the server refuses the connection', async () => {
    await assert.rejects(
      countTwice(
        {
          KVSTORE_URL: `127.0.0.1:${redis.port}`,
          KVSTORE_TLS: 'true',
          KVSTORE_TLS_CACERT: certs.ca,
          KVSTORE_TIMEOUT: '1s',
        },
        ['t_d_'],
      ),
      /redis store unavailable/,
    );
  });

  it('the plain-text client cannot talk to the TLS port', async () => {
    const plain = new Redis({
      host: '127.0.0.1',
      port: redis.port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      connectTimeout: 1000,
      retryStrategy: () => null,
    });
    plain.on('error', () => undefined);
    await assert.rejects(plain.connect().then(() => plain.ping()));
    plain.disconnect();
  });
});

describe('Redis on a unix socket', { skip }, () => {
  let redis: RedisProcess;
  before(async () => {
    redis = await startRedis({ unixSocket: true });
  });
  after(async () => {
    await redis?.stop();
  });

  it('KVSTORE_URL=<path> (socket type inferred) and KVSTORE_SOCKET_TYPE=unix both count there', async () => {
    assert.deepEqual(await countTwice({ KVSTORE_URL: redis.socketPath! }, ['u_a_']), [[1], [2]]);
    assert.deepEqual(
      await countTwice({ KVSTORE_URL: redis.socketPath!, KVSTORE_SOCKET_TYPE: 'unix' }, ['u_a_']).then(
        (r) => r[0],
      ),
      [3],
    );
  });
});
