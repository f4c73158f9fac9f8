// The fuzz suite in `npm test`: `sluice serve` in a child process, a fixed seed and a few
// thousand cases over every route of the three services (docs/fuzz.md). Any 5xx, dropped
// connection, 4xx without a JSON error body, body on a HEAD answer, hang, or a service that is
// unhealthy afterwards fails the test; the message lists each distinct failure with a case
// number to replay with `npm run fuzz -- --case N --seed 20261126`.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { ratelimitRoutes, streamsRoutes } from './routes.js';
import { formatReport, runFuzz } from './runner.js';
import { startServe, type ServeChild } from './server.js';

const SEED = 20261126;
const REQUESTS = 3000;

describe('fuzz: every route of the three services', () => {
  let serve: ServeChild;

  before(async () => {
    serve = await startServe({
      // Keep legitimate waits short, so a per-request time limit tells a hang from a long poll.
      STREAMS_FETCH_TIMEOUT_MAX: '2s',
      STREAMS_MAX_PARTITIONS: '8',
      STREAMS_MAX_TOPICS: '100',
      AUTOMATION_MAX_QUEUED_RUNS: '50',
      AUTOMATION_POOL_THREADS: '1',
    });
  });

  after(async () => {
    const code = await serve?.stop();
    assert.equal(code, 0, `sluice serve exit code; output:\n${serve?.output().slice(-3000)}`);
  });

  it('lists routes from the services’ own route tables', () => {
    const ratelimit = ratelimitRoutes().map((r) => `${r.method} ${r.pattern}`);
    assert.deepEqual(ratelimit.sort(), ['GET /healthcheck', 'POST /json']);
    const streams = streamsRoutes().map((r) => `${r.method} ${r.pattern}`);
    assert.ok(streams.includes('POST /streams/topic/:topic'));
    assert.ok(streams.includes('GET /streams/consumers/:group/instances/:instance/ws'));
  });

  it(`${REQUESTS} cases, seed ${SEED}: no 5xx, drop, hang or bare 4xx; healthy afterwards`, async () => {
    const report = await runFuzz({
      requests: REQUESTS,
      seed: SEED,
      urls: serve.urls,
      token: serve.token,
      concurrency: 8,
      timeoutMs: 20_000,
      maxSeconds: 240,
      ratelimitDomain: 'fuzz',
      bigBodies: 6,
    });
    const text = formatReport(report);
    process.stdout.write(text + '\n');
    assert.equal(report.routes.automation > 50, true, 'automation routes from its OpenAPI document');
    assert.equal(report.sent, REQUESTS, text);
    const log = serve
      .output()
      .split('\n')
      .filter((l) => /error|fail/i.test(l))
      .slice(-20)
      .join('\n');
    assert.equal(report.failures.length, 0, `${text}\n\nserver log (errors):\n${log}`);
  });
});
