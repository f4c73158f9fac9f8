// The management-server (ADS state-of-the-world) client against a management server written in
// the test: configurations applied, invalid ones NACKed with the old one kept, reconnection after
// a server restart, TLS with a SAN override, additional headers, the message size limit, and
// the settings and backoff arithmetic.

import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EnvReader, SettingsError } from '../../../src/core/settings/index.js';
import { ConfigManager } from '../../../src/ratelimit/config/manager.js';
import {
  backoffDelay,
  createXdsProvider,
  retryDelay,
  type XdsConfigProvider,
} from '../../../src/ratelimit/config/xds.js';
import { toDomainConfig } from '../../../src/ratelimit/config/xds-convert.js';
import { loadXdsSettings } from '../../../src/ratelimit/settings/observability.js';
import { STAT } from '../../../src/ratelimit/stats/names.js';
import { createStatsBuffer, SharedStatsTable } from '../../../src/ratelimit/stats/shared-table.js';
import { makeCa } from '../../helpers/certs.js';
import { encodeConfig, ManagementServer } from './management-server.js';

const MINUTE = 2;
const UNKNOWN = 0;

function domainConfig(name: string, domain: string, limit: number, unit = MINUTE): Record<string, unknown> {
  return {
    name,
    domain,
    descriptors: [
      { key: 'k1', rateLimit: { unit, requestsPerUnit: limit } },
      {
        key: 'k2',
        value: 'v',
        descriptors: [{ key: 'sub', rateLimit: { unit: 7, requestsPerUnit: 5, name: 'weekly' } }],
      },
      { key: 'free', rateLimit: { unlimited: true } },
    ],
  };
}

interface Harness {
  manager: ConfigManager;
  provider: XdsConfigProvider;
  stats: SharedStatsTable;
}

async function connect(env: Record<string, string>, waitForFirstConfig = true): Promise<Harness> {
  const stats = new SharedStatsTable(createStatsBuffer(64));
  const provider = createXdsProvider({
    settings: loadXdsSettings(
      new EnvReader({
        CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: '50ms',
        XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '50ms',
        XDS_CLIENT_BACKOFF_MAX_INTERVAL: '200ms',
        ...env,
      }),
    ),
    compile: { mergeDomainConfig: false, nearLimitRatio: 0.8 },
    waitForFirstConfig,
  });
  const manager = new ConfigManager({
    provider,
    compile: { mergeDomainConfig: false, nearLimitRatio: 0.8 },
    onRules: () => undefined,
    stats,
    countStats: true,
  });
  await manager.start();
  return { manager, provider, stats };
}

