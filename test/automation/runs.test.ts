import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { unzipSync } from 'fflate';
import { startHarness, type Harness } from './harness.js';
import { Gate, GATED, installGated } from './gate.js';
import { HANG_MS } from '../helpers/wait.js';
import { assertWire } from './wire-check.js';
import {
  Run,
  RunAccepted,
  RunArtifactsResponse,
  RunEventsResponse,
  RunStepsResponse,
  RunTraceResponse,
  RunUsageResponse,
  RunScoresResponse,
} from '../../src/automation/wire/runs.js';

describe('automation runs (built-ins)', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  it('lists the built-ins synced on first start, by alias too', async () => {
    const list = await h.api('GET', '/automations');
    assert.equal(list.status, 200);
    const slugs = list.body.data.map((a: any) => `${a.type}:${a.slug}:${a.version}`).sort();
    assert.deepEqual(slugs, ['agent:echo-agent:1.0.0', 'workflow:text-report:1.0.0']);
    assert.equal(list.body.total, 2);
    const byAlias = await h.api('GET', '/automations/workflows.text-report');
    assert.equal(byAlias.status, 200);
    assert.equal(byAlias.body.name, 'Text report');
    assert.equal(byAlias.body.inputSchema.required[0], 'text');
    const byId = await h.api('GET', `/automations/${byAlias.body.id}`);
    assert.equal(byId.body.slug, 'text-report');
    const agents = await h.api('GET', '/automations?type=agent&search=echo');
    assert.deepEqual(
      agents.body.data.map((a: any) => a.slug),
      ['echo-agent'],
    );
    const versions = await h.api('GET', '/automations/agents.echo-agent/versions');
    assert.deepEqual(
      versions.body.data.map((v: any) => [v.version, v.sourceRef, v.isCurrent]),
      [['1.0.0', 'agents.echo-agent@1.0.0', true]],
    );
    const triggers = await h.api('GET', '/automations/agents.echo-agent/triggers');
    assert.equal(triggers.body.triggers.api, true);
    assert.equal(triggers.body.mutable, false);
  });

  it('runs the workflow synchronously with steps, output file, events, trace and usage', async () => {
    const res = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.text-report', input: { text: '  the cat   and the hat ' } },
    });
    assert.equal(res.status, 200);
    assert.ok(res.headers.get('x-request-id'));
    const run = res.body;
    assertWire(Run, run);
    assert.match(run.id, /^exec_/);
    assert.equal(run.finished, true);
    assert.equal(run.error, null);
    assert.equal(run.status, undefined, 'the status lives in execution');
    assert.deepEqual(run.trigger, { type: 'api', by: { id: 'admin', name: null, email: '' } });
    assert.equal(run.execution.status, 'completed');
    assert.equal(run.execution.schemaValid, true);
    assert.deepEqual(run.output, {
      text: 'the cat and the hat',
      words: 5,
      characters: 19,
      topWords: ['the', 'and', 'cat', 'hat'],
      report: 'report.md',
    });
    assert.equal(run.source.version, '1.0.0');
    assert.equal(run.source.git.resolvedTag, 'workflows.text-report@1.0.0');
    assert.match(run.source.git.commitSha, /^[0-9a-f]{40}$/);
    assert.ok(run.sampleRank >= 0 && run.sampleRank < 1);
    assert.deepEqual(
      run.files.map((f: any) => [f.path, f.role, f.stepName]),
      [['output/report.md', 'output', 'report']],
    );

    const steps = await h.api('GET', `/runs/${run.id}/steps`);
    assertWire(RunStepsResponse, steps.body);
    assert.deepEqual(
      steps.body.steps.map((s: any) => [s.name, s.status]),
      [
        ['normalize', 'completed'],
        ['analyze', 'completed'],
        ['report', 'completed'],
      ],
    );
    assert.deepEqual(steps.body.steps[0].output, { text: 'the cat and the hat' });

    const eventsRes = await h.api('GET', `/runs/${run.id}/events`);
    assertWire(RunEventsResponse, eventsRes.body);
    const events = eventsRes.body.events;
    const types = events.map((e: any) => e.type);
    assert.equal(types[0], 'run.created');
    assert.equal(types[1], 'run.queued');
    assert.equal(types[2], 'run.started');
    assert.equal(types[types.length - 1], 'run.completed');
    assert.ok(types.includes('artifact.created'));
    assert.equal(types.filter((t: string) => t === 'step.completed').length, 3);
    for (let i = 1; i < events.length; i++) assert.ok(events[i].timestamp >= events[i - 1].timestamp);

    const trace = await h.api('GET', `/runs/${run.id}/trace`);
    assertWire(RunTraceResponse, trace.body);
    assert.ok(
      trace.body.events.some(
        (e: any) => e.type === 'step' && e.stepName === 'analyze' && e.status === 'completed',
      ),
    );
    const usage = await h.api('GET', `/runs/${run.id}/usage`);
    assert.equal(usage.status, 200);
    assertWire(RunUsageResponse, usage.body);
    assert.equal(typeof usage.body.usage.durationMs, 'number');
    const scores = await h.api('GET', `/runs/${run.id}/scores`);
    assertWire(RunScoresResponse, scores.body);
    assert.deepEqual(scores.body.scores, []);

    // Any artifact goes out as octet-stream: the SDK's download refuses e.g. text/markdown.
    const report = await h.api('GET', `/runs/${run.id}/artifacts/output/report.md`);
    assert.equal(report.status, 200);
    assert.equal(report.headers.get('content-type'), 'application/octet-stream');
    assert.match(report.headers.get('content-disposition') ?? '', /filename="report.md"/);
    assert.match(report.body.toString(), /words: 5/);

    const expanded = await h.api('GET', `/runs/${run.id}?expand=input,usage,execution,debug`);
    assertWire(Run, expanded.body);
    assert.deepEqual(expanded.body.input.args, { text: '  the cat   and the hat ' });
    assert.equal(expanded.body.execution.steps.length, 3);
    assert.equal(expanded.body.execution.definitionSnapshot.name, 'Text report');
    assert.equal(expanded.body.debug.traceId, run.id);
    assert.equal(expanded.body.debug.observability.failure, null);
    assert.equal(expanded.body.usage.durationMs, usage.body.usage.durationMs);
    const plain = await h.api('GET', `/runs/${run.id}`);
    assert.equal(plain.body.input, undefined);
    assert.equal(plain.body.source.automationFound, true);
    const badExpand = await h.api('GET', `/runs/${run.id}?expand=everything`);
    assert.equal(badExpand.status, 400);
    assert.match(badExpand.body.issues[0].field, /^expand/);
  });

  it('zips output files into a valid ZIP, and a signed token opens only the ZIP', async () => {
    const run = (
      await h.api('POST', '/runs?wait_for_completion=30', {
        body: { target: 'workflows.text-report', input: { text: 'zip me' } },
      })
    ).body;
    const listing = await h.api('GET', `/runs/${run.id}/artifacts`);
    assertWire(RunArtifactsResponse, listing.body);
    assert.deepEqual(listing.body.artifacts, [
      {
        name: 'report.md',
        role: 'output',
        path: 'output/report.md',
        stepName: 'report',
        contentType: 'text/markdown',
        size: listing.body.artifacts[0].size,
      },
    ]);
    const zipUrl = listing.headers.get('x-download-url')!;
    assert.ok(Date.parse(listing.headers.get('x-download-expires-at')!) > Date.now());
    const zip = await h.api('GET', `/runs/${run.id}/artifacts?zip=1`);
    assert.equal(zip.status, 200);
    assert.equal(zip.headers.get('content-type'), 'application/zip');
    const files = unzipSync(new Uint8Array(zip.body));
    assert.deepEqual(Object.keys(files), ['report.md']);
    assert.match(Buffer.from(files['report.md']!).toString(), /zip me/);

    const review = await h.api('GET', `/runs/${run.id}/artifacts?zip=1&bundle=review`);
    assert.deepEqual(Object.keys(unzipSync(new Uint8Array(review.body))), ['output/report.md']);

    const token = new URL(zipUrl, h.url).searchParams.get('token')!;
    const viaToken = await fetch(h.url + zipUrl);
    assert.equal(viaToken.status, 200);
    assert.ok(Object.keys(unzipSync(new Uint8Array(await viaToken.arrayBuffer()))).includes('report.md'));
    const notZip = await h.api('GET', `/runs/${run.id}/artifacts?token=${encodeURIComponent(token)}`, {
      token: null,
    });
    assert.equal(notZip.status, 403);
    const forged = await h.api(
      'GET',
      `/runs/${run.id}/artifacts?zip=1&token=${encodeURIComponent(token.slice(0, -3) + 'AAA')}`,
      { token: null },
    );
    assert.equal(forged.status, 401);
    assert.ok(forged.body.requestId);
    const noAuth = await h.api('GET', `/runs/${run.id}/artifacts?zip=1`, { token: null });
    assert.equal(noAuth.status, 401);
  });

  it('runs a workflow asynchronously and polls it to completion', async () => {
    // The run waits at a gate the test opens only after the answer, so "not finished yet" is
    // a fact here, not a race between the run and the answer.
    await installGated(h);
    const gate = new Gate();
    try {
      const started = await h.api('POST', '/runs', {
        body: { target: GATED, input: { gate: gate.path, text: 'async' } },
      });
      assert.equal(started.status, 201);
      assertWire(RunAccepted, started.body);
      assert.deepEqual(started.body, { id: started.body.id, type: 'workflow', finished: false });
      gate.open();
      const done = await h.service.core.runs.waitFor(started.body.id, HANG_MS);
      assert.equal(done.status, 'completed');
      const got = await h.api('GET', `/runs/${started.body.id}`);
      assert.equal(got.body.finished, true);
      assert.equal(got.body.output.text, 'async');
    } finally {
      gate.dispose();
    }
  });

  it('applies overrides.steps to replace a step output', async () => {
    const res = await h.api('POST', '/runs?wait_for_completion=30', {
      body: {
        target: 'workflows.text-report',
        input: { text: 'real text' },
        overrides: { steps: { normalize: { text: 'overridden words' } } },
      },
    });
    assert.equal(res.body.output.text, 'overridden words');
    const steps = (await h.api('GET', `/runs/${res.body.id}/steps`)).body.steps;
    assert.equal(steps[0].status, 'overridden');
  });

  it('runs the agent on the builtin provider, calling its tool', async () => {
    const res = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'agents.echo-agent', input: { text: 'one two three' } },
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.execution.status, 'completed');
    assert.deepEqual(res.body.output, {
      echo: { text: 'one two three' },
      tools: { word_count: { words: 3 } },
    });
    assert.equal(res.body.source.model, 'builtin:echo');
    const steps = await h.api('GET', `/runs/${res.body.id}/steps`);
    assert.equal(steps.body.steps.length, 1);
    assert.equal(steps.body.steps[0].agentTurns, 2);
    assert.equal(steps.body.steps[0].toolCalls, 1);
    const expanded = await h.api('GET', `/runs/${res.body.id}?expand=execution,input`);
    assertWire(Run, expanded.body);
    assert.deepEqual(expanded.body.execution.files, { output: [] });
    const traceRes = await h.api('GET', `/runs/${res.body.id}/trace`);
    assertWire(RunTraceResponse, traceRes.body);
    const trace = traceRes.body.events;
    assert.ok(
      trace.some((e: any) => e.type === 'tool.result' && e.tool === 'word_count' && e.result.words === 3),
    );
    const usage = (await h.api('GET', `/runs/${res.body.id}/usage`)).body.usage;
    assert.equal(usage.llmCallCount, 2);
    assert.equal(usage.agentTurns, 2);
    assert.ok(usage.tokens.input > 0 && usage.tokens.output > 0);
    const events = (await h.api('GET', `/runs/${res.body.id}/events`)).body.events.map((e: any) => e.type);
    assert.ok(events.includes('tool.called'));
    assert.equal(events.filter((t: string) => t === 'agent.turn').length, 2);
  });

  it('answers 400 for bad input, a bad target version and wait_for_completion above 600', async () => {
    const bad = await h.api('POST', '/runs', {
      body: { target: 'workflows.text-report', input: { words: 1 } },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.issues[0].field, 'input.text');
    assert.ok(bad.body.requestId);
    assert.equal(bad.headers.get('x-request-id'), bad.body.requestId);
    const wait = await h.api('POST', '/runs?wait_for_completion=601', {
      body: { target: 'workflows.text-report', input: { text: 'x' } },
    });
    assert.equal(wait.status, 400);
    assert.equal(wait.body.issues[0].field, 'wait_for_completion');
    const noTarget = await h.api('POST', '/runs', { body: { input: {} } });
    assert.equal(noTarget.status, 400);
    const missing = await h.api('POST', '/runs', { body: { target: 'workflows.nope', input: {} } });
    assert.equal(missing.status, 404);
    const version = await h.api('POST', '/runs', {
      body: { target: 'workflows.text-report@9.9.9', input: { text: 'x' } },
    });
    assert.equal(version.status, 404);
    assert.equal(version.body.issues[0].field, 'version');
    const notJson = await h.api('POST', '/runs', {
      raw: '{nope',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(notJson.status, 400);
    const unknownRun = await h.api('GET', '/runs/run_missing');
    assert.equal(unknownRun.status, 404);
    assert.equal(unknownRun.body.issues[0].code, 'not_found');
  });
});
