// gRPC transport security from the rate limit settings (GRPC_SERVER_USE_TLS, GRPC_SERVER_TLS_CERT,
// GRPC_SERVER_TLS_KEY, GRPC_CLIENT_TLS_CACERT, GRPC_CLIENT_TLS_SAN) with certificates made by
// openssl in the test: TLS, mutual TLS (a client without a certificate is refused), the SAN
// check, and hot reload (a replaced certificate is served to new connections while an open one
// keeps working).

import { strict as assert } from 'node:assert';
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import {
  createUnaryClient,
  GrpcStatus,
  loadProto,
  PROTO_FILES,
  serviceDefinition,
  startGrpcServer,
  type GrpcClientTlsOptions,
  type GrpcError,
  type RunningGrpcServer,
} from '../../../src/core/grpc/index.js';
import { EnvReader, SettingsError } from '../../../src/core/settings/index.js';
import { loadGrpcTlsSettings } from '../../../src/ratelimit/settings/observability.js';
import { toGrpcServerTls } from '../../../src/ratelimit/settings/index.js';
import { makeCa } from '../../helpers/certs.js';
import { HANG_MS, waitUntil } from '../../helpers/wait.js';

const rls = serviceDefinition(loadProto([PROTO_FILES.rls]), 'envoy.service.ratelimit.v3.RateLimitService');
interface Response {
  overallCode: number;
}

let dir: string;
const p = (f: string): string => join(dir, f);

async function serve(env: Record<string, string>): Promise<RunningGrpcServer> {
  const tls = toGrpcServerTls(loadGrpcTlsSettings(new EnvReader(env)));
  return startGrpcServer({
    host: '127.0.0.1',
    port: 0,
    ...(tls ? { tls } : {}),
    services: [{ definition: rls, implementation: { ShouldRateLimit: () => ({ overallCode: 1 }) } }],
  });
}

function client(server: RunningGrpcServer, tls?: GrpcClientTlsOptions) {
  // A private subchannel pool, so each client makes its own connection (and handshake).
  return createUnaryClient<unknown, Response>(server.address, rls, 'ShouldRateLimit', {
    ...(tls ? { tls } : {}),
    channelOptions: { 'grpc.use_local_subchannel_pool': 1 },
  });
}

async function refused(call: Promise<unknown>, codes: number[]): Promise<void> {
  await assert.rejects(call, (err: GrpcError) => codes.includes(err.status));
}

/** The certificate a fresh TLS handshake with the server gets. */
function peerCertificate(port: number): Promise<PeerCertificate> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect(
      { host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2'], servername: 'localhost' },
      () => {
        const cert = socket.getPeerCertificate();
        socket.destroy();
        resolve(cert);
      },
    );
    socket.once('error', reject);
  });
}

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-rl-tls-'));
  makeCa(dir, 'one', {
    server: 'DNS:localhost',
    server2: 'DNS:localhost',
    client: 'DNS:client.test',
    stranger: 'DNS:stranger.test',
  });
  makeCa(dir, 'other', { outsider: 'DNS:client.test' });
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('rate limit gRPC TLS', () => {
  it('serves TLS from GRPC_SERVER_TLS_CERT/KEY; plaintext clients cannot call', async () => {
    const server = await serve({
      GRPC_SERVER_USE_TLS: 'true',
      GRPC_SERVER_TLS_CERT: p('server.crt'),
      GRPC_SERVER_TLS_KEY: p('server.key'),
    });
    const secure = client(server, { caFile: p('one-ca.crt'), serverName: 'localhost' });
    const plain = client(server);
    try {
      assert.equal((await secure.call({ domain: 'd', descriptors: [] })).overallCode, 1);
      await refused(plain.call({ domain: 'd', descriptors: [] }, { timeoutMs: 3000 }), [
        GrpcStatus.UNAVAILABLE,
        GrpcStatus.DEADLINE_EXCEEDED,
      ]);
    } finally {
      secure.close();
      plain.close();
      await server.close(100);
    }
  });

  it('with GRPC_CLIENT_TLS_CACERT requires a client certificate from that CA', async () => {
    const server = await serve({
      GRPC_SERVER_USE_TLS: 'true',
      GRPC_SERVER_TLS_CERT: p('server.crt'),
      GRPC_SERVER_TLS_KEY: p('server.key'),
      GRPC_CLIENT_TLS_CACERT: p('one-ca.crt'),
    });
    const base = { caFile: p('one-ca.crt'), serverName: 'localhost' };
    const noCert = client(server, base);
    const good = client(server, { ...base, certFile: p('client.crt'), keyFile: p('client.key') });
    const outsider = client(server, { ...base, certFile: p('outsider.crt'), keyFile: p('outsider.key') });
    try {
      await refused(noCert.call({ domain: 'd', descriptors: [] }, { timeoutMs: 3000 }), [
        GrpcStatus.UNAVAILABLE,
        GrpcStatus.DEADLINE_EXCEEDED,
      ]);
      await refused(outsider.call({ domain: 'd', descriptors: [] }, { timeoutMs: 3000 }), [
        GrpcStatus.UNAVAILABLE,
        GrpcStatus.DEADLINE_EXCEEDED,
      ]);
      assert.equal((await good.call({ domain: 'd', descriptors: [] })).overallCode, 1);
    } finally {
      noCert.close();
      good.close();
      outsider.close();
      await server.close(100);
    }
  });

  it('with GRPC_CLIENT_TLS_SAN accepts only client certificates naming that DNS name', async () => {
    const server = await serve({
      GRPC_SERVER_USE_TLS: 'true',
      GRPC_SERVER_TLS_CERT: p('server.crt'),
      GRPC_SERVER_TLS_KEY: p('server.key'),
      GRPC_CLIENT_TLS_CACERT: p('one-ca.crt'),
      GRPC_CLIENT_TLS_SAN: 'client.test',
    });
    const base = { caFile: p('one-ca.crt'), serverName: 'localhost' };
    const good = client(server, { ...base, certFile: p('client.crt'), keyFile: p('client.key') });
    const stranger = client(server, { ...base, certFile: p('stranger.crt'), keyFile: p('stranger.key') });
    try {
      assert.equal((await good.call({ domain: 'd', descriptors: [] })).overallCode, 1);
      await refused(stranger.call({ domain: 'd', descriptors: [] }, { timeoutMs: HANG_MS }), [
        GrpcStatus.UNAUTHENTICATED,
      ]);
    } finally {
      good.close();
      stranger.close();
      await server.close(100);
    }
  });

  it('serves a replaced certificate file to new connections and keeps open ones', async () => {
    const live = join(dir, 'live');
    mkdirSync(live);
    copyFileSync(p('server.crt'), join(live, 'tls.crt'));
    copyFileSync(p('server.key'), join(live, 'tls.key'));
    const server = await serve({
      GRPC_SERVER_USE_TLS: 'true',
      GRPC_SERVER_TLS_CERT: join(live, 'tls.crt'),
      GRPC_SERVER_TLS_KEY: join(live, 'tls.key'),
      GRPC_SERVER_TLS_RELOAD_INTERVAL: '100ms',
    });
    const open = client(server, { caFile: p('one-ca.crt'), serverName: 'localhost' });
    try {
      assert.equal((await open.call({ domain: 'd', descriptors: [] })).overallCode, 1);
      assert.equal((await peerCertificate(server.port)).subject.CN, 'server');
      // Atomic replacement, key first: each file is whole at every refresh.
      copyFileSync(p('server2.key'), join(live, 'tls.key.new'));
      copyFileSync(p('server2.crt'), join(live, 'tls.crt.new'));
      renameSync(join(live, 'tls.key.new'), join(live, 'tls.key'));
      renameSync(join(live, 'tls.crt.new'), join(live, 'tls.crt'));
      // A handshake during a refresh may fail; only the served certificate matters here.
      await waitUntil(
        'the replaced certificate to be served',
        async () =>
          (await peerCertificate(server.port).then(
            (c) => String(c.subject.CN),
            () => '',
          )) === 'server2',
        { intervalMs: 50 },
      );
      assert.equal(
        (await open.call({ domain: 'd', descriptors: [] })).overallCode,
        1,
        'the connection opened before the swap still works',
      );
      const fresh = client(server, { caFile: p('one-ca.crt'), serverName: 'localhost' });
      try {
        assert.equal((await fresh.call({ domain: 'd', descriptors: [] })).overallCode, 1);
      } finally {
        fresh.close();
      }
    } finally {
      open.close();
      await server.close(100);
    }
  });
});

