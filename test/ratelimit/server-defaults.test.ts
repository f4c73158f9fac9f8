// Out of the box (RUNTIME_ROOT unset: a seeded runtime under the data directory) and the
// configuration health component with no configuration at all.

import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { startRatelimit } from '../../src/ratelimit/index.js';
import { makeTestContext } from '../helpers/context.js';
import { waitUntil } from '../helpers/wait.js';

describe('ratelimit service defaults', () => {
  it('seeds a commented example under the data directory, serves it, and reloads edits to it', async () => {
    const t = await makeTestContext();
    const service = await startRatelimit(t.ctx);
    try {
      const file = join(t.dataDir, 'ratelimit', 'runtime', 'current', 'config', 'example.yaml');
      assert.ok(existsSync(file));
      assert.match(readFileSync(file, 'utf8'), /^# Sluice rate limit configuration/);
      const post = () =>
        fetch(`${service.addresses.http}/json`, {
          method: 'POST',
          body: JSON.stringify({
            domain: 'example',
            descriptors: [{ entries: [{ key: 'path', value: '/login' }] }],
          }),
        });
      const json = (await (await post()).json()) as {
        statuses: { currentLimit: { requestsPerUnit: number } }[];
      };
      assert.equal(json.statuses[0]!.currentLimit.requestsPerUnit, 5);
      writeFileSync(
        file,
        readFileSync(file, 'utf8').replace('requests_per_unit: 5', 'requests_per_unit: 50'),
      );
      await waitUntil(
        'the edited example to be served',
        async () =>
          ((await (await post()).json()) as typeof json).statuses[0]!.currentLimit.requestsPerUnit === 50,
      );
    } finally {
      await service.close();
      await t.cleanup();
    }
  });

  it('without any configuration: /healthcheck 500 (HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED) and calls refused with 400', async () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-rl-empty-'));
    const t = await makeTestContext({
      env: {
        RUNTIME_ROOT: root,
        HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED: 'true',
        FORCE_START_WITHOUT_INITIAL_CONFIG: 'true',
      },
    });
    const service = await startRatelimit(t.ctx);
    try {
      const health = await fetch(`${service.addresses.http}/healthcheck`);
      assert.equal(health.status, 500);
      assert.match(await health.text(), /config/);
      const res = await fetch(`${service.addresses.http}/json`, {
        method: 'POST',
        body: '{"domain":"d","descriptors":[{"entries":[{"key":"a","value":"b"}]}]}',
      });
      assert.equal(res.status, 200); // an empty directory loads zero domains: unknown domain is OK
    } finally {
      await service.close();
      await t.cleanup();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a broken first configuration: calls answer "no rate limit configuration loaded"', async () => {
    const root = mkdtempSync(join(tmpdir(), 'sluice-rl-broken-'));
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(root, 'config'));
    writeFileSync(join(root, 'config', 'bad.yaml'), 'domain: [');
    const t = await makeTestContext({ env: { RUNTIME_ROOT: root, RUNTIME_WATCH_ROOT: 'false' } });
    const service = await startRatelimit(t.ctx);
    try {
      const res = await fetch(`${service.addresses.http}/json`, {
        method: 'POST',
        body: '{"domain":"d","descriptors":[{"entries":[{"key":"a","value":"b"}]}]}',
      });
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { message: string }).message, /no rate limit configuration loaded/);
    } finally {
      await service.close();
      await t.cleanup();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('GRPC_UDS serves gRPC on a unix socket; an oversized /json body is 413', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-rl-uds-'));
    const socket = join(dir, 'rls.sock');
    const t = await makeTestContext({ env: { GRPC_UDS: socket, RATELIMIT_MAX_REQUEST_BYTES: '2048' } });
    const service = await startRatelimit(t.ctx);
    const { createUnaryClient, loadProto, PROTO_FILES, serviceDefinition } =
      await import('../../src/core/grpc/index.js');
    const client = createUnaryClient<object, { overallCode?: number }>(
      `unix:${socket}`,
      serviceDefinition(loadProto([PROTO_FILES.rls]), 'envoy.service.ratelimit.v3.RateLimitService'),
      'ShouldRateLimit',
    );
    try {
      assert.equal(service.addresses.grpc, `unix:${socket}`);
      const res = await client.call({
        domain: 'example',
        descriptors: [{ entries: [{ key: 'path', value: '/healthz' }] }],
      });
      assert.equal(res.overallCode, 1);
      const big = await fetch(`${service.addresses.http}/json`, {
        method: 'POST',
        body: JSON.stringify({ domain: 'x'.repeat(4096), descriptors: [] }),
      });
      assert.equal(big.status, 413);
    } finally {
      client.close();
      await service.close();
      await t.cleanup();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
