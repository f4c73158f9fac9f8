import { after, before, describe, it } from 'node:test';
import type { LmdbAutomationStore } from '../../src/automation/registry/store.js';
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Value } from '@sinclair/typebox/value';
import * as W from '../../src/automation/wire/index.js';
import { startHarness, type Harness } from './harness.js';
import { release, workflowManifest } from './registry-git.js';

describe('automation registry: sync, versions, rerun', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(async () => {
    await h?.close();
  });

  it('sync is idempotent for an unchanged release and rejects versioned or unknown targets', async () => {
    const first = await h.api('POST', '/automations/workflows.text-report/sync');
    assert.equal(first.status, 200);
    assert.equal(first.body.release.version, '1.0.0');
    assert.equal(first.body.release.tag, 'workflows.text-report@1.0.0');
    assert.ok(Value.Check(W.AutomationsSyncResponse, first.body), JSON.stringify(first.body));
    const again = await h.api('POST', `/automations/${first.body.automation.id}/sync`);
    assert.deepEqual(again.body, first.body);
    const versioned = await h.api('POST', '/automations/workflows.text-report@1.0.0/sync');
    assert.equal(versioned.status, 400);
    assert.equal(versioned.body.issues[0].code, 'versioned_target');
    const unknown = await h.api('POST', '/automations/workflows.does-not-exist/sync');
    assert.equal(unknown.status, 404);
    const unknownId = await h.api('POST', '/automations/aut_nothing/sync');
    assert.equal(unknownId.status, 404);
  });

  it('answers exactly the public types: list, detail, versions, triggers', async () => {
    const list = await h.api('GET', '/automations?limit=1&offset=1');
    assert.ok(Value.Check(W.ListAutomationsResponse, list.body), JSON.stringify(list.body));
    assert.deepEqual(
      [list.body.total, list.body.limit, list.body.offset, list.body.data.length],
      [2, 1, 1, 1],
    );
    const all = await h.api('GET', '/automations');
    const ids = Object.fromEntries(all.body.data.map((a: any) => [a.slug, a.id]));
    // Workflows get the product's `wf_` prefix, agents `agt_`.
    assert.match(ids['text-report'], /^wf_[0-9a-f]{20}$/);
    assert.match(ids['echo-agent'], /^agt_[0-9a-f]{20}$/);
    const detail = await h.api('GET', `/automations/${ids['echo-agent']}`);
    assert.ok(Value.Check(W.AutomationDetail, detail.body), JSON.stringify(detail.body));
    assert.equal(detail.body.version, '1.0.0');
    assert.deepEqual(detail.body.triggers, { api: true, email: false, manual: true, cron: false });
    // The SDK turns a `{type, id}` target into `<type>s.<id>`; the wrong type prefix names nothing.
    const typed = await h.api('GET', `/automations/agents.${ids['echo-agent']}`);
    assert.equal(typed.body.id, ids['echo-agent']);
    assert.equal((await h.api('GET', `/automations/workflows.${ids['echo-agent']}`)).status, 404);
    const versions = await h.api('GET', `/automations/workflows.${ids['text-report']}/versions`);
    assert.ok(Value.Check(W.ListAutomationVersionsResponse, versions.body), JSON.stringify(versions.body));
    assert.equal(versions.body.data[0]?.isCurrent, true);
    const triggers = await h.api('GET', '/automations/workflows.text-report/triggers');
    assert.ok(Value.Check(W.AutomationTriggersResponse, triggers.body), JSON.stringify(triggers.body));
    assert.equal(triggers.body.type, 'workflow');
    const missing = await h.api('GET', '/automations/wf_definitely_does_not_exist_xxx');
    assert.equal(missing.status, 404);
    assert.equal(missing.body.issues[0].code, 'not_found');
  });

  it('an automation synced under an earlier id keeps it', async () => {
    // A registry synced by an older version named automations `aut_<hash>`; runs and datasets
    // refer to that id, so a sync must not move the automation to a new one.
    // Records as an older version left them in LMDB, written below the store interface.
    const { db } = h.service.core.stores.automations as LmdbAutomationStore;
    const current = (await h.api('GET', '/automations/agents.echo-agent')).body;
    const record = { ...(db.automations.get(current.id) as object), id: 'aut_legacy0000000000000' };
    await db.automations.put('aut_legacy0000000000000', record);
    await db.aliases.put('agents.echo-agent', 'aut_legacy0000000000000');
    await db.automations.remove(current.id);
    const sync = await h.api('POST', '/automations/agents.echo-agent/sync');
    assert.equal(sync.body.automation.id, 'aut_legacy0000000000000');
    const list = await h.api('GET', '/automations?type=agent');
    assert.deepEqual(
      list.body.data.map((a: any) => a.id),
      ['aut_legacy0000000000000'],
    );
  });

  it('a new release changes versions; rerun pins original or takes latest', async () => {
    const old = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.text-report', input: { text: 'a b' } },
    });
    assert.equal(old.body.source.version, '1.0.0');
    assert.equal(old.body.output.edition, undefined);

    const source = readFileSync(join(h.registryPath, 'workflows/text-report/index.js'), 'utf8');
    const changed = source.replace(
      'return { text: ctx.steps.normalize.text, ...ctx.steps.analyze, report: ctx.steps.report.file };',
      "return { text: ctx.steps.normalize.text, ...ctx.steps.analyze, report: ctx.steps.report.file, edition: 'two' };",
    );
    assert.notEqual(changed, source);
    const commit = release(
      h.registryPath,
      { 'workflows/text-report/index.js': changed },
      'workflows.text-report@1.1.0',
    );

    // Not synced yet: latest is still the synced 1.0.0, but the new tag can be asked for.
    const explicit = await h.api('POST', '/runs?wait_for_completion=30&version=1.1.0', {
      body: { target: 'workflows.text-report', input: { text: 'x' } },
    });
    assert.equal(explicit.body.source.version, '1.1.0');
    assert.equal(explicit.body.output.edition, 'two');

    assert.equal((await h.api('GET', '/automations/workflows.text-report')).body.version, '1.0.0');
    const sync = await h.api('POST', '/automations/workflows.text-report/sync');
    assert.equal(sync.body.release.version, '1.1.0');
    assert.equal((await h.api('GET', '/automations/workflows.text-report')).body.version, '1.1.0');
    assert.equal(sync.body.release.commit, commit);
    const syncAgain = await h.api('POST', '/automations/workflows.text-report/sync');
    assert.deepEqual(syncAgain.body, sync.body);

    const versions = await h.api('GET', '/automations/workflows.text-report/versions');
    assert.deepEqual(
      versions.body.data.map((v: any) => [v.version, v.isCurrent]),
      [
        ['1.1.0', true],
        ['1.0.0', false],
      ],
    );

    const latest = await h.api('POST', `/runs/${old.body.id}/rerun?wait_for_completion=30`);
    assert.equal(latest.status, 200);
    assert.equal(latest.body.source.version, '1.1.0');
    assert.equal(latest.body.output.edition, 'two');
    assert.equal(latest.body.execution.retry.previousRunId, old.body.id);
    assert.equal(latest.body.execution.retry.number, 1);

    const original = await h.api(
      'POST',
      `/runs/${old.body.id}/rerun?version=original&wait_for_completion=30`,
    );
    assert.equal(original.body.source.version, '1.0.0');
    assert.equal(original.body.source.git.commitSha, old.body.source.git.commitSha);
    assert.equal(original.body.output.edition, undefined);
    assert.deepEqual(original.body.output.text, 'a b');

    const oldNow = await h.api('GET', `/runs/${old.body.id}`);
    assert.equal(oldNow.body.execution.retry.nextRun.id, original.body.id);

    const byRef = await h.api('POST', '/runs?wait_for_completion=30&version=main', {
      body: { target: 'workflows.text-report', input: { text: 'y' } },
    });
    assert.equal(byRef.body.source.git.commitSha, commit);
    assert.equal(byRef.body.source.git.resolvedTag, null);

    const conflict = await h.api('POST', '/runs?version=1.1.0', {
      body: { target: 'workflows.text-report@1.0.0', input: { text: 'y' } },
    });
    assert.equal(conflict.status, 400);
  });

  it('an invalid manifest in the latest release is a 400 on sync', async () => {
    release(
      h.registryPath,
      {
        'workflows/broken/manifest.json': '{"name": 5, "type": "workflow"}',
        'workflows/broken/index.js': 'export default {}',
      },
      'workflows.broken@0.1.0',
    );
    const res = await h.api('POST', '/automations/workflows.broken/sync');
    assert.equal(res.status, 400);
    const fields = res.body.issues.map((i: any) => i.field).sort();
    assert.deepEqual(fields, ['manifest.entry', 'manifest.name']);
    release(
      h.registryPath,
      { 'workflows/no-manifest/index.js': 'export default {}' },
      'workflows.no-manifest@1.0.0',
    );
    const missing = await h.api('POST', '/automations/workflows.no-manifest/sync');
    assert.equal(missing.status, 404);
  });

  it('a YAML manifest with a new workflow syncs and runs', async () => {
    release(
      h.registryPath,
      {
        'workflows/upper/manifest.yaml':
          'schemaVersion: 1\nname: Upper\ntype: workflow\nentry: main.js\ntimeout: 30s\n',
        'workflows/upper/main.js':
          "export default { steps: [{ name: 'up', run: (ctx) => String(ctx.input.s).toUpperCase() }] };\n",
      },
      'workflows.upper@0.1.0',
    );
    const sync = await h.api('POST', '/automations/workflows.upper/sync');
    assert.equal(sync.status, 200);
    assert.equal(sync.body.release.version, '0.1.0');
    assert.match(sync.body.automation.id, /^wf_[0-9a-f]{20}$/);
    const run = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: 'workflows.upper', input: { s: 'abc' } },
    });
    // Run.output is an object in the SDK's type: a string result comes wrapped.
    assert.deepEqual(run.body.output, { value: 'ABC' });
    assert.equal(run.body.execution.schemaValid, null);
  });

  it('a workflow manifest without api trigger cannot be started over the API', async () => {
    release(
      h.registryPath,
      {
        'workflows/manual-only/manifest.json': workflowManifest('Manual only', { triggers: { api: false } }),
        'workflows/manual-only/index.js': "export default { steps: [{ name: 'a', run: () => 1 }] };\n",
      },
      'workflows.manual-only@1.0.0',
    );
    assert.equal((await h.api('POST', '/automations/workflows.manual-only/sync')).status, 200);
    const run = await h.api('POST', '/runs', { body: { target: 'workflows.manual-only', input: {} } });
    assert.equal(run.status, 403);
    assert.equal(run.body.issues[0].code, 'api_trigger_disabled');
  });
});
