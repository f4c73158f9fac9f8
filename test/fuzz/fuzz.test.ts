// The fuzz suite in `npm test`: `sluice serve` in a child process, a fixed seed and a few
// thousand cases over every route of the three services (docs/fuzz.md). Any 5xx, dropped
// connection, 4xx without a JSON error body, body on a HEAD answer, hang, or a service that is
// unhealthy afterwards fails the test; the message lists each distinct failure with a case
// number to replay with `npm run fuzz -- --seed S --case N`.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { ratelimitRoutes, streamsRoutes } from './routes.js';
import { formatReport, runFuzz } from './runner.js';
import { startServe, type ServeChild } from './server.js';

// Two seeds of 1500 cases each: seed 3 is the one that first took a whole server down.
const SEEDS = [3, 20261126];
const REQUESTS = 1500;

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

  it(`${REQUESTS} cases per seed (${SEEDS.join(', ')}): no 5xx, drop, hang or bare 4xx; healthy afterwards`, async () => {
    const texts: string[] = [];
    let failures = 0;
    for (const seed of SEEDS) {
      try {
        const report = await runFuzz({
          requests: REQUESTS,
          seed,
          urls: serve.urls,
          token: serve.token,
          concurrency: 8,
          timeoutMs: 20_000,
          maxSeconds: 240,
          ratelimitDomain: 'fuzz',
          bigBodies: 6,
        });
        assert.ok(report.routes.automation > 50, 'automation routes from its OpenAPI document');
        assert.equal(report.sent, REQUESTS);
        failures += report.failures.length;
        texts.push(formatReport(report));
      } catch (error) {
        // The run refuses to start on a service that is not healthy (a crash in the seed before).
        failures++;
        texts.push(`fuzz: seed ${seed}: ${(error as Error).message}`);
      }
    }
    const text = texts.join('\n');
    process.stdout.write(text + '\n');
    const log = serve
      .output()
      .split('\n')
      .filter((l) => /error|fail|forbidden/i.test(l))
      .map((l) => (l.length > 2000 ? l.slice(0, 2000) + '…' : l))
      .slice(-20)
      .join('\n');
    assert.equal(failures, 0, `${text}\n\nserver log (errors):\n${log}`);
  });
});
