// gRPC core: real servers on free ports and unix sockets, real grpc-js clients, certificates made
// with the openssl CLI, and raw HTTP/2 sessions where the test needs to see the wire.

import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import * as http2 from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  codecFor,
  createUnaryClient,
  GrpcError,
  GrpcStatus,
  grpcFrame,
  healthService,
  loadProto,
  openBidiStream,
  openClientStream,
  openServerStream,
  type BidiStream,
  type ServerStream,
  PROTO_FILES,
  serviceDefinition,
  startGrpcServer,
  type GrpcServiceBinding,
  type RunningGrpcServer,
} from '../../src/core/grpc/index.js';
import { HealthRegistry } from '../../src/core/health.js';
import { makeCa } from '../helpers/certs.js';
import { pino } from 'pino';
import { HANG_MS, waitUntil } from '../helpers/wait.js';

const rlsRoot = loadProto([PROTO_FILES.rls]);
const rls = serviceDefinition(rlsRoot, 'envoy.service.ratelimit.v3.RateLimitService');
const healthDef = serviceDefinition(loadProto([PROTO_FILES.health]), 'grpc.health.v1.Health');

interface Entry {
  key?: string;
  value?: string;
}
interface Descriptor {
  entries: Entry[];
  limit?: { requestsPerUnit?: number; unit?: number };
  hitsAddend?: { value?: number };
}
interface RlsRequest {
  domain?: string;
  descriptors: Descriptor[];
  hitsAddend?: number;
}
interface RlsResponse {
  overallCode?: number;
  statuses: Array<{
    code?: number;
    currentLimit?: { name?: string; requestsPerUnit?: number; unit?: number };
    limitRemaining?: number;
    durationUntilReset?: { seconds?: number; nanos?: number };
  }>;
  responseHeadersToAdd: Array<{ key?: string; value?: string }>;
}

// A small but real implementation: echoes what it decoded back through the response so the
// test sees every field survive the codecs in both directions.
function echoRls(): GrpcServiceBinding {
  return {
    definition: rls,
    implementation: {
      ShouldRateLimit(req: RlsRequest) {
        if (req.domain === 'boom') throw new Error('handler bug');
        if (!req.domain) throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, 'domain must not be empty');
        return {
          overallCode: req.domain === 'over' ? 'OVER_LIMIT' : 1,
          statuses: req.descriptors.map((d) => ({
            code: 1,
            currentLimit: {
              name: d.entries.map((e) => `${e.key}=${e.value}`).join('|'),
              requestsPerUnit: d.limit?.requestsPerUnit ?? 10,
              unit: 'WEEK',
            },
            limitRemaining: d.hitsAddend?.value ?? req.hitsAddend ?? 0,
            durationUntilReset: { seconds: 7, nanos: 5 },
          })),
          responseHeadersToAdd: [{ key: 'x-domain', value: req.domain }],
        };
      },
    },
  };
}

async function waitForGoaway(session: http2.ClientHttp2Session): Promise<number> {
  return new Promise((resolve) => session.once('goaway', (code: number) => resolve(code)));
}

/** One raw gRPC call over node:http2, for inputs a well-behaved client cannot send. */
async function rawCall(
  url: string,
  path: string,
  body: Buffer,
): Promise<{ status: string | undefined; message: string | undefined }> {
  const session = http2.connect(url);
  try {
    return await new Promise((resolve, reject) => {
      const req = session.request({
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
      });
      let headers: http2.IncomingHttpHeaders = {};
      req.on('response', (h: http2.IncomingHttpHeaders) => (headers = h));
      req.on('trailers', (t: http2.IncomingHttpHeaders) =>
        resolve({ status: t['grpc-status'] as string, message: t['grpc-message'] as string }),
      );
      req.on('end', () =>
        resolve({ status: headers['grpc-status'] as string, message: headers['grpc-message'] as string }),
      );
      req.on('error', reject);
      req.resume();
      req.end(body);
    });
  } finally {
    session.close();
  }
}