describe('rate limit gRPC TLS settings', () => {
  it('is off by default and ignores TLS files then', () => {
    assert.equal(loadGrpcTlsSettings(new EnvReader({})), undefined);
    assert.equal(loadGrpcTlsSettings(new EnvReader({ GRPC_SERVER_TLS_CERT: '/nonexistent' })), undefined);
  });

  it('refuses incomplete or unreadable settings with the variable named', () => {
    const cases: [Record<string, string>, string][] = [
      [{ GRPC_SERVER_USE_TLS: 'true' }, 'GRPC_SERVER_TLS_CERT'],
      [{ GRPC_SERVER_USE_TLS: 'true', GRPC_SERVER_TLS_CERT: p('server.crt') }, 'GRPC_SERVER_TLS_KEY'],
      [
        {
          GRPC_SERVER_USE_TLS: 'true',
          GRPC_SERVER_TLS_CERT: p('missing.crt'),
          GRPC_SERVER_TLS_KEY: p('server.key'),
        },
        'GRPC_SERVER_TLS_CERT',
      ],
      [
        {
          GRPC_SERVER_USE_TLS: 'true',
          GRPC_SERVER_TLS_CERT: p('server.crt'),
          GRPC_SERVER_TLS_KEY: p('server.key'),
          GRPC_CLIENT_TLS_CACERT: p('missing-ca.crt'),
        },
        'GRPC_CLIENT_TLS_CACERT',
      ],
      [
        {
          GRPC_SERVER_USE_TLS: 'true',
          GRPC_SERVER_TLS_CERT: p('server.crt'),
          GRPC_SERVER_TLS_KEY: p('server.key'),
          GRPC_CLIENT_TLS_SAN: 'x.test',
        },
        'GRPC_CLIENT_TLS_SAN',
      ],
      [{ GRPC_SERVER_USE_TLS: 'sure' }, 'GRPC_SERVER_USE_TLS'],
      [
        {
          GRPC_SERVER_USE_TLS: 'true',
          GRPC_SERVER_TLS_CERT: p('server.crt'),
          GRPC_SERVER_TLS_KEY: p('server.key'),
          GRPC_SERVER_TLS_RELOAD_INTERVAL: 'often',
        },
        'GRPC_SERVER_TLS_RELOAD_INTERVAL',
      ],
    ];
    for (const [env, variable] of cases) {
      assert.throws(
        () => loadGrpcTlsSettings(new EnvReader(env)),
        (err: SettingsError) => err instanceof SettingsError && err.variable === variable,
        variable,
      );
    }
  });
});
