import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { startHarness, type Harness } from './harness.js';
import { release, workflowManifest } from './registry-git.js';
import { HANG_MS, waitUntil } from '../helpers/wait.js';

describe('automation runs: cancel, timeout, failure', () => {
  let h: Harness;
  before(async () => {
    // One run at a time in one thread, so a second run stays queued behind a slow one.
    h = await startHarness({ AUTOMATION_CANCEL_GRACE: '300ms' });
    release(h.registryPath, {
      // A step that ignores the abort signal: only terminating the worker stops it.
      'workflows/stubborn/manifest.json': workflowManifest('Stubborn'),
      'workflows/stubborn/index.js':
        "export default { steps: [{ name: 'wait', run: () => new Promise((r) => setTimeout(r, 60000)) }] };\n",
      'workflows/slow/manifest.json': workflowManifest('Slow', { timeout: '200ms' }),
      'workflows/slow/index.js':
        "export default { steps: [{ name: 'sleep', run: (ctx) => ctx.sleep(60000) }] };\n",
      'workflows/boom/manifest.json': workflowManifest('Boom'),
      'workflows/boom/index.js':
        "export default { steps: [{ name: 'ok', run: () => 1 }, { name: 'explode', run: () => { throw new Error('kaboom'); } }] };\n",
    });
    for (const slug of ['stubborn', 'slow', 'boom']) {
      const { gitIn } = await import('./registry-git.js');
      gitIn(h.registryPath, ['tag', '-a', `workflows.${slug}@1.0.0`, '-m', slug]);
      assert.equal((await h.api('POST', `/automations/workflows.${slug}/sync`)).status, 200);
    }
  });
  after(async () => {
    await h?.close();
  });

  /**
   * Waits until the run's first step is executing. A run is 'running' from the moment it is
   * handed to a worker, before its module has loaded; a cancel in that gap ends it before
   * any step starts, which is another path than the one these tests are about.
   */
  async function waitStepStarted(id: string) {
    await waitUntil(`a step of run ${id} to start`, async () => {
      const events = (await h.api('GET', `/runs/${id}/events`)).body.events as { type: string }[];
      return events.some((e) => e.type === 'step.started');
    });
  }

  async function waitStatus(id: string, status: string) {
    return waitUntil(`run ${id} to reach ${status}`, async () => {
      const run = await h.api('GET', `/runs/${id}`);
      return run.body.execution.status === status && run.body;
    });
  }

  it('cancels a queued run at once and an in-flight run cooperatively', async () => {
    const slow = await h.api('POST', '/runs', {
      body: { target: 'workflows.text-report', input: { text: 'slow', delay_ms: 60000 } },
    });
    await waitStatus(slow.body.id, 'running');
    await waitStepStarted(slow.body.id);
    const queued = await h.api('POST', '/runs', {
      body: { target: 'workflows.text-report', input: { text: 'queued' } },
    });
    assert.equal(queued.status, 201);
    assert.equal((await h.api('GET', `/runs/${queued.body.id}`)).body.execution.status, 'pending');

    const c1 = await h.api('POST', `/runs/${queued.body.id}/cancel`);
    assert.equal(c1.status, 200);
    assert.deepEqual(c1.body.cancellation, { state: 'cancelled', wasStatus: 'pending' });
    assert.equal(c1.body.finished, true);
    assert.equal(c1.body.execution.status, 'cancelled');
    // The time of the request is kept for a run cancelled before it started, too.
    const stored = (await h.api('GET', `/runs/${queued.body.id}`)).body;
    assert.ok(stored.timing.cancelRequestedAt, 'cancelRequestedAt of a run cancelled while queued');
    assert.ok(Date.parse(stored.timing.cancelRequestedAt) <= Date.parse(stored.timing.completedAt));

    const c2 = await h.api('POST', `/runs/${slow.body.id}/cancel`);
    assert.deepEqual(c2.body.cancellation, { state: 'requested', wasStatus: 'running' });
    const during = await h.api('GET', `/runs/${slow.body.id}`);
    assert.ok(during.body.timing.cancelRequestedAt);
    const done = await h.service.core.runs.waitFor(slow.body.id, HANG_MS);
    assert.equal(done.status, 'cancelled');
    const ended = (await h.api('GET', `/runs/${slow.body.id}`)).body;
    assert.equal(ended.timing.cancelRequestedAt, during.body.timing.cancelRequestedAt);
    const events = (await h.api('GET', `/runs/${slow.body.id}/events`)).body.events.map((e: any) => e.type);
    assert.equal(events[events.length - 1], 'run.cancelled');
    assert.ok(events.includes('step.cancelled'));
    assert.ok(events.indexOf('run.cancel_requested') < events.indexOf('run.cancelled'));

    const c3 = await h.api('POST', `/runs/${slow.body.id}/cancel`);
    assert.deepEqual(c3.body.cancellation, { state: 'already_terminal', wasStatus: 'cancelled' });
    const queuedEvents = (await h.api('GET', `/runs/${queued.body.id}/events`)).body.events.map(
      (e: any) => e.type,
    );
    assert.deepEqual(queuedEvents, ['run.created', 'run.queued', 'run.cancelled']);
  });

  it('terminates a worker whose step ignores the signal, after the grace period', async () => {
    const run = await h.api('POST', '/runs', { body: { target: 'workflows.stubborn', input: {} } });
    await waitStepStarted(run.body.id);
    const cancel = await h.api('POST', `/runs/${run.body.id}/cancel`);
    assert.equal(cancel.body.cancellation.state, 'requested');
    const done = await h.service.core.runs.waitFor(run.body.id, HANG_MS);
    assert.equal(done.status, 'cancelled');
    assert.match(done.error ?? '', /terminated/);
    assert.equal(done.errorCode, 'cancelled');
    // The pool replaced the terminated worker: the next run still works.
    const next = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.text-report', input: { text: 'after' } },
    });
    assert.equal(next.body.execution.status, 'completed');
  });

  it('fails a run that exceeds the manifest timeout', async () => {
    const run = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.slow', input: {} },
    });
    assert.equal(run.body.execution.status, 'failed');
    assert.match(run.body.error, /timed out after 200 ms/);
    const debug = (await h.api('GET', `/runs/${run.body.id}?expand=debug`)).body.debug;
    assert.deepEqual(debug.observability.failure, { code: 'run_timeout', message: run.body.error });
  });

  it('fails a run whose step throws, recording the failed step', async () => {
    const run = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.boom', input: {} },
    });
    assert.equal(run.body.execution.status, 'failed');
    assert.equal(run.body.error, 'kaboom');
    assert.equal(run.body.output, null);
    const steps = (await h.api('GET', `/runs/${run.body.id}/steps`)).body.steps;
    assert.deepEqual(
      steps.map((s: any) => [s.name, s.status]),
      [
        ['ok', 'completed'],
        ['explode', 'failed'],
      ],
    );
    const events = (await h.api('GET', `/runs/${run.body.id}/events`)).body.events.map((e: any) => e.type);
    assert.ok(events.includes('step.failed'));
    assert.equal(events[events.length - 1], 'run.failed');
    const last = (await h.api('GET', `/runs/${run.body.id}/events`)).body.events.at(-1);
    assert.deepEqual(last.metadata, { code: 'automation_error' });
  });

  it('answers wait_for_completion with 202 and RunAccepted when the wait ends first', async () => {
    const run = await h.api('POST', '/runs?wait_for_completion=1', {
      body: { target: 'workflows.text-report', input: { text: 'z', delay_ms: 60000 } },
    });
    assert.equal(run.status, 202);
    assert.deepEqual(run.body, { id: run.body.id, type: 'workflow', finished: false });
    await h.api('POST', `/runs/${run.body.id}/cancel`);
    assert.equal((await h.service.core.runs.waitFor(run.body.id, HANG_MS)).status, 'cancelled');
  });
});
