// The service metrics count what happens: a run of a built-in automation shows in the run
// counters and histograms (labelled by the automation's slug, never the run id); records
// produced to and fetched from a topic show per topic, with the produce latency.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { waitUntil } from '../../helpers/wait.js';
import { parseProm, sampleValue, type Exposition } from './prom-text.js';
import { startService, type Started } from './services.js';

async function metrics(url: string): Promise<Exposition> {
  return parseProm(await (await fetch(url + '/metrics')).text());
}

describe('automation run metrics', () => {
  let s: Started;
  before(async () => {
    s = await startService('automation');
  });
  after(async () => {
    await s?.stop();
  });

  it('a completed run counts as started and ended, with its duration and queue wait', async () => {
    const res = await fetch(`${s.url}/api/v1/runs?wait_for_completion=30`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'workflows.text-report', input: { text: 'count me' } }),
    });
    assert.equal(res.status, 200);
    const run = (await res.json()) as { id: string; execution: { status: string } };
    assert.equal(run.execution.status, 'completed');
    const m = await waitUntil('the run counted as ended', async () => {
      const e = await metrics(s.url);
      return sampleValue(e, 'sluice_automation_runs_ended_total', { status: 'completed' }) ? e : undefined;
    });
    const started = m.samples.filter((x) => x.name === 'sluice_automation_runs_started_total');
    assert.equal(started.length, 1);
    assert.equal(started[0]!.value, 1);
    assert.equal(
      sampleValue(m, 'sluice_automation_runs_ended_total', {
        automation: started[0]!.labels.automation!,
        status: 'completed',
      }),
      1,
    );
    assert.equal(sampleValue(m, 'sluice_automation_run_duration_seconds_count', { status: 'completed' }), 1);
    assert.equal(sampleValue(m, 'sluice_automation_run_queue_wait_seconds_count'), 1);
    assert.equal(sampleValue(m, 'sluice_automation_pool_threads'), 1);
    assert.equal(sampleValue(m, 'sluice_automation_pool_threads_busy'), 0);
    assert.equal(sampleValue(m, 'sluice_automation_run_queue_depth'), 0);
    assert.ok(!m.samples.some((x) => Object.values(x.labels).includes(run.id)), 'no run id as a label');
  });
});

describe('streams produce and fetch metrics', () => {
  let s: Started;
  before(async () => {
    s = await startService('streams');
  });
  after(async () => {
    await s?.stop();
  });

  it('counts records and bytes produced and fetched per topic', async () => {
    const headers = {
      authorization: `Bearer ${s.token}`,
      'content-type': 'application/vnd.streams.json.v2+json',
    };
    const created = await fetch(`${s.url}/streams/topics/topic`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ topic_name: 'metered', partitions_count: 1 }),
    });
    assert.ok(created.status < 300, String(created.status));
    const produced = await fetch(`${s.url}/streams/topic/metered`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        records: [{ value: { n: 1 } }, { value: { n: 2 } }, { key: 'k', value: { n: 3 } }],
      }),
    });
    assert.equal(produced.status, 200, await produced.clone().text());
    const read = await fetch(`${s.url}/streams/topics/metered/partitions/0/records?offset=0`, {
      headers: { authorization: `Bearer ${s.token}` },
    });
    assert.equal(read.status, 200, await read.clone().text());
    const m = await metrics(s.url);
    assert.equal(sampleValue(m, 'sluice_streams_records_produced_total', { topic: 'metered' }), 3);
    assert.ok((sampleValue(m, 'sluice_streams_bytes_produced_total', { topic: 'metered' }) ?? 0) > 0);
    assert.equal(sampleValue(m, 'sluice_streams_records_fetched_total', { topic: 'metered' }), 3);
    assert.ok((sampleValue(m, 'sluice_streams_bytes_fetched_total', { topic: 'metered' }) ?? 0) > 0);
    assert.equal(sampleValue(m, 'sluice_streams_produce_duration_seconds_count', { outcome: 'ok' }), 1);
  });
});