describe('management-server configuration (ADS state of the world)', () => {
  const server = new ManagementServer();
  let h: Harness;

  before(async () => {
    await server.start();
    server.push('v1', [encodeConfig(domainConfig('first', 'd', 10))]);
    h = await connect({
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${server.port}`,
      CONFIG_GRPC_XDS_NODE_ID: 'node-a',
      CONFIG_GRPC_XDS_NODE_METADATA: 'zone:eu-1,rack=r7',
      CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: '<X-Tenant:acme>',
    });
  });
  after(async () => {
    await h.manager.close();
    await server.stop();
  });

  it('applies a valid configuration, ACKs it and counts config_load_success', async () => {
    assert.deepEqual([...h.manager.current!.domains.keys()], ['d']);
    assert.deepEqual(h.manager.current!.files, ['first']);
    const opening = server.requests[0]!;
    assert.equal(opening.typeUrl, 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig');
    assert.equal(opening.node?.id, 'node-a');
    assert.equal(opening.node?.metadata?.fields?.['zone']?.stringValue, 'eu-1');
    assert.equal(opening.node?.metadata?.fields?.['rack']?.stringValue, 'r7');
    assert.equal(opening.tenant, 'acme');
    assert.equal(opening.versionInfo ?? '', '');
    const ack = await server.waitForRequest((r) => r.responseNonce === '1');
    assert.equal(ack.versionInfo, 'v1');
    assert.equal(ack.errorDetail, undefined);
    assert.equal(h.stats.get(STAT.configLoadSuccess), 1);
    assert.equal(h.provider.version, 'v1');
  });

  it('NACKs an invalid configuration with the error and keeps the previous one', async () => {
    const nonce = server.nextNonce;
    const loads = h.manager.nextLoad();
    server.push('v2', [encodeConfig(domainConfig('second', 'd', 10, UNKNOWN))]);
    await loads;
    const nack = await server.waitForRequest((r) => r.responseNonce === nonce);
    assert.equal(nack.versionInfo, 'v1', 'a NACK carries the last accepted version');
    assert.equal(nack.errorDetail?.code, 3);
    assert.equal(nack.errorDetail?.message, "second: invalid rate limit unit 'UNKNOWN'");
    assert.deepEqual(h.manager.current!.files, ['first']);
    assert.equal(h.stats.get(STAT.configLoadError), 1);

    // Two configurations for one domain: refused like duplicate files.
    const dupNonce = server.nextNonce;
    const again = h.manager.nextLoad();
    server.push('v2b', [encodeConfig(domainConfig('a', 'd', 1)), encodeConfig(domainConfig('b', 'd', 2))]);
    await again;
    const dup = await server.waitForRequest((r) => r.responseNonce === dupNonce);
    assert.equal(dup.errorDetail?.message, "b: duplicate domain 'd' in config file");

    // An empty domain and a resource of another type are refused too.
    for (const resources of [
      [encodeConfig({ name: 'nodomain', descriptors: [] })],
      [{ type_url: 'type.googleapis.com/other.Thing', value: Buffer.from([]) }],
    ]) {
      const n = server.nextNonce;
      const next = h.manager.nextLoad();
      server.push('bad', resources);
      await next;
      const reply = await server.waitForRequest((r) => r.responseNonce === n);
      assert.equal(reply.versionInfo, 'v1');
      assert.ok(reply.errorDetail?.message);
    }
    assert.equal(h.stats.get(STAT.configLoadError), 4);
    assert.deepEqual(h.manager.current!.files, ['first']);
  });

  it('applies the next valid configuration', async () => {
    const loads = h.manager.nextLoad();
    server.push('v3', [
      encodeConfig(domainConfig('third', 'd', 10)),
      encodeConfig(domainConfig('fourth', 'e', 3)),
    ]);
    await loads;
    assert.deepEqual([...h.manager.current!.domains.keys()].sort(), ['d', 'e']);
    assert.equal(h.provider.version, 'v3');
  });

  it('reconnects after the management server restarts, resuming from the accepted version', async () => {
    const port = server.port;
    await server.stop();
    const seen = server.requests.length;
    await server.start(port);
    const loads = h.manager.nextLoad();
    server.push('v4', [encodeConfig(domainConfig('fifth', 'f', 10))]);
    const reopen = await server.waitForRequest((r) => !r.responseNonce, seen);
    assert.equal(reopen.versionInfo, 'v3');
    assert.equal(reopen.node?.id, 'node-a');
    await loads;
    assert.deepEqual([...h.manager.current!.domains.keys()], ['f']);
  });
});

describe('management-server client transport', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-xds-tls-'));
    makeCa(dir, 'xds', { server: 'DNS:xds.internal', client: 'DNS:ratelimit.internal' });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));
  const p = (f: string): string => join(dir, f);

  it('connects with mutual TLS, verifying the server as CONFIG_GRPC_XDS_SERVER_TLS_SAN', async () => {
    const server = new ManagementServer();
    await server.start(0, {
      certFile: p('server.crt'),
      keyFile: p('server.key'),
      clientCaFile: p('xds-ca.crt'),
      reloadIntervalMs: 0,
    });
    server.push('tls-1', [encodeConfig(domainConfig('secure', 's', 1))]);
    const h = await connect({
      CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${server.port}`,
      CONFIG_GRPC_XDS_SERVER_USE_TLS: 'true',
      CONFIG_GRPC_XDS_CLIENT_TLS_CERT: p('client.crt'),
      CONFIG_GRPC_XDS_CLIENT_TLS_KEY: p('client.key'),
      CONFIG_GRPC_XDS_SERVER_TLS_CACERT: p('xds-ca.crt'),
      CONFIG_GRPC_XDS_SERVER_TLS_SAN: 'xds.internal',
    });
    try {
      assert.deepEqual([...h.manager.current!.domains.keys()], ['s']);
    } finally {
      await h.manager.close();
      await server.stop();
    }
  });

  it('does not take configuration from a server whose certificate does not match', async () => {
    const server = new ManagementServer();
    await server.start(0, { certFile: p('server.crt'), keyFile: p('server.key'), reloadIntervalMs: 0 });
    server.push('tls-2', [encodeConfig(domainConfig('secure', 's', 1))]);
    const h = await connect(
      {
        CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${server.port}`,
        CONFIG_GRPC_XDS_SERVER_USE_TLS: 'true',
        CONFIG_GRPC_XDS_SERVER_TLS_CACERT: p('xds-ca.crt'),
        CONFIG_GRPC_XDS_SERVER_TLS_SAN: 'someone-else.internal',
      },
      false,
    );
    try {
      // The client keeps retrying; it never reaches the server's handler (TLS fails first).
      await h.provider.waitForStreamsEnded(3);
      assert.equal(server.requests.length, 0);
      assert.equal(h.manager.current, undefined);
    } finally {
      await h.manager.close();
      await server.stop();
    }
  });

  it('drops a response above XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES and reconnects', async () => {
    const server = new ManagementServer();
    await server.start();
    const big = domainConfig('big', 'b', 1);
    (big['descriptors'] as unknown[]).push(
      ...Array.from({ length: 50 }, (_, i) => ({
        key: `key-${i}`,
        rateLimit: { unit: MINUTE, requestsPerUnit: 1 },
      })),
    );
    server.push('big-1', [encodeConfig(big)]);
    const h = await connect(
      { CONFIG_GRPC_XDS_SERVER_URL: `127.0.0.1:${server.port}`, XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: '256' },
      false,
    );
    try {
      // Streams keep failing on the oversized message and the client keeps coming back.
      await h.provider.waitForStreamsEnded(2);
      await server.waitForRequest((r) => !r.responseNonce, 1);
      assert.equal(h.manager.current, undefined);
      assert.ok(!server.requests.some((r) => r.responseNonce), 'nothing was ACKed or NACKed');
    } finally {
      await h.manager.close();
      await server.stop();
    }
  });
});

describe('management-server settings and retry arithmetic', () => {
  it('has the spec defaults', () => {
    const s = loadXdsSettings(new EnvReader({}));
    assert.equal(s.nodeId, 'default');
    assert.equal(s.serverUrl, 'localhost:18000');
    assert.equal(s.connectRetryIntervalMs, 3000);
    assert.equal(s.tls, undefined);
    assert.deepEqual(s.backoff, {
      jitter: true,
      initialIntervalMs: 10_000,
      maxIntervalMs: 60_000,
      randomFactor: 0.5,
    });
    assert.equal(s.maxMessageBytes, undefined);
  });

  it('refuses bad values with the variable named', () => {
    const bad: Record<string, string>[] = [
      { XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: 'later' },
      { XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '0s' },
      { XDS_CLIENT_BACKOFF_INITIAL_INTERVAL: '2m', XDS_CLIENT_BACKOFF_MAX_INTERVAL: '1m' },
      { XDS_CLIENT_BACKOFF_RANDOM_FACTOR: '1.5' },
      { XDS_CLIENT_BACKOFF_JITTER: 'sometimes' },
      { XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: '0' },
      { XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES: 'big' },
      { CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL: '0ms' },
      { CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS: 'novalue' },
      { CONFIG_GRPC_XDS_NODE_METADATA: 'novalue' },
      { CONFIG_GRPC_XDS_CLIENT_TLS_CERT: '/x.crt' },
      { CONFIG_GRPC_XDS_SERVER_USE_TLS: 'true', CONFIG_GRPC_XDS_SERVER_TLS_CACERT: '/nonexistent/ca.crt' },
    ];
    for (const env of bad)
      assert.throws(() => loadXdsSettings(new EnvReader(env)), SettingsError, JSON.stringify(env));
  });

  it('grows the backoff by 1.5 up to the maximum, randomised within the factor', () => {
    const b = { jitter: false, initialIntervalMs: 100, maxIntervalMs: 400, randomFactor: 0.5 };
    assert.deepEqual(
      [0, 1, 2, 3, 4].map((n) => backoffDelay(n, b)),
      [100, 150, 225, 337.5, 400],
    );
    const j = { ...b, jitter: true };
    assert.equal(
      backoffDelay(1, j, () => 0),
      75,
    );
    assert.equal(
      backoffDelay(1, j, () => 0.5),
      150,
    );
    assert.equal(
      backoffDelay(1, j, () => 1),
      225,
    );
    assert.equal(
      backoffDelay(9, j, () => 1),
      400,
      'never above the maximum',
    );
    assert.equal(
      retryDelay(1000, () => 0),
      500,
    );
    assert.equal(
      retryDelay(1000, () => 1),
      1500,
    );
  });

  it('converts the message like a file: units by name, no value_to_metric/share_threshold', () => {
    const doc = toDomainConfig({
      name: 'n',
      domain: 'd',
      descriptors: [
        { key: 'k', rateLimit: { unit: 7, requestsPerUnit: 3, replaces: [{ name: 'x' }] }, shadowMode: true },
      ],
    });
    assert.equal(doc.file, 'n');
    const d = doc.descriptors[0]!;
    assert.deepEqual(d.rateLimit, {
      unit: 'WEEK',
      requestsPerUnit: 3,
      unlimited: false,
      name: '',
      replaces: ['x'],
    });
    assert.equal(d.shadowMode, true);
    assert.equal(d.valueToMetric, false);
    assert.throws(() => toDomainConfig({ name: 'n', domain: '' }), /n: config file cannot have empty domain/);
  });
});