describe('gRPC core: plain TCP and unix socket', () => {
  let server: RunningGrpcServer;
  let dir: string;
  let serving: 'SERVING' | 'NOT_SERVING' = 'SERVING';
  const health = healthService(() => serving, {
    services: ['envoy.service.ratelimit.v3.RateLimitService'],
    pollMs: 60_000,
  });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-grpc-'));
    server = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [echoRls(), health.binding] });
  });
  after(async () => {
    await server.close(1000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('binds a free port and round-trips a request through the protobufjs codecs', async () => {
    assert.ok(server.port > 0);
    assert.equal(server.address, `127.0.0.1:${server.port}`);
    const client = createUnaryClient<unknown, RlsResponse>(server.address, rls, 'ShouldRateLimit');
    try {
      const res = await client.call({
        domain: 'envoy',
        descriptors: [
          {
            entries: [{ key: 'path', value: '/a' }],
            limit: { requestsPerUnit: 42, unit: 'MINUTE' },
            hitsAddend: { value: 5 },
          },
          {
            entries: [
              { key: 'user', value: 'u1' },
              { key: 'op', value: 'get' },
            ],
          },
        ],
        hitsAddend: 3,
      });
      assert.equal(res.overallCode, 1);
      assert.equal(res.statuses.length, 2);
      assert.deepEqual(res.statuses[0], {
        code: 1,
        currentLimit: { name: 'path=/a', requestsPerUnit: 42, unit: 7 },
        limitRemaining: 5, // the descriptor's UInt64Value decoded as a plain number
        durationUntilReset: { seconds: 7, nanos: 5 },
      });
      assert.equal(res.statuses[1]?.currentLimit?.name, 'user=u1|op=get');
      assert.equal(res.statuses[1]?.limitRemaining, 3);
      assert.deepEqual(res.responseHeadersToAdd, [{ key: 'x-domain', value: 'envoy' }]);
      const over = await client.call({ domain: 'over', descriptors: [] });
      assert.equal(over.overallCode, 2, 'enum given by name on the server side');
      assert.deepEqual(over.statuses, [], 'repeated fields decode as arrays even when empty');
    } finally {
      client.close();
    }
  });

  it('answers a GrpcError with its code and any other throw with INTERNAL', async () => {
    const client = createUnaryClient(server.address, rls, 'ShouldRateLimit');
    try {
      await assert.rejects(client.call({ domain: '', descriptors: [] }), (err: GrpcError) => {
        assert.equal(err.status, GrpcStatus.INVALID_ARGUMENT);
        assert.match(err.message, /domain must not be empty/);
        return true;
      });
      await assert.rejects(client.call({ domain: 'boom', descriptors: [] }), (err: GrpcError) => {
        assert.equal(err.status, GrpcStatus.INTERNAL);
        assert.equal(err.message, 'internal error', 'no stack or message leaks to the client');
        return true;
      });
    } finally {
      client.close();
    }
  });

  it('rejects a request that is not valid protobuf without crashing', async () => {
    const garbage = grpcFrame(Buffer.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01]));
    const res = await rawCall(
      `http://${server.address}`,
      '/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit',
      garbage,
    );
    assert.notEqual(res.status, undefined);
    assert.notEqual(res.status, '0');
    // Still serving afterwards.
    const client = createUnaryClient<unknown, RlsResponse>(server.address, rls, 'ShouldRateLimit');
    try {
      assert.equal((await client.call({ domain: 'envoy', descriptors: [] })).overallCode, 1);
    } finally {
      client.close();
    }
  });

  it('answers an unknown method with UNIMPLEMENTED', async () => {
    const res = await rawCall(
      `http://${server.address}`,
      '/envoy.service.ratelimit.v3.RateLimitService/Nope',
      grpcFrame(Buffer.alloc(0)),
    );
    assert.equal(res.status, String(GrpcStatus.UNIMPLEMENTED));
  });

  it('serves grpc.health.v1 Check from the callback, NOT_FOUND for unknown services', async () => {
    const check = createUnaryClient<{ service?: string }, { status?: number }>(
      server.address,
      healthDef,
      'Check',
    );
    try {
      assert.deepEqual(await check.call({}), { status: 1 });
      assert.deepEqual(await check.call({ service: 'envoy.service.ratelimit.v3.RateLimitService' }), {
        status: 1,
      });
      serving = 'NOT_SERVING';
      assert.deepEqual(await check.call({ service: '' }), { status: 2 });
      serving = 'SERVING';
      await assert.rejects(
        check.call({ service: 'other.Service' }),
        (err: GrpcError) => err.status === GrpcStatus.NOT_FOUND,
      );
    } finally {
      check.close();
    }
  });

  it('streams health changes to Watch when notified', async () => {
    const stream = openServerStream<{ service?: string }, { status?: number }>(
      server.address,
      healthDef,
      'Watch',
      {},
    );
    const seen: number[] = [];
    try {
      for await (const msg of stream) {
        seen.push(msg.status ?? 0);
        if (seen.length === 1) {
          serving = 'NOT_SERVING';
          health.notify();
        } else if (seen.length === 2) {
          serving = 'SERVING';
          health.notify();
        } else break;
      }
    } finally {
      stream.close();
      serving = 'SERVING';
    }
    assert.deepEqual(seen, [1, 2, 1]);
  });

  it('Watch follows a HealthRegistry through its change listener', async () => {
    const registry = new HealthRegistry();
    registry.register('cache', true);
    const fromRegistry = healthService(() => (registry.isHealthy() ? 'SERVING' : 'NOT_SERVING'), {
      pollMs: 60_000,
      onChange: (listener) => registry.onChange(listener),
    });
    const srv = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [fromRegistry.binding] });
    const stream = openServerStream<{ service?: string }, { status?: number }>(
      srv.address,
      healthDef,
      'Watch',
      {},
    );
    const seen: number[] = [];
    try {
      for await (const msg of stream) {
        seen.push(msg.status ?? 0);
        if (seen.length === 1) registry.set('cache', false);
        else if (seen.length === 2) registry.set('cache', true);
        else break;
      }
    } finally {
      stream.close();
      await srv.close(1000);
    }
    assert.deepEqual(seen, [1, 2, 1]);
  });

  it('Watch on an unknown service reports SERVICE_UNKNOWN instead of failing', async () => {
    const stream = openServerStream<{ service?: string }, { status?: number }>(
      server.address,
      healthDef,
      'Watch',
      { service: 'nope' },
    );
    try {
      for await (const msg of stream) {
        assert.equal(msg.status, 3);
        break;
      }
    } finally {
      stream.close();
    }
  });

  it('listens on a unix socket, replacing a stale socket file, and removes it on close', async () => {
    const path = join(dir, 'rls.sock');
    // A socket file left behind by a killed process: a child listens, then gets SIGKILL.
    const child = spawn(
      process.execPath,
      ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    assert.ok(lstatSync(path).isSocket(), 'stale socket file exists');
    const uds = await startGrpcServer({ uds: path, services: [echoRls()] });
    assert.equal(uds.address, `unix:${path}`);
    assert.equal(uds.port, 0);
    const client = createUnaryClient<unknown, RlsResponse>(uds.address, rls, 'ShouldRateLimit');
    try {
      assert.equal((await client.call({ domain: 'envoy', descriptors: [] })).overallCode, 1);
    } finally {
      client.close();
      await uds.close(1000);
    }
    assert.equal(existsSync(path), false, 'socket file removed on close');
    await assert.rejects(startGrpcServer({ uds: join(dir, 'missing-dir', 'x.sock'), services: [] }));
  });

  it('fails the start when the port is taken', async () => {
    await assert.rejects(
      startGrpcServer({ host: '127.0.0.1', port: server.port, services: [] }),
      /EADDRINUSE/,
    );
  });

  it('refuses an implementation for a method the service does not have', async () => {
    await assert.rejects(
      startGrpcServer({
        port: 0,
        host: '127.0.0.1',
        services: [{ definition: rls, implementation: { ShouldRatelimit: () => ({}) } }],
      }),
      /has no method ShouldRatelimit/,
    );
  });

  it('codecs keep an explicit 0 in a wrapper apart from an absent one', () => {
    const codec = codecFor<RlsRequest>(rlsRoot.lookupType('envoy.service.ratelimit.v3.RateLimitRequest'));
    const zero = codec.deserialize(
      codec.serialize({ domain: 'd', descriptors: [{ entries: [], hitsAddend: { value: 0 } }] }),
    );
    const absent = codec.deserialize(codec.serialize({ domain: 'd', descriptors: [{ entries: [] }] }));
    assert.deepEqual(zero.descriptors[0]?.hitsAddend, {});
    assert.equal(absent.descriptors[0]?.hitsAddend, undefined);
    assert.equal(absent.hitsAddend, undefined);
  });
});

