// The client against the real automation service (in-process, free port, temp data dir).
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { unzipSync } from 'fflate';
import { startAutomation } from '../../src/automation/index.js';
import type { RunningAutomation } from '../../src/automation/index.js';
import {
  isClientError,
  ClientAuthError,
  ServiceClient,
  ClientNotFoundError,
  ClientValidationError,
  toFile,
} from '../../src/automation/client/index.js';
import { makeTestContext } from '../helpers/context.js';
import type { TestContext } from '../helpers/context.js';

let test: TestContext;
let service: RunningAutomation;
let client: ServiceClient;

before(async () => {
  test = await makeTestContext({ env: { AUTOMATION_POOL_THREADS: '1', AUTOMATION_CANCEL_GRACE: '300ms' } });
  service = await startAutomation(test.ctx);
  client = new ServiceClient({ api_key: test.token, base_url: service.url, env: {} });
});

after(async () => {
  await service?.close();
  await test?.cleanup();
});

describe('client against the automation service', () => {
  it('auth.check names the key; a wrong key is a ClientAuthError with the request id', async () => {
    const me = await client.auth.check();
    assert.equal(me.tenantId, 'default');
    const stranger = new ServiceClient({ api_key: 'wrong', base_url: service.url, env: {} });
    await assert.rejects(stranger.auth.check(), (e: unknown) => {
      assert.ok(e instanceof ClientAuthError);
      assert.equal(e.status, 401);
      assert.ok(e.requestId && e.requestId.length > 0);
      assert.ok(Array.isArray(e.envelope?.issues));
      return true;
    });
  });

  it('lists, reads and syncs automations by typed alias', async () => {
    const page = await client.automations.list({ type: 'workflow' });
    assert.ok(page.data.some((a) => a.slug === 'text-report'));
    const detail = await client.automations.get('workflows.text-report');
    assert.equal(detail.type, 'workflow');
    const versions = await client.automations.versions('workflows.text-report');
    assert.ok(versions.data.some((v) => v.version === '1.0.0'));
    await client.automations.triggers('workflows.text-report');
    const first = await client.automations.sync('workflows.text-report');
    const second = await client.automations.sync('workflows.text-report');
    assert.equal(first.release.version, second.release.version);
    await assert.rejects(client.automations.sync('workflows.text-report@1.0.0'), ClientValidationError);
    await assert.rejects(client.automations.get('workflows.no-such-thing'), ClientNotFoundError);
  });

  it('run_and_wait returns the finished run; its sections and artifacts are readable', async () => {
    const run = await client.run_and_wait('workflows.text-report', { text: '  the cat   and the hat ' });
    assert.equal(run.finished, true);
    assert.equal(run.execution?.status, 'completed');
    assert.equal((run.output as { words: number }).words, 5);

    const expanded = await client.runs.get(run.id, { expand: ['input', 'usage'] });
    assert.deepEqual(expanded.input?.args, { text: '  the cat   and the hat ' });
    const events = await client.runs.events(run.id);
    assert.equal(events.events[0]?.type, 'run.created');
    const steps = await client.runs.steps(run.id);
    assert.ok(Array.isArray(steps['steps']));
    await client.runs.trace(run.id);
    const usage = await client.runs.usage(run.id);
    assert.equal(typeof usage.usage?.durationMs, 'number');
    const scores = await client.runs.scores(run.id);
    assert.deepEqual(scores.scores, []);

    const listing = await client.runs.artifacts.list(run.id);
    assert.deepEqual(
      listing.artifacts.map((a) => [a.path, a.role]),
      [['output/report.md', 'output']],
    );
    const zip = unzipSync(await client.runs.artifacts.zip(run.id));
    assert.deepEqual(Object.keys(zip), ['report.md']);
    const report = Buffer.from(await client.runs.artifacts.download(run.id, 'output/report.md')).toString();
    assert.match(report, /words: 5/);

    // The signed token (handed out in the list's x-download-url header, since the SDK's
    // RunArtifactsResponse has no field for it) opens the ZIP for a client that holds no key.
    const listed = await fetch(`${service.url}/api/v1/runs/${run.id}/artifacts`, {
      headers: { authorization: `Bearer ${test.token}` },
    });
    await listed.body?.cancel();
    const token =
      new URL(listed.headers.get('x-download-url') ?? '', service.url).searchParams.get('token') ?? '';
    assert.ok(token.length > 0);
    const keyless = new ServiceClient({ base_url: service.url, env: {} });
    const viaToken = unzipSync(await keyless.runs.artifacts.zip(run.id, { token }));
    assert.ok('report.md' in viaToken);
    await assert.rejects(keyless.runs.get(run.id), ClientAuthError);
  });

  it('starts asynchronously, cancels an in-flight run and reruns the original version', async () => {
    const started = await client.run('workflows.text-report', { text: 'slow', delay_ms: 60_000 });
    assert.equal(started.finished, false);
    const cancel = await client.runs.cancel(started.id);
    assert.ok(['cancelled', 'requested'].includes(cancel.cancellation.state));
    const stopped = await client.run_and_wait(
      'workflows.text-report',
      { text: 'after' },
      { poll_interval_seconds: 0.05 },
    );
    assert.equal(stopped.execution?.status, 'completed');

    const rerun = await client.rerun(stopped.id, { version: 'original', wait_for_completion: 30 });
    assert.equal(rerun.finished, true);
    assert.equal((rerun.output as { text: string }).text, 'after');
  });

  it('iterates every run across cursor pages without duplicates', async () => {
    for (let i = 0; i < 3; i++)
      await client.run('workflows.text-report', { text: `page ${i}` }, { waitForCompletion: 30 });
    const ids: string[] = [];
    for await (const run of client.runs.iterate({ limit: 2, source: 'workflows.text-report' }))
      ids.push(run.id);
    assert.ok(ids.length >= 3);
    assert.equal(new Set(ids).size, ids.length);
    const firstPage = await client.runs.list({ limit: 2 });
    assert.equal(firstPage.runs.length, 2);
    assert.equal(typeof firstPage.nextCursor, 'string');
  });

  it('sends input files as multipart, and the server accepts them', async () => {
    const run = await client.run(
      'workflows.text-report',
      { text: 'with a file', attachment: toFile('attached text', 'note.txt', 'text/plain') },
      { waitForCompletion: 30 },
    );
    assert.equal(run.finished, true);
    const expanded = await client.runs.get(run.id, { expand: 'input' });
    assert.deepEqual((expanded.input?.args as { attachment: unknown }).attachment, {
      $file: 'files.attachment',
    });
    assert.ok(JSON.stringify(expanded.input?.files).includes('note.txt'));
  });

  it('uploads, reads and deletes a reusable file', async () => {
    const stored = await client.files.upload(Buffer.from('hello file'), {
      filename: 'hello.txt',
      contentType: 'text/plain',
    });
    assert.equal(stored.filename, 'hello.txt');
    assert.equal(stored.size, 10);
    assert.equal((await client.files.get(stored.id)).id, stored.id);
    assert.equal(Buffer.from(await client.files.content(stored.id)).toString(), 'hello file');
    await client.files.delete(stored.id);
    await assert.rejects(client.files.get(stored.id), ClientNotFoundError);
  });

  it('maps the service 400s and 404s', async () => {
    await assert.rejects(client.run('workflows.text-report', {}, { waitForCompletion: 5 }), (e: unknown) => {
      assert.ok(e instanceof ClientValidationError);
      assert.ok(e.issues.length > 0);
      assert.ok(e.requestId);
      return true;
    });
    await assert.rejects(
      client.run('workflows.text-report', { text: 'x' }, { waitForCompletion: 601 }),
      ClientValidationError,
    );
    await assert.rejects(
      client.runs.get('run_does_not_exist'),
      (e: unknown) => isClientError(e) && e.code === 'not_found' && e.status === 404,
    );
  });
});
