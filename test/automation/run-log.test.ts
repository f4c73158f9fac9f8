// A run leaves two info lines: one when it starts executing and one when its end is stored, with
// its id, tenant, automation, status and duration, never its input or output.
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
