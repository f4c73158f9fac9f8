import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import type { KeyStore } from '../../src/core/auth/index.js';
import { Run } from '../../src/automation/wire/runs.js';
import { startHarness, type Harness } from './harness.js';
import { gitIn, release, workflowManifest } from './registry-git.js';
import { assertWire } from './wire-check.js';
import { HANG_MS } from '../helpers/wait.js';

describe('run start: targets, file references, triggers and rerun lineage', () => {
  let h: Harness;
  let workflowId: string;
  let agentId: string;
  before(async () => {
    h = await startHarness();
    release(h.registryPath, {
      'workflows/file-echo/manifest.json': workflowManifest('File echo'),
      'workflows/file-echo/index.js': `export default { steps: [{ name: 'read', async run(ctx) {
        const files = {};
        for (const f of ctx.files.input) files[f.name] = (await ctx.files.read(f.name)).toString('utf8');
        return { files, input: ctx.input };
      } }] };\n`,
    });
    gitIn(h.registryPath, ['tag', '-a', 'workflows.file-echo@1.0.0', '-m', 'x']);
    assert.equal((await h.api('POST', '/automations/workflows.file-echo/sync')).status, 200);
    workflowId = (await h.api('GET', '/automations/workflows.text-report')).body.id;
    agentId = (await h.api('GET', '/automations/agents.echo-agent')).body.id;
  });
  after(async () => {
    await h?.close();
  });

  async function upload(content: string, filename: string, token = h.token): Promise<string> {
    const form = new FormData();
    form.append('purpose', 'run-input');
    form.append('file', new Blob([content], { type: 'text/plain' }), filename);
    const res = await fetch(`${h.url}/api/v1/files`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: form,
    });
    assert.equal(res.status, 200);
    return ((await res.json()) as { id: string }).id;
  }

  const start = (body: unknown, query = '?wait_for_completion=30', headers: Record<string, string> = {}) =>
    h.api('POST', `/runs${query}`, { body, headers });

  it('accepts the targets the SDK builds: workflows.<id>, agents.<id>, slugs, @version and ?version', async () => {
    // client.run({type: 'workflow', id}) sends `workflows.<id>`; a string target's @version goes as ?version.
    for (const [target, query] of [
      [`workflows.${workflowId}`, ''],
      [workflowId, ''],
      ['workflows.text-report@1.0.0', ''],
      ['workflows.text-report', '&version=1.0.0'],
      [`workflows.${workflowId}`, '&version=latest'],
    ] as const) {
      const res = await start({ target, input: { text: 'a b' } }, `?wait_for_completion=30${query}`);
      assert.equal(res.status, 200, `${target}${query}: ${JSON.stringify(res.body)}`);
      assertWire(Run, res.body);
      assert.equal(res.body.source.id, workflowId);
      assert.equal(res.body.source.version, '1.0.0');
    }
    const agent = await start({ target: `agents.${agentId}`, input: { text: 'x' } });
    assert.equal(agent.status, 200);
    assert.equal(agent.body.type, 'agent');
    // A typed target must name an automation of that type.
    const wrongType = await start({ target: `agents.${workflowId}`, input: { text: 'x' } });
    assert.equal(wrongType.status, 404);
    assert.equal(wrongType.body.issues[0].field, 'target');
    const clash = await start(
      { target: 'workflows.text-report@1.0.0', input: { text: 'x' } },
      '?version=2.0.0',
    );
    assert.equal(clash.status, 400);
    assert.equal(clash.body.issues[0].field, 'version');
  });

  it('takes a top-level input {$fileId} (the SDK pre-upload) as an input file, in JSON and multipart', async () => {
    const big = await upload('pre-uploaded bytes', 'big.txt');
    const json = await start({ target: 'workflows.file-echo', input: { doc: { $fileId: big }, lang: 'en' } });
    assert.equal(json.status, 200, JSON.stringify(json.body));
    assert.deepEqual(json.body.output, {
      files: { 'doc/big.txt': 'pre-uploaded bytes' },
      input: { lang: 'en' },
    });

    // Small files ride as multipart parts while the large one is referenced in the `input` part.
    const form = new FormData();
    form.append('target', 'workflows.file-echo');
    form.append('input', JSON.stringify({ doc: { $fileId: big }, lang: 'de' }));
    form.append('files.note', new Blob(['small part'], { type: 'text/plain' }), 'note.txt');
    const multi = await h.api('POST', '/runs?wait_for_completion=30', { raw: form });
    assert.equal(multi.status, 200, JSON.stringify(multi.body));
    assert.deepEqual(multi.body.output, {
      files: { 'doc/big.txt': 'pre-uploaded bytes', 'note/note.txt': 'small part' },
      input: { lang: 'de' },
    });
    const artifacts = (await h.api('GET', `/runs/${multi.body.id}/artifacts`)).body.artifacts;
    assert.deepEqual(artifacts.map((a: any) => [a.path, a.role]).sort(), [
      ['input/doc/big.txt', 'input'],
      ['input/note/note.txt', 'input'],
    ]);
    const expanded = await h.api('GET', `/runs/${multi.body.id}?expand=input`);
    assertWire(Run, expanded.body);
    assert.deepEqual(expanded.body.input.files.map((f: any) => f.name).sort(), [
      'doc/big.txt',
      'note/note.txt',
    ]);

    // Another tenant's file id is not found; a malformed one is a 400.
    const keys = h.ctx.ctx.auth as KeyStore;
    const other = (await keys.create({ tenant: 'other', user: 'o', scopes: ['automation'] })).token;
    const theirs = await upload('theirs', 'theirs.txt', other);
    const foreign = await start({ target: 'workflows.file-echo', input: { doc: { $fileId: theirs } } });
    assert.equal(foreign.status, 404);
    assert.equal(foreign.body.issues[0].field, 'files.doc');
    const bad = await start({ target: 'workflows.file-echo', input: { doc: { $fileId: '../x' } } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.issues[0].field, 'input.doc.$fileId');
    // Anything else shaped like an object stays input.
    const plain = await start({ target: 'workflows.file-echo', input: { doc: { $fileId: big, page: 1 } } });
    assert.deepEqual(plain.body.output.input, { doc: { $fileId: big, page: 1 } });
  });

  it('records the X-Eigenpal-Trigger header as trigger.type (api by default)', async () => {
    const cli = await start(
      { target: 'workflows.text-report', input: { text: 'x' } },
      '?wait_for_completion=30',
      {
        'x-eigenpal-trigger': 'cli',
      },
    );
    assert.equal(cli.body.trigger.type, 'cli');
    const listed = await h.api('GET', '/runs?trigger=cli');
    assert.deepEqual(
      listed.body.runs.map((r: any) => r.id),
      [cli.body.id],
    );
  });

  it('links a rerun both ways: the source gets execution.retry.nextRun, the rerun its previousRunId', async () => {
    const first = await start({ target: 'workflows.text-report', input: { text: 'again' } });
    const rerun = await h.api('POST', `/runs/${first.body.id}/rerun?wait_for_completion=30`);
    assert.equal(rerun.status, 200);
    assertWire(Run, rerun.body);
    assert.deepEqual(rerun.body.execution.retry, { number: 1, previousRunId: first.body.id, nextRun: null });
    const source = await h.api('GET', `/runs/${first.body.id}`);
    assert.deepEqual(source.body.execution.retry.nextRun, { id: rerun.body.id, status: 'completed' });
    const listed = await h.api('GET', `/runs?ids=${first.body.id}`);
    assert.deepEqual(listed.body.runs[0].execution.retry.nextRun, { id: rerun.body.id, status: 'completed' });
    const asyncRerun = await h.api('POST', `/runs/${rerun.body.id}/rerun`);
    assert.equal(asyncRerun.status, 201);
    assert.deepEqual(asyncRerun.body, { id: asyncRerun.body.id, type: 'workflow', finished: false });
    await h.service.core.runs.waitFor(asyncRerun.body.id, HANG_MS);
  });
});
