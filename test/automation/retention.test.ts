// Automation retention on one node (LMDB) with a movable clock: a run past AUTOMATION_RUN_RETENTION
// disappears with its folder while a reviewed one stays; a `run-input` upload past
// AUTOMATION_UPLOAD_RETENTION is removed with its blob once nothing else holds it; the pass shows
// in the metrics. Passes are called directly (the timer's interval is a day).

import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startHarness, type Harness } from './harness.js';
import { FILE_ECHO, gitIn, release } from './registry-git.js';
import { makeTestContext } from '../helpers/context.js';
import { loadAutomationSettings } from '../../src/automation/settings.js';

const HOUR = 3600_000;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('automation retention (LMDB)', () => {
  let h: Harness;
  let offset = 0;
  before(async () => {
    h = await startHarness(
      { AUTOMATION_RUN_RETENTION: '1h', AUTOMATION_RETENTION_CHECK_INTERVAL: '24h' },
      { now: () => Date.now() + offset },
    );
    release(h.registryPath, FILE_ECHO);
    gitIn(h.registryPath, ['tag', '-a', 'workflows.file-echo@1.0.0', '-m', 'x']);
    assert.equal((await h.api('POST', '/automations/workflows.file-echo/sync')).status, 200);
  });
  after(async () => {
    await h?.close();
  });

  async function upload(content: string, filename: string) {
    const form = new FormData();
    form.append('purpose', 'run-input');
    form.append('file', new Blob([content], { type: 'text/plain' }), filename);
    const res = await fetch(`${h.url}/api/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.token}` },
      body: form,
    });
    assert.equal(res.status, 200);
    return (await res.json()) as { id: string };
  }

  const runWith = async (fileId: string) => {
    const run = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.file-echo', input: {}, files: { doc: { $fileId: fileId } } },
    });
    assert.equal(run.body.execution.status, 'completed', JSON.stringify(run.body));
    return run.body.id as string;
  };

  const metric = async (line: string) => {
    const text = await (await fetch(`${h.url}/metrics`)).text();
    const found = text.split('\n').find((l) => l.startsWith(line + ' '));
    return found === undefined ? undefined : Number(found.slice(line.length + 1));
  };

  it('removes an ended run past its retention with its folder, keeps a reviewed one, then the upload', async () => {
    const file = await upload('kept for a day', 'day.txt');
    const old = await runWith(file.id);
    const reviewed = await runWith(file.id);
    assert.equal(
      (await h.api('PUT', `/runs/${reviewed}/reviews`, { body: { verdict: 'correct' } })).status,
      200,
    );
    const runsDir = join(h.service.core.settings.dataDir, 'runs');
    assert.ok(existsSync(join(runsDir, old)));

    // Not old enough yet: nothing goes.
    const early = await h.service.core.retention.pass();
    assert.equal(early?.removed.runs.records, 0);
    assert.equal((await h.api('GET', `/runs/${old}`)).status, 200);

    offset = 2 * HOUR;
    const pass = await h.service.core.retention.pass();
    assert.equal(pass?.collected, true);
    assert.equal(pass?.removed.runs.records, 1);
    assert.ok(pass.removed.runs.bytes > 0);
    assert.equal((await h.api('GET', `/runs/${old}`)).status, 404);
    assert.equal((await h.api('GET', `/runs/${old}/events`)).status, 404);
    assert.ok(!existsSync(join(runsDir, old)));
    const list = await h.api('GET', '/runs?limit=100');
    assert.ok(!list.body.runs.some((r: { id: string }) => r.id === old));
    // The reviewed run stays, with its files.
    assert.equal((await h.api('GET', `/runs/${reviewed}`)).status, 200);
    const snap = await h.api('GET', `/runs/${reviewed}/artifacts/input/doc/day.txt`);
    assert.equal(snap.body.toString(), 'kept for a day');
    // The upload (24 hours by default) is still there.
    assert.equal((await h.api('GET', `/files/${file.id}`)).status, 200);
    assert.equal(await metric('sluice_automation_retention_removed_total{kind="runs"}'), 1);

    offset = 25 * HOUR;
    const later = await h.service.core.retention.pass();
    assert.equal(later?.removed.uploads.records, 1);
    assert.equal((await h.api('GET', `/files/${file.id}`)).status, 404);
    // Nothing holds the content any more: the blob is gone; the reviewed run keeps its own copy.
    assert.equal(await h.service.core.files.blobs.stat(sha('kept for a day')), undefined);
    assert.equal(
      (await h.api('GET', `/runs/${reviewed}/artifacts/input/doc/day.txt`)).body.toString(),
      'kept for a day',
    );
    assert.equal((await h.api('GET', `/runs/${reviewed}`)).status, 200);
    assert.equal(await metric('sluice_automation_retention_removed_total{kind="uploads"}'), 1);
    assert.equal(await metric('sluice_automation_retention_errors_total'), 0);
    assert.ok((await metric('sluice_automation_retention_passes_total'))! >= 3);
  });
});

describe('automation retention settings', () => {
  const load = async (env: Record<string, string>) => {
    const t = await makeTestContext({ env });
    try {
      return loadAutomationSettings(t.ctx.env, t.ctx.core).retention;
    } finally {
      await t.cleanup();
    }
  };

  it('keeps runs forever and uploads 24 hours by default', async () => {
    const r = await load({});
    assert.equal(r.runRetentionMs, undefined);
    assert.equal(r.uploadRetentionMs, 24 * HOUR);
    assert.equal(r.cacheMaxBytes, undefined);
  });

  it('reads durations and sizes, and names the variable of a bad value', async () => {
    const r = await load({
      AUTOMATION_RUN_RETENTION: '30d',
      AUTOMATION_UPLOAD_RETENTION: '2h',
      AUTOMATION_CACHE_MAX_BYTES: '64MiB',
    });
    assert.equal(r.runRetentionMs, 30 * 24 * HOUR);
    assert.equal(r.uploadRetentionMs, 2 * HOUR);
    assert.equal(r.cacheMaxBytes, 64 * 1024 * 1024);
    assert.equal((await load({ AUTOMATION_RUN_RETENTION: 'keep' })).runRetentionMs, undefined);
    for (const [name, value] of [
      ['AUTOMATION_RUN_RETENTION', 'soon'],
      ['AUTOMATION_RUN_RETENTION', '10ms'],
      ['AUTOMATION_UPLOAD_RETENTION', '-1h'],
      ['AUTOMATION_CACHE_MAX_BYTES', 'lots'],
      ['AUTOMATION_RETENTION_CHECK_INTERVAL', '3d'],
    ] as const)
      await assert.rejects(load({ [name]: value }), (err: Error) => err.message.includes(name), name);
  });
});
