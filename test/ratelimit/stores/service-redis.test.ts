// The whole rate limit service (startRatelimit, as `sluice ratelimit` runs it) on Redis with
// KVSTORE_FAILURE_MODE=closed: counts land in Redis through both transports; with Redis gone a
// decision fails fast with HTTP 500 `store_unavailable` and gRPC UNAVAILABLE, not a wrong answer.

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
} from '../../../src/core/grpc/index.js';
import type { RunningService } from '../../../src/core/service.js';
import { startRatelimit } from '../../../src/ratelimit/index.js';
import { ManualClock } from '../../../src/ratelimit/engine/clock.js';
import { RLS_SERVICE, type WireRequest } from '../../../src/ratelimit/server/grpc.js';
import { makeTestContext, type TestContext } from '../../helpers/context.js';
import { redisAvailable, redisCli, startRedis, type RedisProcess } from '../../helpers/redis.js';

const CONFIG = `
domain: web
descriptors:
  - key: user
    rate_limit: { unit: hour, requests_per_unit: 2 }
`;

describe(
  'rate limit service on Redis (fail-closed)',
  { skip: redisAvailable ? false : 'redis-server is not installed' },
  () => {
    let redis: RedisProcess;
    let t: TestContext;
    let service: RunningService;
    let runtime: string;
    let grpc: UnaryClient<WireRequest, Record<string, any>>;

    before(async () => {
      redis = await startRedis();
      runtime = mkdtempSync(join(tmpdir(), 'sluice-rl-redis-'));
      mkdirSync(join(runtime, 'config'));
      writeFileSync(join(runtime, 'config', 'web.yaml'), CONFIG);
      t = await makeTestContext({
        env: {
          RUNTIME_ROOT: runtime,
          RUNTIME_WATCH_ROOT: 'false',
          WINDOW_ALGORITHM: 'fixed',
          BACKEND_TYPE: 'redis',
          KVSTORE_URL: `127.0.0.1:${redis.port}`,
          KVSTORE_TIMEOUT: '5s',
          KVSTORE_FAILURE_MODE: 'closed',
          CACHE_KEY_PREFIX: 'svc_',
        },
      });
      // The clock stands still: no window edge falls between the hits a test counts.
      service = await startRatelimit(t.ctx, { clock: new ManualClock(Date.now()) });
      grpc = createUnaryClient(
        service.addresses.grpc!,
        serviceDefinition(loadProto([PROTO_FILES.rls]), RLS_SERVICE),
        'ShouldRateLimit',
      );
    });
    after(async () => {
      grpc?.close();
      await service?.close();
      await t?.cleanup();
      await redis?.stop();
      rmSync(runtime, { recursive: true, force: true });
    });

    const post = (user: string) =>
      fetch(`${service.addresses.http}/json`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ domain: 'web', descriptors: [{ entries: [{ key: 'user', value: user }] }] }),
      });

    it('counts in Redis over HTTP and gRPC', async () => {
      assert.equal((await post('ana')).status, 200);
      const viaGrpc = await grpc.call({
        domain: 'web',
        descriptors: [{ entries: [{ key: 'user', value: 'ana' }] }],
      });
      assert.equal(viaGrpc.overallCode, 1); // OK
      assert.equal((await post('ana')).status, 429);
      const keys = redisCli(redis.port, ['KEYS', 'svc_*']).trim().split('\n');
      assert.equal(keys.length, 1);
      assert.match(keys[0]!, /^svc_web_user_ana_\d+$/);
      assert.equal(redisCli(redis.port, ['GET', keys[0]!]).trim(), '3');
    });

    it('dry-runs against Redis: reads the count, writes nothing', async () => {
      const dry = async (user: string) => {
        const res = await fetch(`${service.addresses.http}/json/dry-run`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${t.token}` },
          body: JSON.stringify({ domain: 'web', descriptors: [{ entries: [{ key: 'user', value: user }] }] }),
        });
        assert.equal(res.status, 200);
        return (await res.json()) as { overallCode: string; statuses: { hitsInWindow: number }[] };
      };
      // ana has 3 hits from the test above: the dry run sees them and says over limit.
      const ana = await dry('ana');
      assert.equal(ana.overallCode, 'OVER_LIMIT');
      assert.equal(ana.statuses[0]!.hitsInWindow, 3);
      const before = redisCli(redis.port, ['KEYS', 'svc_*']).trim();
      const carol = await dry('carol');
      assert.equal(carol.overallCode, 'OK');
      assert.equal(carol.statuses[0]!.hitsInWindow, 0);
      assert.equal(redisCli(redis.port, ['KEYS', 'svc_*']).trim(), before, 'no key written');
      const key = before.split('\n')[0]!;
      assert.equal(redisCli(redis.port, ['GET', key]).trim(), '3', 'no count moved');
    });

    it('Redis down: HTTP 500 store_unavailable and gRPC UNAVAILABLE', async () => {
      await redis.kill();
      const res = await post('bob');
      assert.equal(res.status, 500);
      const body = (await res.json()) as { error?: { code?: string } } & Record<string, unknown>;
      assert.match(JSON.stringify(body), /store_unavailable/);
      await assert.rejects(
        grpc.call({ domain: 'web', descriptors: [{ entries: [{ key: 'user', value: 'bob' }] }] }),
        (error: unknown) => error instanceof GrpcError && error.status === GrpcStatus.UNAVAILABLE,
      );
    });
  },
);
