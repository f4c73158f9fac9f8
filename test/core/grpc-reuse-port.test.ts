// gRPC servers sharing one port (reusePort): two real servers in this thread listen on the same
// host:port and the kernel hands each new connection to one of them. Runs where the running Node
// supports `reusePort` (22.12+, 23.1+ on Linux); elsewhere the refusal is what is tested.

import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createUnaryClient,
  loadProto,
  PROTO_FILES,
  serviceDefinition,
  startGrpcServer,
  type GrpcClientTlsOptions,
  type GrpcServerTlsOptions,
  type GrpcServiceBinding,
  type RunningGrpcServer,
} from '../../src/core/grpc/index.js';
import { reusePortSupported } from '../../src/core/runtime.js';
import { makeCa } from '../helpers/certs.js';

const rls = serviceDefinition(loadProto([PROTO_FILES.rls]), 'envoy.service.ratelimit.v3.RateLimitService');

interface Answer {
  statuses: Array<{ currentLimit?: { name?: string } }>;
}

// Each server names itself in the answer, so the client sees which one served its connection.
function named(name: string): GrpcServiceBinding {
  return {
    definition: rls,
    implementation: {
      ShouldRateLimit: () => ({ overallCode: 1, statuses: [{ code: 1, currentLimit: { name, unit: 1 } }] }),
    },
  };
}

/** Opens one fresh connection per call (no shared subchannel) until `want` servers answered. */
async function serversAnswering(
  address: string,
  want: number,
  tls?: GrpcClientTlsOptions,
  limit = 64,
): Promise<{ names: Set<string>; connections: number }> {
  const names = new Set<string>();
  let connections = 0;
  // The kernel picks a listener by a hash of the connection's addresses and ports: with two
  // listeners, 64 connections all landing on one has a probability of 2^-63.
  while (names.size < want && connections < limit) {
    const client = createUnaryClient<object, Answer>(address, rls, 'ShouldRateLimit', {
      channelOptions: { 'grpc.use_local_subchannel_pool': 1 },
      ...(tls ? { tls } : {}),
    });
    try {
      const answer = await client.call({
        domain: 'd',
        descriptors: [{ entries: [{ key: 'k', value: 'v' }] }],
      });
      names.add(answer.statuses[0]?.currentLimit?.name ?? '?');
    } finally {
      client.close();
    }
    connections++;
  }
  return { names, connections };
}

describe('gRPC servers sharing one port (reusePort)', () => {
  it('knows which Node releases and platforms take reusePort', () => {
    assert.equal(reusePortSupported('20.19.0', 'linux'), false);
    assert.equal(reusePortSupported('22.11.0', 'linux'), false);
    assert.equal(reusePortSupported('22.12.0', 'linux'), true);
    assert.equal(reusePortSupported('23.0.0', 'linux'), false);
    assert.equal(reusePortSupported('23.1.0', 'linux'), true);
    assert.equal(reusePortSupported('24.21.0', 'linux'), true);
    assert.equal(reusePortSupported('24.21.0', 'darwin'), false);
    assert.equal(reusePortSupported('24.21.0', 'win32'), false);
  });

  it(
    'refuses reusePort where the running Node lacks it',
    { skip: reusePortSupported() && 'this Node has reusePort' },
    async () => {
      await assert.rejects(
        startGrpcServer({ host: '127.0.0.1', port: 0, reusePort: true, services: [named('a')] }),
        /reusePort needs Node 22\.12\+/,
      );
    },
  );

  const unsupported =
    !reusePortSupported() && `Node ${process.version} has no reusePort (22.12+ / 23.1+ on Linux)`;

  describe('on a Node with reusePort', { skip: unsupported }, () => {
    let dir = '';
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'sluice-grpc-reuse-'));
      makeCa(dir, 'ca', { server: 'DNS:localhost,IP:127.0.0.1', client: 'DNS:client.test' });
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('two servers on one port both answer; after one closes, the other serves every connection', async () => {
      const a = await startGrpcServer({
        host: '127.0.0.1',
        port: 0,
        reusePort: true,
        services: [named('a')],
      });
      let b: RunningGrpcServer | undefined;
      try {
        b = await startGrpcServer({
          host: '127.0.0.1',
          port: a.port,
          reusePort: true,
          services: [named('b')],
        });
        assert.equal(b.address, a.address);
        const both = await serversAnswering(a.address, 2);
        assert.deepEqual([...both.names].sort(), ['a', 'b'], `after ${both.connections} connections`);

        await a.close();
        const rest = await serversAnswering(b.address, 2, undefined, 16);
        assert.deepEqual([...rest.names], ['b'], `after ${rest.connections} connections`);
      } finally {
        await a.close();
        await b?.close();
      }
    });

    it('serves mutual TLS through the shared listener', async () => {
      const p = (f: string) => join(dir, f);
      const tls: GrpcServerTlsOptions = {
        certFile: p('server.crt'),
        keyFile: p('server.key'),
        clientCaFile: p('ca-ca.crt'),
        clientSan: 'client.test',
        reloadIntervalMs: 0,
      };
      const a = await startGrpcServer({
        host: '127.0.0.1',
        port: 0,
        reusePort: true,
        tls,
        services: [named('a')],
      });
      const b = await startGrpcServer({
        host: '127.0.0.1',
        port: a.port,
        reusePort: true,
        tls,
        services: [named('b')],
      });
      try {
        const clientTls: GrpcClientTlsOptions = {
          caFile: p('ca-ca.crt'),
          certFile: p('client.crt'),
          keyFile: p('client.key'),
          serverName: 'localhost',
        };
        const both = await serversAnswering(a.address, 2, clientTls);
        assert.deepEqual([...both.names].sort(), ['a', 'b'], `after ${both.connections} connections`);
        // Without a client certificate the handshake is refused, whichever server takes it.
        const anonymous = createUnaryClient<object, Answer>(a.address, rls, 'ShouldRateLimit', {
          channelOptions: { 'grpc.use_local_subchannel_pool': 1 },
          tls: { caFile: p('ca-ca.crt'), serverName: 'localhost' },
        });
        try {
          await assert.rejects(anonymous.call({ domain: 'd', descriptors: [] }, { timeoutMs: 20_000 }));
        } finally {
          anonymous.close();
        }
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
});
