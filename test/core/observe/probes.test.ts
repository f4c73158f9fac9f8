// /livez, /readyz and /metrics on each service's own HTTP port, on both HTTP transports: live
// and ready while serving, the metrics parse as Prometheus text and name the request metrics
// with route templates, and readiness turns 503 "draining" once the service's shutdown began.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { describeEachTransport } from '../../helpers/transports.js';
import { familyNames, parseProm, sampleValue } from './prom-text.js';
import { getJson, SERVICES, startService, type Started } from './services.js';

const HTTP_METRICS = [
  'sluice_http_requests_total',
  'sluice_http_request_duration_seconds',
  'sluice_http_requests_in_flight',
  'sluice_http_websockets_open',
];

const SERVICE_METRICS: Record<string, string[]> = {
  ratelimit: [],
  streams: [
    'sluice_streams_records_produced_total',
    'sluice_streams_bytes_produced_total',
    'sluice_streams_records_fetched_total',
    'sluice_streams_bytes_fetched_total',
    'sluice_streams_produce_duration_seconds',
    'sluice_streams_consumer_lag',
    'sluice_streams_jetstream_publish_duration_seconds',
    'sluice_streams_jetstream_reconnects_total',
  ],
  automation: [
    'sluice_automation_runs_started_total',
    'sluice_automation_runs_ended_total',
    'sluice_automation_run_duration_seconds',
    'sluice_automation_run_queue_wait_seconds',
    'sluice_automation_run_queue_depth',
    'sluice_automation_pool_threads',
    'sluice_automation_pool_threads_busy',
    'sluice_automation_lease_takeovers_total',
  ],
};

const READY_CHECKS: Record<string, string[]> = {
  ratelimit: [],
  streams: ['lmdb'],
  automation: ['lmdb', 'registry'],
};

describeEachTransport('probes and metrics', (transport) => {
  for (const name of SERVICES) describe(name, () => describeService(name, transport));
});

function describeService(name: string, transport: string): void {
  let s: Started;
  before(async () => {
    s = await startService(name as 'ratelimit', { SLUICE_HTTP_TRANSPORT: transport });
  });
  after(async () => {
    await s?.stop();
  });

  it(`${name}: /livez answers 200 without a key`, async () => {
    const live = await getJson(s.url + '/livez');
    assert.equal(live.status, 200);
    assert.equal(live.body.status, 'live');
    assert.equal(live.body.service, name);
  });

  it(`${name}: /readyz answers 200 naming each check`, async () => {
    const ready = await getJson(s.url + '/readyz');
    assert.equal(ready.status, 200, JSON.stringify(ready.body));
    assert.equal(ready.body.status, 'ready');
    assert.deepEqual(Object.keys(ready.body.checks).sort(), [...READY_CHECKS[name]!].sort());
    for (const check of Object.values(ready.body.checks)) assert.deepEqual(check, { ready: true });
  });

  it(`${name}: /metrics is Prometheus text with the request metrics by route template`, async () => {
    // One request on a parameterised route, so its template shows.
    const missing = await fetch(s.url + '/no/such/path');
    assert.equal(missing.status, 404);
    await fetch(s.url + '/livez');
    const res = await fetch(s.url + '/metrics');
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const exposition = parseProm(await res.text());
    const names = familyNames(exposition);
    for (const metric of [...HTTP_METRICS, ...SERVICE_METRICS[name]!])
      assert.ok(names.has(metric), `${metric} missing from /metrics of ${name}`);
    assert.ok(
      (sampleValue(exposition, 'sluice_http_requests_total', {
        service: name,
        method: 'GET',
        route: '/livez',
        status_class: '2xx',
      }) ?? 0) >= 1,
    );
    assert.ok(
      (sampleValue(exposition, 'sluice_http_requests_total', {
        service: name,
        route: '(none)',
        status_class: '4xx',
      }) ?? 0) >= 1,
    );
    // Never a raw path.
    assert.ok(!exposition.samples.some((x) => x.labels.route === '/no/such/path'));
    // The scrape itself is in flight while it renders.
    assert.ok((sampleValue(exposition, 'sluice_http_requests_in_flight', { service: name }) ?? 0) >= 1);
  });

  it(`${name}: /readyz answers 503 "draining" once shutdown began; /livez stays 200`, async () => {
    s.service.beginShutdown?.();
    const ready = await getJson(s.url + '/readyz');
    assert.equal(ready.status, 503);
    assert.equal(ready.body.status, 'draining');
    assert.ok(ready.body.not_ready.includes('draining'));
    assert.equal((await getJson(s.url + '/livez')).status, 200);
  });
}
