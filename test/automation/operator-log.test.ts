// What an operator reads in the automation service's log at info: a registry sync (automation,
// package, version, commit, tenant and user of the key, what changed) and a run's start and
// stored end (id, tenant, automation, status, duration), never a run's input or output.
import { strict as assert } from 'node:assert';
import { after, before, it } from 'node:test';
import { pino } from 'pino';
import { startAutomation } from '../../src/automation/index.js';
import type { RunningService } from '../../src/core/service.js';
import { makeTestContext, type TestContext } from '../helpers/context.js';

const lines: Record<string, unknown>[] = [];
let t: TestContext;
let service: RunningService;

before(async () => {
  t = await makeTestContext();
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  service = await startAutomation({ ...t.ctx, log });
});
after(async () => {
  await service?.close();
  await t?.cleanup();
});

it('logs the sync with the release, the tenant and what changed', async () => {
  const res = await fetch(`${service.addresses.http}/automations/workflows.text-report/sync`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}` },
  });
  assert.equal(res.status, 200, await res.clone().text());
  const body = (await res.json()) as {
    automation: { id: string };
    release: { version: string; commit: string };
  };
  const line = lines.find((l) => l.msg === 'automation synced');
  assert.ok(line, JSON.stringify(lines.map((l) => l.msg)));
  assert.equal(line.automation, body.automation.id);
  assert.equal(line.package, 'workflows/text-report');
  assert.equal(line.version, body.release.version);
  assert.equal(line.commit, body.release.commit);
  assert.equal(line.tenant, 'default');
  assert.equal(line.changed, false, 'synced at start already: nothing new');
  assert.equal(line.level, 30);
});

it('logs the start and the stored end of a run, without its input or output', async () => {
  const secret = 'a-text-that-must-not-reach-the-log';
  const res = await fetch(`${service.addresses.http}/runs?wait_for_completion=60`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ target: 'workflows.text-report', input: { text: secret } }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const run = (await res.json()) as { id: string; execution: { status: string } };
  assert.equal(run.execution.status, 'completed');
  const started = lines.find((l) => l.msg === 'run started' && l.run === run.id);
  const ended = lines.find((l) => l.msg === 'run ended' && l.run === run.id);
  assert.ok(started, JSON.stringify(lines.map((l) => l.msg)));
  assert.ok(ended, JSON.stringify(lines.map((l) => l.msg)));
  for (const line of [started, ended]) {
    assert.equal(line.level, 30);
    assert.equal(line.tenant, 'default');
    assert.equal(line.automation, 'text-report');
    assert.equal(line.trigger, 'api');
  }
  assert.equal(ended.status, 'completed');
  assert.equal(typeof ended.durationMs, 'number');
  assert.ok(!JSON.stringify(lines).includes(secret), 'no run input in the log');
});
