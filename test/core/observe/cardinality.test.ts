// Bounded label sets: requests that name 10,000 distinct ids (runs, topics and partitions,
// consumer groups and instances) add no series to /metrics. Only route templates, methods and
// status classes are labels; topic names are capped (core/observe/bounded-label.ts).

import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { parseProm } from './prom-text.js';
import { startService, type Started } from './services.js';

const IDS = 10_000;
const CONCURRENCY = 16;

/**
 * The series Sluice defines (prom-client's process and Node.js metrics grow by themselves, e.g.
 * a new kind of garbage collection). A scrape first, so the /metrics route's own series exist.
 */
async function seriesOf(url: string): Promise<string[]> {
  await (await fetch(url + '/metrics')).arrayBuffer();
  const text = await (await fetch(url + '/metrics')).text();
  return parseProm(text)
    .samples.filter((x) => x.name.startsWith('sluice_'))
    .map((x) => `${x.name}${JSON.stringify(x.labels)}`)
    .sort();
}

/** Sends `count` requests made by `request(i)`, CONCURRENCY at a time; returns the statuses seen. */
async function send(count: number, request: (i: number) => Promise<Response>): Promise<Set<number>> {
  const statuses = new Set<number>();
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const res = await request(next++);
      statuses.add(res.status);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return statuses;
}

describe('metrics series do not grow with ids', () => {
  let automation: Started;
  let streams: Started;
  before(async () => {
    automation = await startService('automation');
    streams = await startService('streams');
  });
  after(async () => {
    await automation?.stop();
    await streams?.stop();
  });

  it('automation: GET /api/v1/runs/<id> for 10,000 ids', async () => {
    const auth = { authorization: `Bearer ${automation.token}` };
    const get = (i: number) =>
      fetch(`${automation.url}/api/v1/runs/${i % 2 ? randomUUID() : 'run_' + i}`, { headers: auth });
    // Warm-up: every label set these requests can make exists before counting.
    await send(50, get);
    const before = await seriesOf(automation.url);
    const statuses = await send(IDS, get);
    assert.ok(statuses.has(404), `expected 404s, saw ${[...statuses].join(', ')}`);
    assert.deepEqual(await seriesOf(automation.url), before);
  });

  it('streams: topic, partition, group and instance ids, 10,000 of them', async () => {
    const auth = { authorization: `Bearer ${streams.token}` };
    const paths = [
      (i: number) => `/streams/topics/t-${i}-${randomUUID()}/partitions/${i}/records?offset=0`,
      (i: number) => `/streams/topics/t-${i}`,
      (i: number) => `/streams/consumers/g-${i}/instances/${randomUUID()}/records`,
      (i: number) => `/streams/consumer-groups/g-${i}`,
    ];
    const get = (i: number) => fetch(streams.url + paths[i % paths.length]!(i), { headers: auth });
    await send(50, get);
    const before = await seriesOf(streams.url);
    const statuses = await send(IDS, get);
    assert.ok(statuses.has(404), `expected 404s, saw ${[...statuses].join(', ')}`);
    assert.deepEqual(await seriesOf(streams.url), before);
  });
});