describe('gRPC core: bidirectional streams (ADS)', () => {
  const adsRoot = loadProto([PROTO_FILES.ads, PROTO_FILES.rlsConfig]);
  const ads = serviceDefinition(adsRoot, 'envoy.service.discovery.v3.AggregatedDiscoveryService');
  const configType = adsRoot.lookupType('ratelimit.config.ratelimit.v3.RateLimitConfig');
  const TYPE_URL = 'type.googleapis.com/ratelimit.config.ratelimit.v3.RateLimitConfig';

  interface DiscoveryRequest {
    versionInfo?: string;
    node?: { id?: string };
    typeUrl?: string;
    responseNonce?: string;
    errorDetail?: { code?: number; message?: string };
  }
  interface DiscoveryResponse {
    versionInfo?: string;
    typeUrl?: string;
    nonce?: string;
    // google.protobuf.* types come from protobufjs's bundled copies and keep snake_case names.
    resources: Array<{ type_url?: string; value?: Buffer }>;
  }

  it('carries a state-of-the-world exchange with Any resources both ways', async () => {
    const acks: DiscoveryRequest[] = [];
    const server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [
        {
          definition: ads,
          implementation: {
            async StreamAggregatedResources(stream: BidiStream<DiscoveryRequest, DiscoveryResponse>) {
              let version = 0;
              for await (const req of stream) {
                acks.push(req);
                if (req.errorDetail)
                  throw new GrpcError(GrpcStatus.ABORTED, `client rejected: ${req.errorDetail.message}`);
                version++;
                const config = configType
                  .encode(
                    configType.fromObject({
                      name: `cfg-${version}`,
                      domain: 'envoy',
                      descriptors: [
                        { key: 'k', value: 'v', rateLimit: { unit: 'WEEK', requestsPerUnit: version } },
                      ],
                    }),
                  )
                  .finish();
                stream.write({
                  versionInfo: String(version),
                  typeUrl: TYPE_URL,
                  nonce: `n${version}`,
                  resources: [{ type_url: TYPE_URL, value: Buffer.from(config) }],
                });
              }
              stream.end();
            },
          },
        },
      ],
    });
    const stream = openBidiStream<DiscoveryRequest, DiscoveryResponse>(
      server.address,
      ads,
      'StreamAggregatedResources',
    );
    try {
      stream.write({ node: { id: 'sluice-1' }, typeUrl: TYPE_URL });
      const seen: Array<{ version: string; limit: number; unit: number }> = [];
      // The NACK after the second response makes the server end the stream with an error,
      // which the client's loop sees.
      await assert.rejects(
        (async () => {
          for await (const res of stream) {
            const resource = res.resources[0]!;
            assert.equal(resource.type_url, TYPE_URL);
            const decoded = configType.toObject(configType.decode(resource.value!), { enums: Number }) as {
              descriptors: Array<{ rateLimit: { requestsPerUnit: number; unit: number } }>;
            };
            seen.push({
              version: res.versionInfo ?? '',
              limit: decoded.descriptors[0]!.rateLimit.requestsPerUnit,
              unit: decoded.descriptors[0]!.rateLimit.unit,
            });
            if (seen.length === 1)
              stream.write({ versionInfo: res.versionInfo!, responseNonce: res.nonce!, typeUrl: TYPE_URL });
            else
              stream.write({
                responseNonce: res.nonce!,
                typeUrl: TYPE_URL,
                errorDetail: { code: 3, message: 'bad config' },
              });
          }
        })(),
        (err: GrpcError) => err.status === GrpcStatus.ABORTED && /bad config/.test(err.message),
      );
      assert.deepEqual(seen, [
        { version: '1', limit: 1, unit: 7 },
        { version: '2', limit: 2, unit: 7 },
      ]);
      assert.equal(acks[0]?.node?.id, 'sluice-1');
      assert.equal(acks[1]?.responseNonce, 'n1');
    } finally {
      stream.close();
      await server.close(1000);
    }
  });
});

