import { after, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHarness, type Harness } from './harness.js';
import { gitIn, release, workflowManifest } from './registry-git.js';
import { makeTestContext } from '../helpers/context.js';
import { HANG_MS, waitUntil } from '../helpers/wait.js';
import { startAutomation } from '../../src/automation/index.js';
import { openAutomationDb } from '../../src/automation/db.js';
import { LmdbRunStore } from '../../src/automation/runs/store.js';
import { Run } from '../../src/automation/wire/runs.js';
import { assertWire } from './wire-check.js';

const cleanups: (() => Promise<void> | void)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe('automation service lifecycle and providers', () => {
  it('answers 429 with Retry-After when too many runs are queued', async () => {
    const h: Harness = await startHarness({
      AUTOMATION_MAX_QUEUED_RUNS: '1',
    });
    cleanups.push(() => h.close());
    const slow = await h.api('POST', '/runs', {
      body: { target: 'workflows.text-report', input: { text: 'a', delay_ms: 60000 } },
    });
    await waitUntil(
      'the slow run to start',
      async () => (await h.api('GET', `/runs/${slow.body.id}`)).body.execution.status === 'running',
    );
    const queued = await h.api('POST', '/runs', {
      body: { target: 'workflows.text-report', input: { text: 'b' } },
    });
    assert.equal(queued.status, 201);
    const limited = await h.api('POST', '/runs', {
      body: { target: 'workflows.text-report', input: { text: 'c' } },
    });
    assert.equal(limited.status, 429);
    assert.equal(limited.headers.get('retry-after'), '1');
    assert.equal(limited.body.issues[0].code, 'too_many_queued_runs');
    assert.ok(limited.body.requestId);
    await h.api('POST', `/runs/${queued.body.id}/cancel`);
    await h.api('POST', `/runs/${slow.body.id}/cancel`);
    assert.equal((await h.service.core.runs.waitFor(slow.body.id, HANG_MS)).status, 'cancelled');
  });

  it('after a restart, queued runs run and runs cut off in flight are failed', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-auto-restart-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const first = await makeTestContext({ dataDir });
    const service = await startAutomation(first.ctx);
    const res = await fetch(`${service.url}/api/v1/runs?wait_for_completion=30`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: 'workflows.text-report', input: { text: 'before restart' } }),
    });
    const done = (await res.json()) as { id: string };
    await service.close();
    await first.cleanup();

    // What a crash would leave behind: one run still queued, one marked running.
    const db = openAutomationDb(join(dataDir, 'automation', 'meta.lmdb'));
    const store = new LmdbRunStore(db);
    const base = (await store.get(done.id))!;
    const detail = (await store.getDetail(done.id))!;
    const reset = {
      output: null,
      error: null,
      completedAt: null,
      startedAt: null,
      files: [],
      schemaValid: null,
    };
    await store.create(
      { ...base, ...reset, id: `${done.id}-queued`, status: 'pending' },
      { ...detail, steps: [], trace: [] },
      [],
    );
    await store.create(
      { ...base, ...reset, id: `${done.id}-running`, status: 'running', startedAt: Date.now() },
      { ...detail, steps: [], trace: [] },
      [],
    );
    mkdirSync(join(dataDir, 'automation', 'runs', `${done.id}-queued`, 'output'), { recursive: true });
    // A run stored before ids had the exec_ prefix and before failures had codes.
    const { errorCode: _code, ...legacy } = base;
    await store.create(
      { ...legacy, id: 'run_0legacy000000', status: 'failed', error: 'old failure' },
      detail,
      [],
    );
    await db.close();

    const second = await makeTestContext({ dataDir });
    const again = await startAutomation(second.ctx);
    cleanups.push(async () => {
      await again.close();
      await second.cleanup();
    });
    const requeued = await again.core.runs.waitFor(`${done.id}-queued`, HANG_MS);
    assert.equal(requeued.status, 'completed');
    assert.equal((requeued.output as { text: string }).text, 'before restart');
    const cut = (await again.core.runs.get(`${done.id}-running`))!;
    assert.equal(cut.status, 'failed');
    assert.match(cut.error ?? '', /stopped while the run was in flight/);
    assert.equal(cut.errorCode, 'service_interrupted');
    const old = await fetch(`${again.url}/api/v1/runs/run_0legacy000000?expand=debug`, {
      headers: { authorization: `Bearer ${second.token}` },
    });
    assert.equal(old.status, 200, 'a run id without the exec_ prefix still resolves');
    const oldRun = (await old.json()) as any;
    assertWire(Run, oldRun);
    assert.equal(oldRun.error, 'old failure');
    assert.deepEqual(oldRun.debug.observability.failure, { code: null, message: 'old failure' });
    // The registry is not re-seeded on the second start: still one release.
    const versions = await fetch(`${again.url}/api/v1/automations/workflows.text-report/versions`, {
      headers: { authorization: `Bearer ${second.token}` },
    });
    assert.equal(((await versions.json()) as { total: number }).total, 1);
  });

  it('runs an agent on an OpenAI-compatible provider (a local fake server)', async () => {
    const seen: { auth: string | undefined; body: any }[] = [];
    const handle = async (req: IncomingMessage, res: import('node:http').ServerResponse) => {
      let text = '';
      for await (const chunk of req) text += chunk;
      const body = JSON.parse(text);
      seen.push({ auth: req.headers.authorization, body });
      if (body.model === 'broken') {
        res.writeHead(500).end('{"error":"down"}');
        return;
      }
      const hasToolResult = body.messages.some((m: any) => m.role === 'tool');
      const message = hasToolResult
        ? {
            role: 'assistant',
            content: JSON.stringify({ answer: 'done', toolSaid: JSON.parse(body.messages.at(-1).content) }),
          }
        : {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'c1',
                type: 'function',
                function: { name: 'word_count', arguments: '{"text":"a b c d"}' },
              },
            ],
          };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ choices: [{ message }], usage: { prompt_tokens: 11, completion_tokens: 7 } }));
    };
    const fake: Server = createServer((req, res) => void handle(req, res));
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise<void>((r) => fake.close(() => r())));
    const port = (fake.address() as { port: number }).port;
    const h = await startHarness({
      AUTOMATION_OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      AUTOMATION_OPENAI_API_KEY: 'sk-fake',
    });
    cleanups.push(() => h.close());
    const tools =
      "export const tools = { word_count: { description: 'count', parameters: { type: 'object' }, run: (a) => ({ words: a.text.split(' ').length }) } };\n";
    release(h.registryPath, {
      'agents/gpt/manifest.json': JSON.stringify({
        name: 'GPT',
        type: 'agent',
        entry: 'tools.js',
        model: 'openai:fake-model',
        tools: ['word_count'],
      }),
      'agents/gpt/tools.js': tools,
      'agents/broken/manifest.json': JSON.stringify({
        name: 'Broken',
        type: 'agent',
        entry: 'tools.js',
        model: 'openai:broken',
        tools: ['word_count'],
      }),
      'agents/broken/tools.js': tools,
    });
    gitIn(h.registryPath, ['tag', '-a', 'agents.gpt@1.0.0', '-m', 'gpt']);
    gitIn(h.registryPath, ['tag', '-a', 'agents.broken@1.0.0', '-m', 'broken']);
    assert.equal((await h.api('POST', '/automations/agents.gpt/sync')).status, 200);
    assert.equal((await h.api('POST', '/automations/agents.broken/sync')).status, 200);

    const run = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'agents.gpt', input: { q: 'count' } },
    });
    assert.equal(run.body.execution.status, 'completed', JSON.stringify(run.body));
    assert.deepEqual(run.body.output, { answer: 'done', toolSaid: { words: 4 } });
    assert.equal(seen[0]!.auth, 'Bearer sk-fake');
    assert.equal(seen[0]!.body.model, 'fake-model');
    assert.equal(seen[0]!.body.tools[0].function.name, 'word_count');
    assert.equal(seen[1]!.body.messages.at(-1).tool_call_id, 'c1');
    const usage = (await h.api('GET', `/runs/${run.body.id}/usage`)).body.usage;
    assert.deepEqual(usage.tokens, { input: 22, output: 14, cacheRead: 0, cacheWrite: 0 });

    const failed = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'agents.broken', input: {} },
    });
    assert.equal(failed.body.execution.status, 'failed');
    assert.match(failed.body.error, /answered 500/);
  });

  it('clones the registry from AUTOMATION_REGISTRY_URL and fetches new releases on sync', async () => {
    const origin = mkdtempSync(join(tmpdir(), 'sluice-auto-origin-'));
    cleanups.push(() => rmSync(origin, { recursive: true, force: true }));
    gitIn(origin, ['init', '-q', '-b', 'main']);
    const module = "export default { steps: [{ name: 'one', run: () => 'v1' }] };\n";
    release(
      origin,
      { 'workflows/remote/manifest.json': workflowManifest('Remote'), 'workflows/remote/index.js': module },
      'workflows.remote@1.0.0',
    );
    const h = await startHarness({ AUTOMATION_REGISTRY_URL: origin });
    cleanups.push(() => h.close());
    const list = await h.api('GET', '/automations');
    assert.deepEqual(
      list.body.data.map((a: any) => a.slug),
      ['remote'],
    );
    const one = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.remote', input: {} },
    });
    // A workflow output that is not an object is shown under `value` (Run.output is an object).
    assert.deepEqual(one.body.output, { value: 'v1' });
    release(
      origin,
      { 'workflows/remote/index.js': module.replace("'v1'", "'v2'") },
      'workflows.remote@2.0.0',
    );
    const sync = await h.api('POST', '/automations/workflows.remote/sync');
    assert.equal(sync.body.release.version, '2.0.0');
    const two = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.remote', input: {} },
    });
    assert.deepEqual(two.body.output, { value: 'v2' });
    const pinned = await h.api('POST', `/runs/${one.body.id}/rerun?version=original&wait_for_completion=30`);
    assert.deepEqual(pinned.body.output, { value: 'v1' });
  });
});
