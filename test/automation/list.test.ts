import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { startHarness, type Harness } from './harness.js';
import { HANG_MS } from '../helpers/wait.js';
import { RunsListResponse } from '../../src/automation/wire/runs.js';
import { assertWire } from './wire-check.js';

describe('automation run listing', () => {
  let h: Harness;
  const ids: string[] = [];
  const agentIds: string[] = [];
  const batchIds: string[] = [];
  before(async () => {
    h = await startHarness();
    for (let i = 0; i < 24; i++) {
      const target = i % 4 === 0 ? 'agents.echo-agent' : 'workflows.text-report';
      const res = await h.api('POST', '/runs', { body: { target, input: { text: `run ${i}` } } });
      assert.equal(res.status, 201);
      ids.push(res.body.id);
      if (i % 4 === 0) agentIds.push(res.body.id);
    }
    // Started from inside the service, the way experiments will start them.
    const principal = { tenant: 'default', user: 'admin' };
    for (let i = 0; i < 3; i++) {
      const run = await h.service.core.runs.start({
        target: 'workflows.text-report',
        input: { text: `batch ${i}` },
        principal,
        trigger: 'experiment',
        batchId: 'batch-1',
        exampleId: `example-${i}`,
      });
      batchIds.push(run.id);
      ids.push(run.id);
    }
    for (const id of ids) await h.service.core.runs.waitFor(id, HANG_MS);
  });
  after(async () => {
    await h?.close();
  });

  async function list(query: string) {
    const res = await h.api('GET', `/runs?${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assertWire(RunsListResponse, res.body);
    return res.body as { runs: any[]; nextCursor: string | null };
  }

  it('lists newest first by default and filters by type, source, status, trigger and batch', async () => {
    const all = await list('limit=100');
    assert.deepEqual(
      all.runs.map((r) => r.id),
      [...ids].reverse(),
    );
    assert.equal(all.nextCursor, null);
    assert.deepEqual(
      (await list('type=agent&limit=100')).runs.map((r) => r.id),
      [...agentIds].reverse(),
    );
    assert.deepEqual(
      (await list('source=agents.echo-agent&limit=100')).runs.map((r) => r.id),
      [...agentIds].reverse(),
    );
    const agentId = (await h.api('GET', '/automations/agents.echo-agent')).body.id;
    for (const source of [agentId, `agents.${agentId}`])
      assert.deepEqual(
        (await list(`source=${source}&limit=100`)).runs.map((r) => r.id),
        [...agentIds].reverse(),
      );
    assert.equal((await list('status=completed&limit=100')).runs.length, ids.length);
    assert.equal((await list('status=failed,cancelled')).runs.length, 0);
    assert.deepEqual(
      (await list('batch_id=batch-1')).runs.map((r) => r.id),
      [...batchIds].reverse(),
    );
    assert.deepEqual(
      (await list('batchId=batch-1&order=asc')).runs.map((r) => r.id),
      batchIds,
    );
    assert.deepEqual(
      (await list('trigger=experiment')).runs.map((r) => r.id),
      [...batchIds].reverse(),
    );
    assert.deepEqual(
      (await list('example_id=example-1')).runs.map((r) => r.id),
      [batchIds[1]],
    );
    assert.deepEqual(
      (await list('exampleIdContains=ple-2')).runs.map((r) => r.id),
      [batchIds[2]],
    );
    assert.equal((await list('experiments=false&limit=100')).runs.length, ids.length - 3);
    assert.equal((await list('triggered_by=admin&limit=100')).runs.length, ids.length);
    assert.equal((await list('triggeredBy=someone-else')).runs.length, 0);
    assert.equal((await list('source_ref=1.0.0&limit=100')).runs.length, ids.length);
    assert.equal((await list('source_ref=9.9.9')).runs.length, 0);
    assert.deepEqual(
      (await list(`ids=${ids[3]},${ids[5]}`)).runs.map((r) => r.id),
      [ids[5], ids[3]],
    );
  });

  it('list items carry the RunListItem fields of the SDK only; trigger.by is a person or null', async () => {
    const items = (await list('limit=100')).runs;
    const allowed = new Set([
      'id',
      'type',
      'finished',
      'sampleRank',
      'timing',
      'source',
      'trigger',
      'execution',
      'error',
      'eval',
    ]);
    for (const item of items) for (const key of Object.keys(item)) assert.ok(allowed.has(key), key);
    const byId = new Map(items.map((r) => [r.id, r]));
    assert.deepEqual(byId.get(ids[0])!.trigger, { type: 'api', by: { id: 'admin', name: null, email: '' } });
    assert.equal(byId.get(ids[0])!.error, null, 'terminal runs carry error');
    assert.deepEqual(byId.get(batchIds[0])!.eval, {
      example: 'example-0',
      exampleId: 'example-0',
      score: null,
      passed: null,
    });
    assert.deepEqual(byId.get(ids[0])!.execution.retry, { number: 0, previousRunId: null, nextRun: null });
    assert.equal(byId.get(ids[0])!.execution.review, null);
  });

  it('filters by time windows and sorts by completion', async () => {
    assert.equal((await list('from=-1h&limit=100')).runs.length, ids.length);
    assert.equal((await list('created_before=-1h')).runs.length, 0);
    assert.equal((await list(`createdAfter=${new Date(Date.now() + 60_000).toISOString()}`)).runs.length, 0);
    assert.equal((await list('completed_after=-1h&limit=100')).runs.length, ids.length);
    const byCompletion = (await list('sort=completed_at&order=asc&limit=100')).runs;
    assert.equal(byCompletion.length, ids.length);
    for (let i = 1; i < byCompletion.length; i++)
      assert.ok(byCompletion[i].timing.completedAt >= byCompletion[i - 1].timing.completedAt);
    const bad = await h.api('GET', '/runs?from=yesterday-ish');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.issues[0].field, 'from');
  });

  it('samples by the stored sampleRank', async () => {
    const all = (await list('limit=100')).runs;
    assert.equal((await list('sample_rate=0&limit=100')).runs.length, 0);
    assert.equal((await list('sample_rate=1&limit=100')).runs.length, all.length);
    const half = (await list('sampleRate=0.5&limit=100')).runs;
    assert.deepEqual(
      half.map((r) => r.id),
      all.filter((r) => r.sampleRank < 0.5).map((r) => r.id),
    );
    const again = (await list('sample_rate=0.5&limit=100')).runs;
    assert.deepEqual(
      again.map((r) => r.id),
      half.map((r) => r.id),
    );
    assert.equal((await h.api('GET', '/runs?sample_rate=1.5')).status, 400);
  });

  it('review filters read the review summary (none yet)', async () => {
    assert.equal((await list('has_review=true')).runs.length, 0);
    assert.equal((await list('no_review=true&limit=100')).runs.length, ids.length);
    assert.equal((await list('review_status=open')).runs.length, 0);
    assert.equal((await list('hasCorrections=false&limit=100')).runs.length, ids.length);
  });

  it('pages by cursor with no duplicates or gaps while runs are added', async () => {
    const before = new Set((await list('limit=1000')).runs.map((r) => r.id));
    const seen: string[] = [];
    let cursor: string | null = null;
    let added = 0;
    do {
      const page: { runs: any[]; nextCursor: string | null } = await list(
        `limit=5${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      seen.push(...page.runs.map((r) => r.id));
      cursor = page.nextCursor;
      // Insert between pages, as concurrent clients would.
      const res = await h.api('POST', '/runs', {
        body: { target: 'workflows.text-report', input: { text: `late ${added++}` } },
      });
      assert.equal(res.status, 201);
    } while (cursor);
    assert.equal(new Set(seen).size, seen.length, 'no duplicates');
    assert.deepEqual(new Set(seen), before, 'every run that existed is seen once, newer ones not mixed in');
    const asc: string[] = [];
    cursor = null;
    do {
      const page: { runs: any[]; nextCursor: string | null } = await list(
        `order=asc&limit=7&type=workflow${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      asc.push(...page.runs.map((r) => r.id));
      cursor = page.nextCursor;
    } while (cursor);
    assert.equal(new Set(asc).size, asc.length);
    assert.deepEqual(asc, [...asc].sort());
    const bad = await h.api('GET', '/runs?cursor=garbage');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.issues[0].field, 'cursor');
    const offset = await list('limit=3&offset=2');
    const first = await list('limit=5');
    assert.deepEqual(
      offset.runs.map((r) => r.id),
      first.runs.slice(2, 5).map((r) => r.id),
    );
  });
});