describe('gRPC core: streaming handler kinds', () => {
  // A throwaway service defined in a temp .proto, to exercise client streaming too.
  let dir: string;
  let server: RunningGrpcServer;
  let sums: ReturnType<typeof serviceDefinition>;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-grpc-proto-'));
    const file = join(dir, 'sum.proto');
    writeFileSync(
      file,
      'syntax = "proto3"; package t; message N { int64 v = 1; } service Sums { rpc Add(stream N) returns (N); rpc Count(N) returns (stream N); }',
    );
    sums = serviceDefinition(loadProto([file]), 't.Sums');
    server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [
        {
          definition: sums,
          implementation: {
            async Add(requests: AsyncIterable<{ v?: number }>) {
              let total = 0;
              for await (const n of requests) {
                if (n.v === 13) throw new GrpcError(GrpcStatus.OUT_OF_RANGE, 'unlucky');
                total += n.v ?? 0;
              }
              return { v: total };
            },
            async Count(request: { v?: number }, stream: ServerStream<{ v: number }>) {
              for (let i = 1; i <= (request.v ?? 0); i++) if (!stream.write({ v: i })) await stream.drain();
              stream.end();
            },
          },
        },
      ],
    });
  });
  after(async () => {
    await server.close(1000);
    rmSync(dir, { recursive: true, force: true });
  });

  it('client streaming: sums what the client sends; 64-bit values arrive as numbers', async () => {
    const send = async (values: Array<{ v?: number }>): Promise<{ v?: number }> => {
      const call = openClientStream<{ v?: number }, { v?: number }>(server.address, sums, 'Add');
      try {
        for (const v of values) call.write(v);
        return await call.finish();
      } finally {
        call.close();
      }
    };
    assert.deepEqual(await send([{ v: 2 ** 40 }, { v: 2 }, {}]), { v: 2 ** 40 + 2 });
    await assert.rejects(send([{ v: 1 }, { v: 13 }, { v: 5 }]), (err: GrpcError) => {
      assert.equal(err.status, GrpcStatus.OUT_OF_RANGE);
      assert.equal(err.message, 'unlucky');
      return true;
    });
  });

  it('server streaming: writes many messages with backpressure', async () => {
    const stream = openServerStream<{ v: number }, { v?: number }>(server.address, sums, 'Count', {
      v: 2000,
    });
    let count = 0;
    let last = 0;
    for await (const n of stream) {
      count++;
      last = n.v ?? 0;
    }
    stream.close();
    assert.equal(count, 2000);
    assert.equal(last, 2000);
  });
});

