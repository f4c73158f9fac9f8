import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { EnvReader, SettingsError } from '../../src/core/settings/index.js';
import { loadRateLimitSettings } from '../../src/ratelimit/settings/index.js';

describe('ratelimit settings', () => {
  it('defaults are the spec values', () => {
    const s = loadRateLimitSettings(new EnvReader({})).server;
    assert.deepEqual(s.http, { host: '0.0.0.0', port: 8080 });
    assert.equal(s.grpc.port, 8081);
    assert.equal(s.grpc.uds, undefined);
    assert.equal(s.grpc.maxConnectionAgeMs, 24 * 3_600_000);
    assert.deepEqual(s.debug, { host: '127.0.0.1', port: 6070, profiling: false });
    assert.deepEqual(s.runtime, {
      root: undefined,
      subdirectory: '',
      appDirectory: 'config',
      ignoreDotFiles: false,
      watchRoot: true,
    });
    assert.equal(s.nearLimitRatio, 0.8);
    assert.deepEqual(s.responseHeaders, {
      enabled: false,
      limit: 'RateLimit-Limit',
      remaining: 'RateLimit-Remaining',
      reset: 'RateLimit-Reset',
    });
    assert.equal(s.windowAlgorithm, 'sliding');
    assert.equal(s.configType, 'FILE');
    assert.equal(s.shadowMode, false);
  });

  it('reads every setting by its exact name', () => {
    const s = loadRateLimitSettings(
      new EnvReader({
        HOST: '127.0.0.1',
        PORT: '9000',
        GRPC_UDS: '/tmp/rl.sock',
        GRPC_MAX_CONNECTION_AGE: '10m',
        GRPC_MAX_CONNECTION_AGE_GRACE: '30s',
        RUNTIME_ROOT: '/srv/x',
        RUNTIME_SUBDIRECTORY: 'ratelimit',
        RUNTIME_IGNOREDOTFILES: 'true',
        RUNTIME_WATCH_ROOT: 'false',
        MERGE_DOMAIN_CONFIG: 'true',
        FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
        HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true',
        SHADOW_MODE: 'true',
        NEAR_LIMIT_RATIO: '0.5',
        STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT: 'true',
        LIMIT_RESPONSE_HEADERS_ENABLED: 'true',
        LIMIT_REMAINING_HEADER: 'X-Left',
        CACHE_KEY_PREFIX: 'pre_',
        WINDOW_ALGORITHM: 'fixed',
        MEMORY_STORE_MAX_KEYS: '4096',
      }),
    ).server;
    assert.equal(s.http.port, 9000);
    assert.equal(s.grpc.uds, '/tmp/rl.sock');
    assert.equal(s.grpc.maxConnectionAgeMs, 600_000);
    assert.equal(s.grpc.maxConnectionAgeGraceMs, 30_000);
    assert.deepEqual(s.runtime, {
      root: '/srv/x',
      subdirectory: 'ratelimit',
      appDirectory: 'config',
      ignoreDotFiles: true,
      watchRoot: false,
    });
    assert.equal(
      s.mergeDomainConfig &&
        s.forceStartWithoutInitialConfig &&
        s.healthyWithAtLeastOneConfigLoaded &&
        s.shadowMode,
      true,
    );
    assert.equal(s.nearLimitRatio, 0.5);
    assert.equal(s.stopCacheKeyIncrementWhenOverlimit, true);
    assert.equal(s.responseHeaders.remaining, 'X-Left');
    assert.equal(s.cacheKeyPrefix, 'pre_');
    assert.equal(s.windowAlgorithm, 'fixed');
    assert.equal(s.memoryStoreMaxKeys, 4096);
  });

  it('refuses bad values, naming the variable', () => {
    const bad: Record<string, string> = {
      PORT: '70000',
      GRPC_PORT: 'abc',
      NEAR_LIMIT_RATIO: '1.5',
      WINDOW_ALGORITHM: 'leaky',
      SHADOW_MODE: 'maybe',
      GRPC_MAX_CONNECTION_AGE: 'soon',
      LIMIT_LIMIT_HEADER: 'Bad Header',
      RUNTIME_APPDIRECTORY: 'a/b',
      MEMORY_STORE_MAX_KEYS: '1',
      CONFIG_TYPE: 'ETCD',
    };
    for (const [name, value] of Object.entries(bad)) {
      assert.throws(
        () => loadRateLimitSettings(new EnvReader({ [name]: value })),
        (e: unknown) => e instanceof SettingsError && e.variable === name,
        `${name}=${value}`,
      );
    }
  });

  it('one call reads every section into one tree', () => {
    const s = loadRateLimitSettings(
      new EnvReader({
        PORT: '9001',
        BACKEND_TYPE: 'redis',
        KVSTORE_URL: 'localhost:6379',
        USE_PULLMETRICS: 'true',
        TRACING_ENABLED: 'true',
        CONFIG_GRPC_XDS_NODE_ID: 'node-7',
      }),
    );
    assert.equal(s.server.http.port, 9001);
    assert.equal(s.store.backend, 'redis');
    assert.equal(s.stats.pull.enabled, true);
    assert.equal(s.tracing.enabled, true);
    assert.equal(s.xds.nodeId, 'node-7');
    assert.equal(s.grpcTls, undefined);
    assert.ok(Object.isFrozen(s));
  });

  it('nothing in src/ratelimit outside settings/ reads the environment', () => {
    const reads =
      /process\.env|\benv\.(string|int|bool|float|duration|optionalString|enumeration|list|pairs|has|lookup)\(/;
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        const path = join(dir, entry.name);
        if (entry.isDirectory()) {
          if (path !== join('src', 'ratelimit', 'settings')) walk(path);
        } else if (path.endsWith('.ts') && reads.test(readFileSync(path, 'utf8'))) offenders.push(path);
      }
    };
    walk(join('src', 'ratelimit'));
    assert.deepEqual(offenders, []);
  });
});
