// POST /json bodies read whole through the complete callback (req.readBody): at the configured
// RATELIMIT_MAX_REQUEST_BYTES and one byte over, and — with the limit raised — past the HTTP
// core's chunk high-water mark, framed with Content-Length and chunked.

import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BODY_HIGH_WATER_BYTES } from '../../src/core/http/body.js';
import type { RunningService } from '../../src/core/service.js';
import { startRatelimit } from '../../src/ratelimit/index.js';
import { makeTestContext, type TestContext } from '../helpers/context.js';
import { RawConnection, rawRequest, type Framing } from '../helpers/raw-http.js';
import { fixture } from './helpers.js';

const HW = BODY_HIGH_WATER_BYTES;
const DEFAULT_LIMIT = 64 * 1024; // RATELIMIT_MAX_REQUEST_BYTES default
const RAISED_LIMIT = 4 * HW + 1000;

/** A valid decision request for an unlimited descriptor, padded with spaces to `size` bytes. */
function decisionBody(size: number): Buffer {
  const json = JSON.stringify({
    domain: 'test-domain',
    descriptors: [{ entries: [{ key: 'free', value: 'x' }] }],
  });
  return Buffer.from(json + ' '.repeat(size - json.length));
}

async function startService(env: Record<string, string>) {
  const runtime = mkdtempSync(join(tmpdir(), 'sluice-rl-body-'));
  mkdirSync(join(runtime, 'config'));
  writeFileSync(join(runtime, 'config', 'basic.yaml'), fixture('basic.yaml'));
  const t: TestContext = await makeTestContext({
    env: { RUNTIME_ROOT: runtime, RUNTIME_WATCH_ROOT: 'false', MEMORY_STORE_MAX_KEYS: '1024', ...env },
  });
  const service: RunningService = await startRatelimit(t.ctx);
  return {
    port: Number(new URL(service.addresses.http!).port),
    async close() {
      await service.close();
      await t.cleanup();
      rmSync(runtime, { recursive: true, force: true });
    },
  };
}

async function assertDecided(port: number, size: number, framing: Framing, label: string): Promise<void> {
  const res = await rawRequest(port, '/json', {
    headers: { 'content-type': 'application/json' },
    body: decisionBody(size),
    framing,
  });
  assert.equal(res.status, 200, `${label}: ${res.text}`);
  assert.equal(res.json().overallCode, 'OK', label);
}

async function assertTooLarge(port: number, size: number, framing: Framing): Promise<void> {
  const conn = await RawConnection.open(port);
  try {
    const res = await conn.request('/json', {
      headers: { 'content-type': 'application/json' },
      body: decisionBody(size),
      framing,
      headOnly: framing === 'length',
    });
    assert.equal(res.status, 413, res.text);
    assert.match(res.headers['content-type'] ?? '', /json/);
    assert.equal(res.json().code, 'payload_too_large');
    assert.equal(res.headers['connection'], 'close');
    await conn.closed;
  } finally {
    conn.close();
  }
}

describe('ratelimit POST /json at the request size limit', () => {
  let defaults: Awaited<ReturnType<typeof startService>>;
  let raised: Awaited<ReturnType<typeof startService>>;

  before(async () => {
    defaults = await startService({});
    raised = await startService({ RATELIMIT_MAX_REQUEST_BYTES: String(RAISED_LIMIT) });
  });
  after(async () => {
    await defaults?.close();
    await raised?.close();
  });

  for (const framing of ['length', 'chunked'] as Framing[]) {
    it(`default limit (${framing}): decides at exactly the limit, 413 one byte over`, async () => {
      await assertDecided(defaults.port, DEFAULT_LIMIT, framing, 'at the limit');
      await assertTooLarge(defaults.port, DEFAULT_LIMIT + 1, framing);
    });

    it(`raised limit (${framing}): decides at 1×/2×/4× the high-water mark and the limit, 413 past it`, async () => {
      for (const [label, size] of [
        ['1× high-water', HW],
        ['2× high-water', 2 * HW],
        ['4× high-water', 4 * HW],
        ['the limit', RAISED_LIMIT],
      ] as const)
        await assertDecided(raised.port, size, framing, label);
      await assertTooLarge(raised.port, RAISED_LIMIT + 1, framing);
    });
  }
});