describe('gRPC core: close and connection age', () => {
  it('close lets an in-flight call finish', async () => {
    let release!: () => void;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [
        {
          definition: rls,
          implementation: {
            ShouldRateLimit: () =>
              new Promise((resolve) => {
                release = () => resolve({ overallCode: 1 });
                started();
              }),
          },
        },
      ],
    });
    const client = createUnaryClient<unknown, RlsResponse>(server.address, rls, 'ShouldRateLimit');
    try {
      const pending = client.call({ domain: 'slow', descriptors: [] });
      await running;
      const closed = server.close(10_000);
      release();
      assert.equal((await pending).overallCode, 1);
      await closed;
    } finally {
      client.close();
    }
  });

  it('close cuts calls that outlive the grace period', async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    const server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      services: [
        { definition: rls, implementation: { ShouldRateLimit: () => new Promise(() => started()) } },
      ],
    });
    const client = createUnaryClient(server.address, rls, 'ShouldRateLimit');
    try {
      const outcome = client.call({ domain: 'stuck', descriptors: [] }).then(
        () => undefined,
        (err: GrpcError) => err,
      );
      await running;
      await server.close(50);
      const err = await outcome;
      assert.ok(err instanceof GrpcError, 'the stuck call failed instead of hanging');
      assert.notEqual(err.status, GrpcStatus.OK);
    } finally {
      client.close();
    }
  });

  it('max connection age ends the connection with a GOAWAY', async () => {
    const server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      maxConnectionAgeMs: 200,
      maxConnectionAgeGraceMs: 200,
      services: [echoRls()],
    });
    const session = http2.connect(`http://${server.address}`);
    try {
      const goaway = waitForGoaway(session);
      const closed = new Promise<void>((resolve) => session.once('close', () => resolve()));
      assert.equal(await goaway, http2.constants.NGHTTP2_NO_ERROR);
      await closed;
    } finally {
      session.destroy();
      await server.close(1000);
    }
  });
});

