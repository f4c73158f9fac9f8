// The observe settings on a real service: SLUICE_METRICS=false removes /metrics (probes stay),
// SLUICE_METRICS_AUTH=true asks for a key with the service's read scope, SLUICE_ACCESS_LOG=true
// writes one line per request (route template, status, request id, tenant; never the key), and
// is silent when off. Also: a service's log lines carry "service" once.

import { strict as assert } from 'node:assert';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import { startStreams } from '../../../src/streams/index.js';
import { loadObserveSettings, EnvReader, SettingsError } from '../../../src/core/settings/index.js';
import type { RunningService } from '../../../src/core/service.js';
import { makeTestContext, type TestContext } from '../../helpers/context.js';
import { waitUntil } from '../../helpers/wait.js';
import { startService, type Started } from './services.js';

describe('SLUICE_METRICS and SLUICE_METRICS_AUTH', () => {
  const started: Started[] = [];
  after(async () => {
    for (const s of started) await s.stop();
  });

  it('defaults: metrics on, unauthenticated; access log off', () => {
    assert.deepEqual(loadObserveSettings(new EnvReader({})), {
      metrics: true,
      metricsAuth: false,
      accessLog: false,
    });
    assert.throws(() => loadObserveSettings(new EnvReader({ SLUICE_METRICS: 'maybe' })), SettingsError);
  });

  it('SLUICE_METRICS=false: /metrics is not served; /livez and /readyz are', async () => {
    const s = await startService('automation', { SLUICE_METRICS: 'false' });
    started.push(s);
    assert.equal((await fetch(s.url + '/metrics')).status, 404);
    assert.equal((await fetch(s.url + '/livez')).status, 200);
    assert.equal((await fetch(s.url + '/readyz')).status, 200);
  });

  it('SLUICE_METRICS_AUTH=true: 401 without a key, 200 with one', async () => {
    for (const name of ['ratelimit', 'streams', 'automation'] as const) {
      const s = await startService(name, { SLUICE_METRICS_AUTH: 'true' });
      started.push(s);
      const refused = await fetch(s.url + '/metrics');
      assert.equal(refused.status, 401, name);
      await refused.arrayBuffer();
      const allowed = await fetch(s.url + '/metrics', { headers: { authorization: `Bearer ${s.token}` } });
      assert.equal(allowed.status, 200, name);
      assert.match(await allowed.text(), /sluice_http_requests_total/);
      // The probes stay open.
      assert.equal((await fetch(s.url + '/readyz')).status, 200, name);
    }
  });
});

describe('SLUICE_ACCESS_LOG', () => {
  let test: TestContext | undefined;
  let service: RunningService | undefined;
  after(async () => {
    await service?.close();
    await test?.cleanup();
  });

  let raw: string[] = [];
  async function streamsLogging(
    env: Record<string, string>,
  ): Promise<{ url: string; token: string; lines: any[] }> {
    raw = [];
    test = await makeTestContext({ env: { STREAMS_DEFAULT_PARTITIONS: '1', ...env } });
    const lines: any[] = [];
    // The front-end thread's logger, as frontend.ts makes it: bound to the service's name.
    const log = pino(
      { level: 'info', base: null },
      {
        write: (line: string) => {
          raw.push(line);
          lines.push(JSON.parse(line));
        },
      },
    ).child({
      service: 'streams',
    });
    service = await startStreams({ ...test.ctx, log });
    return { url: service.addresses.http!, token: test.token, lines };
  }

  async function stop(): Promise<void> {
    await service?.close();
    await test?.cleanup();
    service = undefined;
    test = undefined;
  }

  it('on: one line per request with the route template, status, request id and tenant; never the key', async () => {
    const { url, token, lines } = await streamsLogging({ SLUICE_ACCESS_LOG: 'true' });
    const res = await fetch(url + '/streams/topics/no-such-topic', {
      headers: { authorization: `Bearer ${token}`, 'x-request-id': 'req-access-1' },
    });
    assert.equal(res.status, 404);
    await fetch(url + '/livez');
    const access = await waitUntil('two access log lines', () => {
      const found = lines.filter((l) => l.log === 'access');
      return found.length >= 2 ? found : undefined;
    });
    const line = access.find((l) => l.requestId === 'req-access-1');
    assert.ok(line, JSON.stringify(access));
    assert.equal(line.method, 'GET');
    assert.equal(line.route, '/streams/topics/:topic');
    assert.equal(line.status, 404);
    assert.equal(typeof line.durationMs, 'number');
    assert.ok(line.bytes > 0);
    assert.equal(typeof line.tenant, 'string');
    assert.equal(line.service, 'streams');
    const text = raw.join('');
    assert.ok(!text.includes(token), 'the key must never be logged');
    assert.ok(!/authorization/i.test(text));
    // "service" once per line (it used to be bound twice).
    for (const line of raw) assert.ok(line.split('"service"').length <= 2, line);
    await stop();
  });

  it('off (the default): no access lines', async () => {
    const { url, token, lines } = await streamsLogging({});
    await fetch(url + '/streams/topics/no-such-topic', { headers: { authorization: `Bearer ${token}` } });
    assert.equal((await fetch(url + '/livez')).status, 200);
    assert.deepEqual(
      lines.filter((l) => l.log === 'access'),
      [],
    );
    await stop();
  });
});
