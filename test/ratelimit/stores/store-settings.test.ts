// Store settings: the spec's names and defaults, the upstream aliases, and every refused value.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { EnvReader, SettingsError } from '../../../src/core/settings/index.js';
import { loadStoreSettings } from '../../../src/ratelimit/settings/store.js';

const load = (env: Record<string, string>) => loadStoreSettings(new EnvReader(env));

function refused(env: Record<string, string>, variable: string, pattern: RegExp): void {
  assert.throws(
    () => load(env),
    (e: unknown) => e instanceof SettingsError && e.variable === variable && pattern.test(e.message),
    `${JSON.stringify(env)} should be refused naming ${variable}`,
  );
}

describe('store settings', () => {
  it('defaults to the embedded memory store with the spec defaults', () => {
    const s = load({});
    assert.equal(s.backend, 'memory');
    assert.equal(s.localCacheSizeBytes, 0);
    assert.equal(s.failureMode, 'open');
    assert.equal(s.healthCheckActiveConnection, false);
    assert.equal(s.expirationJitterMaxSeconds, 300);
    assert.equal(s.redis, undefined);
  });

  it('reads the KVSTORE family with spec defaults (pool 10, 10s, CREATE, 1s, window 0, parallelism 1)', () => {
    const s = load({ KVSTORE_URL: 'redis.local:6380' });
    assert.equal(s.backend, 'redis');
    assert.deepEqual(
      { ...s.redis!, nodes: [...s.redis!.nodes] },
      {
        family: 'KVSTORE',
        topology: 'single',
        nodes: [{ host: 'redis.local', port: 6380 }],
        socketPath: undefined,
        masterName: undefined,
        poolSize: 10,
        timeoutMs: 10_000,
        poolOnEmptyBehavior: 'CREATE',
        poolOnEmptyWaitMs: 1000,
        pipelineWindowMs: 0,
        clusterPipelineParallelism: 1,
        auth: undefined,
        sentinelAuth: undefined,
        tls: undefined,
      },
    );
  });

  it('accepts the upstream names as aliases; the spec name wins when both are set', () => {
    const s = load({
      REDIS_URL: '10.0.0.1:6379',
      REDIS_POOL_SIZE: '4',
      KVSTORE_POOL_SIZE: '7',
      REDIS_AUTH: 'u:p:w',
      LocalCacheSizeInBytes: '1024',
      REDIS_TIMEOUT: '250ms',
    });
    assert.equal(s.backend, 'redis');
    assert.equal(s.redis!.poolSize, 7);
    assert.equal(s.redis!.timeoutMs, 250);
    assert.deepEqual(s.redis!.auth, { username: 'u', password: 'p:w' });
    assert.equal(s.localCacheSizeBytes, 1024);
    assert.equal(load({ LOCAL_CACHE_SIZE_IN_BYTES: '5', LocalCacheSizeInBytes: '6' }).localCacheSizeBytes, 5);
    const mc = load({ BACKEND_TYPE: 'memcache', MEMCACHE_HOST_PORT: 'a:1,b', MEMCACHE_MAX_IDLE_CONNS: '3' });
    assert.equal(mc.backend, 'objcache');
    assert.deepEqual(mc.objcache!.hostPorts, [
      { host: 'a', port: 1 },
      { host: 'b', port: 11211 },
    ]);
    assert.equal(mc.objcache!.maxIdleConns, 3);
  });

  it('unix sockets, sentinel and cluster lists', () => {
    const unix = load({ KVSTORE_URL: '/var/run/redis.sock' });
    assert.equal(unix.redis!.socketPath, '/var/run/redis.sock');
    const sentinel = load({
      KVSTORE_TYPE: 'SENTINEL',
      KVSTORE_URL: 'mymaster,10.0.0.1:26379,10.0.0.2:26379',
      KVSTORE_SENTINEL_AUTH: 'spw',
    });
    assert.equal(sentinel.redis!.masterName, 'mymaster');
    assert.equal(sentinel.redis!.nodes.length, 2);
    assert.deepEqual(sentinel.redis!.sentinelAuth, { username: undefined, password: 'spw' });
    const cluster = load({
      KVSTORE_TYPE: 'cluster',
      KVSTORE_URL: 'a:1,b:2,c:3',
      KVSTORE_PIPELINE_WINDOW: '150us',
      KVSTORE_CLUSTER_PIPELINE_PARALLELISM: '0',
      KVSTORE_POOL_SIZE: '4',
    });
    assert.equal(cluster.redis!.pipelineWindowMs, 0.15);
    assert.equal(cluster.redis!.clusterPipelineParallelism, 4, '0 = automatic = pool size');
    assert.equal(
      load({
        KVSTORE_TYPE: 'cluster',
        KVSTORE_URL: 'a:1',
        KVSTORE_PIPELINE_WINDOW: '1ms',
        KVSTORE_CLUSTER_PIPELINE_PARALLELISM: '50',
      }).redis!.clusterPipelineParallelism,
      10,
      'capped at the pool size',
    );
  });

  it('the per-second family is read separately', () => {
    const s = load({
      KVSTORE_URL: 'a:1',
      KVSTORE_PERSECOND: 'true',
      REDIS_PERSECOND_URL: 'b:2',
      KVSTORE_PERSECOND_POOL_SIZE: '3',
      KVSTORE_PERSECOND_AUTH: 'x',
    });
    assert.equal(s.perSecond!.family, 'KVSTORE_PERSECOND');
    assert.deepEqual(s.perSecond!.nodes, [{ host: 'b', port: 2 }]);
    assert.equal(s.perSecond!.poolSize, 3);
    assert.equal(s.perSecond!.auth!.password, 'x');
    assert.equal(s.redis!.auth, undefined);
  });

  it('TLS files are read when TLS is on', () => {
    const s = load({
      KVSTORE_URL: 'a:1',
      KVSTORE_TLS: 'true',
      KVSTORE_TLS_CACERT: '/ca',
      KVSTORE_TLS_SKIP_HOSTNAME_VERIFICATION: 'true',
    });
    assert.deepEqual(s.redis!.tls, {
      clientCert: undefined,
      clientKey: undefined,
      caCert: '/ca',
      skipHostnameVerification: true,
    });
  });

  it('refuses bad values, naming the setting', () => {
    refused({ KVSTORE_TYPE: 'sentinel', KVSTORE_URL: 'onlymaster' }, 'KVSTORE_URL', /master name first/);
    refused(
      { KVSTORE_TYPE: 'cluster', KVSTORE_URL: 'a:1,b:2' },
      'KVSTORE_PIPELINE_WINDOW',
      /non-zero duration in cluster mode/,
    );
    refused(
      { KVSTORE_TYPE: 'cluster', KVSTORE_URL: 'a:1', KVSTORE_PIPELINE_WINDOW: '0' },
      'KVSTORE_PIPELINE_WINDOW',
      /non-zero/,
    );
    refused({ KVSTORE_URL: 'a:1', KVSTORE_TYPE: 'ring' }, 'KVSTORE_TYPE', /single, sentinel, cluster/);
    refused({ KVSTORE_URL: 'a:1,b:2' }, 'KVSTORE_URL', /one address/);
    refused({ KVSTORE_URL: 'host-without-port' }, 'KVSTORE_URL', /host:port/);
    refused({ KVSTORE_URL: 'a:99999' }, 'KVSTORE_URL', /port between/);
    refused(
      { KVSTORE_URL: 'a:1', KVSTORE_POOL_ON_EMPTY_BEHAVIOR: 'PANIC' },
      'KVSTORE_POOL_ON_EMPTY_BEHAVIOR',
      /CREATE, ERROR, WAIT/,
    );
    refused({ KVSTORE_URL: 'a:1', KVSTORE_POOL_SIZE: '0' }, 'KVSTORE_POOL_SIZE', /≥ 1/);
    refused({ KVSTORE_URL: 'a:1', KVSTORE_TIMEOUT: 'soon' }, 'KVSTORE_TIMEOUT', /duration/);
    refused({ KVSTORE_URL: 'a:1', KVSTORE_AUTH: ':pw' }, 'KVSTORE_AUTH', /user name/);
    refused({ KVSTORE_URL: 'a:1', KVSTORE_SENTINEL_AUTH: 'pw' }, 'KVSTORE_SENTINEL_AUTH', /sentinel/);
    refused({ KVSTORE_URL: 'a:1', KVSTORE_FAILURE_MODE: 'maybe' }, 'KVSTORE_FAILURE_MODE', /open, closed/);
    refused({ KVSTORE_URL: 'a:1', KVSTORE_PERSECOND: 'true' }, 'KVSTORE_PERSECOND_URL', /address/);
    refused(
      { KVSTORE_PERSECOND: 'true', KVSTORE_PERSECOND_URL: 'b:1' },
      'KVSTORE_PERSECOND',
      /Redis backend/,
    );
    refused({ BACKEND_TYPE: 'redis' }, 'KVSTORE_URL', /address/);
    refused({ BACKEND_TYPE: 'etcd' }, 'BACKEND_TYPE', /memory, redis, objcache/);
    refused({ BACKEND_TYPE: 'objcache' }, 'OBJCACHE_HOST_PORT', /OBJCACHE_SRV/);
    refused(
      { BACKEND_TYPE: 'objcache', OBJCACHE_HOST_PORT: 'a:1', OBJCACHE_SRV: '_mc._tcp.x' },
      'OBJCACHE_SRV',
      /exclusive/,
    );
    refused(
      { BACKEND_TYPE: 'objcache', OBJCACHE_SRV: '_mc._tcp.x', OBJCACHE_SRV_REFRESH: 'often' },
      'OBJCACHE_SRV_REFRESH',
      /duration/,
    );
    refused({ LOCAL_CACHE_SIZE_IN_BYTES: '-1' }, 'LOCAL_CACHE_SIZE_IN_BYTES', /≥ 0/);
    refused(
      { KVSTORE_URL: '/sock', KVSTORE_TYPE: 'cluster', KVSTORE_PIPELINE_WINDOW: '1ms' },
      'KVSTORE_SOCKET_TYPE',
      /tcp/,
    );
  });
});