// ---- TLS ----------------------------------------------------------------------------------

describe('gRPC core: TLS and mutual TLS', () => {
  let dir: string;
  const p = (f: string): string => join(dir, f);

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-grpc-tls-'));
    makeCa(dir, 'one', {
      server: 'DNS:localhost,IP:127.0.0.1',
      client: 'DNS:client.test',
      stranger: 'DNS:stranger.test',
    });
    makeCa(dir, 'two', { server2: 'DNS:localhost,IP:127.0.0.1' });
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('serves TLS; a plaintext client cannot call', async () => {
    const server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      tls: { certFile: p('server.crt'), keyFile: p('server.key'), reloadIntervalMs: 0 },
      services: [echoRls()],
    });
    const secure = createUnaryClient<unknown, RlsResponse>(server.address, rls, 'ShouldRateLimit', {
      tls: { caFile: p('one-ca.crt'), serverName: 'localhost' },
    });
    const plain = createUnaryClient(server.address, rls, 'ShouldRateLimit');
    try {
      assert.equal((await secure.call({ domain: 'tls', descriptors: [] })).overallCode, 1);
      await assert.rejects(
        plain.call({ domain: 'tls', descriptors: [] }, { timeoutMs: 3000 }),
        (err: GrpcError) =>
          err.status === GrpcStatus.UNAVAILABLE || err.status === GrpcStatus.DEADLINE_EXCEEDED,
      );
    } finally {
      secure.close();
      plain.close();
      await server.close(1000);
    }
  });

  it('mutual TLS refuses a client without a certificate and accepts one signed by the client CA', async () => {
    const server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      tls: { certFile: p('server.crt'), keyFile: p('server.key'), clientCaFile: p('one-ca.crt') },
      services: [echoRls()],
    });
    const noCert = createUnaryClient(server.address, rls, 'ShouldRateLimit', {
      tls: { caFile: p('one-ca.crt'), serverName: 'localhost' },
    });
    const withCert = createUnaryClient<unknown, RlsResponse>(server.address, rls, 'ShouldRateLimit', {
      tls: {
        caFile: p('one-ca.crt'),
        serverName: 'localhost',
        certFile: p('client.crt'),
        keyFile: p('client.key'),
      },
    });
    const foreignCert = createUnaryClient(server.address, rls, 'ShouldRateLimit', {
      tls: {
        caFile: p('one-ca.crt'),
        serverName: 'localhost',
        certFile: p('server2.crt'),
        keyFile: p('server2.key'),
      },
    });
    try {
      await assert.rejects(
        noCert.call({ domain: 'm', descriptors: [] }, { timeoutMs: HANG_MS }),
        (err: GrpcError) => err.status === GrpcStatus.UNAVAILABLE,
      );
      await assert.rejects(
        foreignCert.call({ domain: 'm', descriptors: [] }, { timeoutMs: HANG_MS }),
        (err: GrpcError) => err.status === GrpcStatus.UNAVAILABLE,
      );
      assert.equal((await withCert.call({ domain: 'm', descriptors: [] })).overallCode, 1);
    } finally {
      noCert.close();
      withCert.close();
      foreignCert.close();
      await server.close(1000);
    }
  });

  it('checks the client certificate SAN when one is configured', async () => {
    const server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      tls: {
        certFile: p('server.crt'),
        keyFile: p('server.key'),
        clientCaFile: p('one-ca.crt'),
        clientSan: 'client.test',
      },
      services: [echoRls()],
    });
    const good = createUnaryClient<unknown, RlsResponse>(server.address, rls, 'ShouldRateLimit', {
      tls: {
        caFile: p('one-ca.crt'),
        serverName: 'localhost',
        certFile: p('client.crt'),
        keyFile: p('client.key'),
      },
    });
    const wrongName = createUnaryClient(server.address, rls, 'ShouldRateLimit', {
      tls: {
        caFile: p('one-ca.crt'),
        serverName: 'localhost',
        certFile: p('stranger.crt'),
        keyFile: p('stranger.key'),
      },
    });
    try {
      assert.equal((await good.call({ domain: 'san', descriptors: [] })).overallCode, 1);
      await assert.rejects(wrongName.call({ domain: 'san', descriptors: [] }), (err: GrpcError) => {
        assert.equal(err.status, GrpcStatus.UNAUTHENTICATED);
        assert.match(err.message, /client\.test/);
        return true;
      });
    } finally {
      good.close();
      wrongName.close();
      await server.close(1000);
    }
  });

  it('picks up a replaced certificate without a restart, keeping the old one through a half-done rotation', async () => {
    const live = mkdtempSync(join(dir, 'live-'));
    const copy = (from: string, to: string): void => writeFileSync(join(live, to), readFileSync(p(from)));
    copy('server.crt', 'tls.crt');
    copy('server.key', 'tls.key');
    // Captures the server's warnings so the test can wait for the reload that saw a bad pair.
    let sawSkippedReload!: () => void;
    const skipped = new Promise<void>((resolve) => (sawSkippedReload = resolve));
    const log = pino(
      { level: 'warn' },
      {
        write(line: string) {
          if (line.includes('gRPC TLS reload skipped')) sawSkippedReload();
        },
      },
    );
    const server = await startGrpcServer({
      host: '127.0.0.1',
      port: 0,
      tls: { certFile: join(live, 'tls.crt'), keyFile: join(live, 'tls.key'), reloadIntervalMs: 100 },
      services: [echoRls()],
      log,
    });
    const callWith = async (caFile: string): Promise<boolean> => {
      // A fresh client is a fresh connection, so it sees the certificate currently served.
      const client = createUnaryClient<unknown, RlsResponse>(server.address, rls, 'ShouldRateLimit', {
        tls: { caFile: p(caFile), serverName: 'localhost' },
      });
      try {
        // A refused handshake fails at once; the deadline only bounds a hang, so a slow
        // machine is never mistaken for a refusal.
        return (
          (await client.call({ domain: 'r', descriptors: [] }, { timeoutMs: HANG_MS })).overallCode === 1
        );
      } catch {
        return false;
      } finally {
        client.close();
      }
    };
    try {
      assert.ok(await callWith('one-ca.crt'));
      // Half a rotation: the new certificate next to the old key is not a usable pair.
      copy('server2.crt', 'tls.crt');
      await skipped;
      assert.ok(await callWith('one-ca.crt'), 'the previous certificate is still served');
      copy('server2.key', 'tls.key');
      await waitUntil('a client trusting only the new CA to get through', () => callWith('two-ca.crt'), {
        intervalMs: 100,
      });
    } finally {
      await server.close(1000);
    }
  });

  it('a failed TLS start leaves nothing running in the process', async () => {
    const script = join(dir, 'failed-start.mts');
    writeFileSync(
      script,
      `import { startGrpcServer } from ${JSON.stringify(join(import.meta.dirname, '..', '..', 'src', 'core', 'grpc', 'index.ts'))};
const tls = { certFile: ${JSON.stringify(p('server.crt'))}, keyFile: ${JSON.stringify(p('server.key'))}, clientCaFile: ${JSON.stringify(p('one-ca.crt'))}, reloadIntervalMs: 50 };
const a = await startGrpcServer({ host: '127.0.0.1', port: 0, services: [] });
await startGrpcServer({ host: '127.0.0.1', port: a.port, tls, services: [] }).then(() => process.exit(3), () => undefined);
await a.close(100);
console.log('closed');
`,
    );
    // The child must end by itself (no timer or socket left); a generous kill guard only
    // prevents a hang from stalling the suite.
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: join(import.meta.dirname, '..', '..'),
      env: { ...process.env, LOG_LEVEL: 'silent' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) =>
      child.once('exit', (c, s) => resolve([c, s])),
    );
    clearTimeout(guard);
    assert.equal(signal, null, 'exited by itself');
    assert.equal(code, 0);
    assert.match(out, /closed/);
  });

  it('stops the start with a message naming a missing certificate file', async () => {
    await assert.rejects(
      startGrpcServer({ port: 0, tls: { certFile: p('nope.crt'), keyFile: p('server.key') }, services: [] }),
      /certificate .*nope\.crt/,
    );
    await assert.rejects(
      startGrpcServer({
        port: 0,
        tls: { certFile: p('server.crt'), keyFile: p('server.key'), clientSan: 'x' },
        services: [],
      }),
      /client CA/,
    );
  });
});
