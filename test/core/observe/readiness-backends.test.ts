// Readiness follows the backends: with Redis (rate limit on Redis), NATS (streams on
// JetStream) or PostgreSQL (automation on PostgreSQL) stopped, /readyz turns 503 naming the
// backend, and back to 200 once it returns. Each check has a 1 s time-out, so the product goal
// is a 503 within about 2 s; the test only polls the state (a generous hang guard, no timing).

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { natsAvailable, startNatsCluster, type NatsCluster } from '../../helpers/nats.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../../helpers/postgres.js';
import { redisAvailable, startRedis, type RedisProcess } from '../../helpers/redis.js';
import { waitUntil } from '../../helpers/wait.js';
import { getJson, startService, type Started } from './services.js';

async function readyStatus(url: string): Promise<{ status: number; body: any }> {
  return getJson(url + '/readyz');
}

async function waitReady(url: string, status: number, check: string): Promise<any> {
  return waitUntil(
    `/readyz ${status} (${check})`,
    async () => {
      const r = await readyStatus(url);
      if (r.status !== status) return undefined;
      return r.body;
    },
    { intervalMs: 100 },
  );
}

async function outageAndReturn(
  s: Started,
  check: string,
  stop: () => Promise<void>,
  start: () => Promise<void>,
): Promise<void> {
  const up = await waitReady(s.url, 200, check);
  assert.deepEqual(up.checks[check], { ready: true });
  await stop();
  const down = await waitReady(s.url, 503, check);
  assert.equal(down.status, 'not_ready');
  assert.deepEqual(down.not_ready, [check]);
  assert.equal(down.checks[check].ready, false);
  assert.equal(typeof down.checks[check].reason, 'string');
  // Live all along: the process serves.
  assert.equal((await getJson(s.url + '/livez')).status, 200);
  await start();
  const back = await waitReady(s.url, 200, check);
  assert.equal(back.status, 'ready');
}

describe('ratelimit on Redis', { skip: redisAvailable ? false : 'redis-server is not installed' }, () => {
  let redis: RedisProcess;
  let s: Started;
  before(async () => {
    redis = await startRedis();
    s = await startService('ratelimit', {
      BACKEND_TYPE: 'redis',
      KVSTORE_URL: `127.0.0.1:${redis.port}`,
      KVSTORE_TIMEOUT: '1s',
    });
  });
  after(async () => {
    await s?.stop();
    await redis?.stop();
  });

  it('/readyz is 503 naming redis while Redis is down, 200 when it is back', async () => {
    await outageAndReturn(
      s,
      'redis',
      () => redis.kill(),
      () => redis.restart(),
    );
  });
});

describe('streams on JetStream', { skip: natsAvailable ? false : 'nats-server is not installed' }, () => {
  let cluster: NatsCluster;
  let s: Started;
  before(async () => {
    cluster = await startNatsCluster(1);
    s = await startService('streams', {
      STREAMS_BACKEND: 'jetstream',
      STREAMS_NATS_SERVERS: cluster.urls.join(','),
      STREAMS_REPLICAS: '1',
      STREAMS_NATS_PREFIX: 'readyz',
    });
  });
  after(async () => {
    await s?.stop();
    await cluster?.stop();
  });

  it('/readyz is 503 naming nats while NATS is down, 200 when it is back', async () => {
    await outageAndReturn(
      s,
      'nats',
      () => cluster.nodes[0]!.kill(),
      async () => {
        await cluster.nodes[0]!.restart();
        await cluster.ready();
      },
    );
    // The reconnection is counted.
    const text = await (await fetch(s.url + '/metrics')).text();
    const reconnects = /^sluice_streams_jetstream_reconnects_total (\d+)$/m.exec(text);
    assert.ok(reconnects && Number(reconnects[1]) >= 1, text);
  });
});

describe('automation on PostgreSQL', { skip: postgresSkip }, () => {
  let server: PostgresServer;
  let s: Started;
  before(async () => {
    server = await startPostgres();
    s = await startService('automation', {
      AUTOMATION_DATABASE_URL: await server.createDatabase(),
      AUTOMATION_SEED_BUILTINS: 'false',
      AUTOMATION_DATABASE_CONNECT_TIMEOUT: '1s',
    });
  });
  after(async () => {
    await s?.stop();
    await server?.stop();
  });

  it('/readyz is 503 naming postgresql while PostgreSQL is down, 200 when it is back', async () => {
    await outageAndReturn(
      s,
      'postgresql',
      () => server.shutdown(),
      () => server.start(),
    );
    const text = await (await fetch(s.url + '/metrics')).text();
    assert.match(text, /^sluice_automation_pg_pool_connections\{state="total"\} \d+$/m);
  });
});
