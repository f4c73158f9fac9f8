// A registry sync leaves one info line: automation, package, version, commit, tenant and user of
// the key, and what changed.
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
