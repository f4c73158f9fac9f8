// Integration: the service started as the core starts it, over real gRPC, HTTP and debug
// listeners on free ports, with a real runtime directory.

import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  createUnaryClient,
  GrpcError,
  GrpcStatus,
  loadProto,
  PROTO_FILES,
  serviceDefinition,
  type UnaryClient,
} from '../../src/core/grpc/index.js';
import type { RunningService } from '../../src/core/service.js';
import { startRatelimit } from '../../src/ratelimit/index.js';
import { ManualClock } from '../../src/ratelimit/engine/clock.js';
import { runRatelimitClient } from '../../src/ratelimit/client.js';
import { RLS_SERVICE, type WireRequest } from '../../src/ratelimit/server/grpc.js';
import { makeTestContext, type TestContext } from '../helpers/context.js';
import { fixture } from './helpers.js';

describe('ratelimit service over gRPC, HTTP and the debug server', () => {
  let t: TestContext;
  let service: RunningService;
  let runtime: string;
  let grpc: UnaryClient<WireRequest, Record<string, any>>;
  let health: UnaryClient<{ service?: string }, { status?: number }>;
  let http: string;
  let debug: string;

  before(async () => {
    runtime = mkdtempSync(join(tmpdir(), 'sluice-rl-'));
    mkdirSync(join(runtime, 'config'));
    writeFileSync(join(runtime, 'config', 'basic.yaml'), fixture('basic.yaml'));
    t = await makeTestContext({
      env: {
        RUNTIME_ROOT: runtime,
        RUNTIME_WATCH_ROOT: 'false',
        LIMIT_RESPONSE_HEADERS_ENABLED: 'true',
        HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true',
        WINDOW_ALGORITHM: 'fixed',
        MEMORY_STORE_MAX_KEYS: '1024',
        DEBUG_PROFILING_ENABLED: 'true',
      },
    });
    // The clock stands still: no window edge falls between the hits a test counts.
    service = await startRatelimit(t.ctx, { clock: new ManualClock(Date.now()) });
    http = service.addresses.http!;
    debug = service.addresses.debug!;
    const root = loadProto([PROTO_FILES.rls, PROTO_FILES.health]);
    grpc = createUnaryClient(
      service.addresses.grpc!,
      serviceDefinition(root, RLS_SERVICE),
      'ShouldRateLimit',
    );
    health = createUnaryClient(
      service.addresses.grpc!,
      serviceDefinition(root, 'grpc.health.v1.Health'),
      'Check',
    );
  });

  after(async () => {
    grpc?.close();
    health?.close();
    await service?.close();
    await t?.cleanup();
    rmSync(runtime, { recursive: true, force: true });
  });

  const post = (body: string) =>
    fetch(`${http}/json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('gRPC ShouldRateLimit: statuses, limits, headers to add, then OVER_LIMIT', async () => {
    const request = {
      domain: 'test-domain',
      descriptors: [
        { entries: [{ key: 'key1', value: 'grpc' }] },
        { entries: [{ key: 'nothing', value: 'x' }] },
      ],
    };
    const first = await grpc.call(request);
    assert.equal(first.overallCode, 1);
    assert.equal(first.statuses[0].code, 1);
    assert.deepEqual(first.statuses[0].currentLimit, { requestsPerUnit: 3, unit: 2 });
    assert.equal(first.statuses[0].limitRemaining, 2);
    assert.ok(first.statuses[0].durationUntilReset.seconds >= 1);
    assert.deepEqual(first.statuses[1], { code: 1 });
    assert.deepEqual(
      first.responseHeadersToAdd.map((h: { key: string }) => h.key),
      ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    );
    await grpc.call(request);
    await grpc.call(request);
    const over = await grpc.call(request);
    assert.equal(over.overallCode, 2);
    assert.equal(over.statuses[0].code, 2);
  });

  it('gRPC refuses an empty domain and an empty descriptor list with UNKNOWN and the upstream text', async () => {
    await assert.rejects(
      grpc.call({ domain: '', descriptors: [{ entries: [{ key: 'a', value: 'b' }] }] }),
      (e: unknown) =>
        e instanceof GrpcError &&
        e.status === GrpcStatus.UNKNOWN &&
        e.message === 'rate limit domain must not be empty',
    );
    await assert.rejects(
      grpc.call({ domain: 'd', descriptors: [] }),
      /rate limit descriptor list must not be empty/,
    );
  });

  it('gRPC hits_addend wrappers and limit overrides pass through', async () => {
    const r = await grpc.call({
      domain: 'test-domain',
      descriptors: [
        { entries: [{ key: 'key2', value: 'g' }], hitsAddend: { value: 7 } },
        { entries: [{ key: 'x', value: 'y' }], limit: { requestsPerUnit: 9, unit: 3 } },
      ],
    });
    assert.equal(r.statuses[0].limitRemaining, 13);
    assert.deepEqual(r.statuses[1].currentLimit, { requestsPerUnit: 9, unit: 3 });
    assert.equal(r.statuses[1].limitRemaining, 8);
  });

  it('grpc.health.v1 answers SERVING for "" and "ratelimit"', async () => {
    assert.equal((await health.call({ service: '' })).status, 1);
    assert.equal((await health.call({ service: 'ratelimit' })).status, 1);
  });

  it('POST /json: 200 with the proto3 JSON mapping, then 429 over the limit', async () => {
    const body = JSON.stringify({
      domain: 'test-domain',
      descriptors: [
        { entries: [{ key: 'key1', value: 'json' }] },
        { entries: [{ key: 'free', value: 'x' }] },
      ],
    });
    const ok = await post(body);
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type') ?? '', /application\/json/);
    const json = (await ok.json()) as any;
    assert.equal(json.overallCode, 'OK');
    assert.deepEqual(json.statuses[0].currentLimit, { requestsPerUnit: 3, unit: 'MINUTE' });
    assert.equal(json.statuses[0].limitRemaining, 2);
    assert.match(json.statuses[0].durationUntilReset, /^\d+s$/);
    assert.deepEqual(json.statuses[1], { code: 'OK', limitRemaining: 4294967295 });
    assert.equal(json.responseHeadersToAdd.length, 3);
    await post(body);
    await post(body);
    const over = await post(body);
    assert.equal(over.status, 429);
    const overJson = (await over.json()) as any;
    assert.equal(overJson.overallCode, 'OVER_LIMIT');
    assert.equal(overJson.statuses[0].limitRemaining, undefined);
  });

  it('POST /json accepts snake_case names, numeric strings, enum names and numbers', async () => {
    const res = await post(
      JSON.stringify({
        domain: 'test-domain',
        hits_addend: '2',
        descriptors: [
          { entries: [{ key: 'key2', value: 'snake' }] },
          {
            entries: [{ key: 'a', value: 'b' }],
            limit: { requests_per_unit: 5, unit: 'HOUR' },
            hitsAddend: null,
          },
        ],
      }),
    );
    assert.equal(res.status, 200);
    const json = (await res.json()) as any;
    assert.equal(json.statuses[0].limitRemaining, 18);
    assert.deepEqual(json.statuses[1].currentLimit, { requestsPerUnit: 5, unit: 'HOUR' });
  });

  it('POST /json answers 400 with a message for every malformed or refused body, never 5xx', async () => {
    const bad: [string, RegExp][] = [
      ['', /not valid JSON/],
      ['{', /not valid JSON/],
      ['[]', /expected a JSON object/],
      ['"text"', /expected a JSON object/],
      ['{"domain":"d","descriptors":[],"extra":1}', /unknown field "extra"/],
      ['{"domain":5,"descriptors":[]}', /domain: expected a string/],
      ['{"domain":"d","descriptors":{}}', /descriptors: expected an array/],
      [
        '{"domain":"d","descriptors":[{"entries":[{"key":"a","value":1}]}]}',
        /entries\[0\]\.value: expected a string/,
      ],
      ['{"domain":"d","descriptors":[{"entries":[{"key":"a","value":"b","x":1}]}]}', /unknown field "x"/],
      [
        '{"domain":"d","hitsAddend":-1,"descriptors":[{"entries":[{"key":"a","value":"b"}]}]}',
        /hitsAddend: expected an unsigned integer/,
      ],
      ['{"domain":"d","hitsAddend":1.5,"descriptors":[{"entries":[{"key":"a","value":"b"}]}]}', /hitsAddend/],
      [
        '{"domain":"d","descriptors":[{"entries":[],"limit":{"unit":"FORTNIGHT"}}]}',
        /unknown unit "FORTNIGHT"/,
      ],
      [
        '{"domain":"test-domain","descriptors":[{"entries":[{"key":"a","value":"b"}],"limit":{"requestsPerUnit":1,"unit":"UNKNOWN"}}]}',
        /invalid rate limit unit 0/,
      ],
      [
        '{"domain":"","descriptors":[{"entries":[{"key":"a","value":"b"}]}]}',
        /rate limit domain must not be empty/,
      ],
      ['{"domain":"d"}', /rate limit descriptor list must not be empty/],
      ['{"domain":"d","domain":"e","descriptors":[]}', /descriptor list must not be empty/],
    ];
    for (const [body, message] of bad) {
      const res = await post(body);
      assert.equal(res.status, 400, `status for ${body}`);
      const json = (await res.json()) as { code: string; message: string };
      assert.equal(json.code, 'bad_request');
      assert.match(json.message, message, `message for ${body}`);
    }
  });

  it('POST /json refuses a body that is not valid UTF-8 (as protojson) with 400, never a replacement character', async () => {
    const head = Buffer.from('{"domain":"test-domain","descriptors":[{"entries":[{"key":"key3","value":"');
    const tail = Buffer.from('"}]}]}');
    const postBytes = (value: number[]) =>
      fetch(`${http}/json`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: Buffer.concat([head, Buffer.from(value), tail]),
      });
    const invalid: [string, number[]][] = [
      ['stray 0xff', [0x61, 0xff]],
      ['truncated 3-byte sequence', [0xe2, 0x82]],
      ['overlong "/"', [0xc0, 0xaf]],
      ['UTF-8-encoded lone surrogate U+D800', [0xed, 0xa0, 0x80]],
      ['beyond U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
    ];
    for (const [what, bytes] of invalid) {
      const res = await postBytes(bytes);
      assert.equal(res.status, 400, what);
      const json = (await res.json()) as { code: string; message: string; requestId: string };
      assert.equal(json.code, 'bad_request', what);
      assert.match(json.message, /not valid UTF-8/, what);
      assert.ok(json.requestId, what);
    }
    // Well-formed multi-byte text is a descriptor value like any other.
    for (const text of ['é', '€', '😀']) {
      const res = await postBytes([...Buffer.from(text)]);
      assert.equal(res.status, 200, text);
    }
  });

  it('GET /json is 405 and unknown paths are 404', async () => {
    assert.equal((await fetch(`${http}/json`)).status, 405);
    assert.equal((await fetch(`${http}/nope`)).status, 404);
  });

  it('GET /healthcheck: 200 OK while healthy', async () => {
    const res = await fetch(`${http}/healthcheck`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'OK');
  });

  it('debug server: endpoint list, loaded rules, statistics, profiles', async () => {
    const index = await (await fetch(`${debug}/`)).text();
    assert.match(index, /^\/debug\/pprof\/: /m);
    assert.match(index, /^\/rlconfig: /m);
    assert.match(index, /^\/stats: /m);
    const rules = await (await fetch(`${debug}/rlconfig`)).text();
    assert.match(
      rules,
      /^test-domain\.key1: unit=MINUTE requests_per_unit=3, shadow_mode: false, quota_mode: false$/m,
    );
    const stats = await (await fetch(`${debug}/stats`)).text();
    assert.match(stats, /^ratelimit\.service\.rate_limit\.test-domain\.key1\.total_hits: \d+$/m);
    assert.match(stats, /^ratelimit\.service\.config_load_success: 1$/m);
    assert.match(stats, /^ratelimit_server\.ShouldRateLimit\.total_requests: \d+$/m);
    assert.match(stats, /^ratelimit\.service\.call\.should_rate_limit\.service_error: \d+$/m);
    assert.match(stats, /^ratelimit\.memory_store\.capacity: 1024$/m);
    const profile = await fetch(`${debug}/debug/pprof/profile?seconds=1`);
    assert.equal(profile.status, 200);
    const parsed = (await profile.json()) as { nodes: unknown[] };
    assert.ok(Array.isArray(parsed.nodes));
    assert.equal((await fetch(`${debug}/debug/pprof/profile?seconds=abc`)).status, 400);
    assert.equal((await fetch(`${debug}/debug/pprof/profile?seconds=0`)).status, 400);
    const heap = await fetch(`${debug}/debug/pprof/heap`);
    assert.equal(heap.status, 200);
    assert.ok(((await heap.json()) as { snapshot?: unknown }).snapshot);
  });

  it('the command-line client prints the response and fails clearly', async () => {
    let out = '';
    let err = '';
    const io = { out: (s: string) => (out += s), err: (s: string) => (err += s) };
    assert.equal(
      await runRatelimitClient(
        [
          '-dial_string',
          service.addresses.grpc!,
          '-domain',
          'test-domain',
          '-descriptors',
          'key1=cli',
          '-descriptors=key2=a',
        ],
        io,
      ),
      0,
    );
    assert.match(
      out,
      /response: \{"overallCode":"OK","statuses":\[\{"code":"OK","currentLimit":\{"requestsPerUnit":3,"unit":"MINUTE"\},"limitRemaining":2/,
    );
    assert.equal(
      await runRatelimitClient(
        ['-dial_string', service.addresses.grpc!, '-domain', '', '-descriptors', 'a=b'],
        io,
      ),
      1,
    );
    assert.match(err, /UNKNOWN: rate limit domain must not be empty/);
    assert.equal(await runRatelimitClient(['-descriptors', 'novalue'], io), 2);
    assert.equal(await runRatelimitClient(['-bogus', 'x'], io), 2);
    assert.match(err, /flag provided but not defined: -bogus/);
  });

  it('SIGTERM (beginShutdown) turns /healthcheck and gRPC health red', async () => {
    service.beginShutdown!();
    const res = await fetch(`${http}/healthcheck`);
    assert.equal(res.status, 500);
    assert.match(await res.text(), /sigterm/);
    assert.equal((await health.call({ service: 'ratelimit' })).status, 2);
  });
});
