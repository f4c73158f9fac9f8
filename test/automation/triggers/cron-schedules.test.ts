// Schedules on one node (LMDB): the manifest forms of `triggers.cron`, registration and removal
// by sync (the input checked against the input schema), GET /schedules scoped to the tenant, and
// firing with a movable clock: one run per tick as the syncing tenant with trigger cron, overlap
// skip and allow, catch-up after a gap, and two claimers of one tick. The service's own
// scheduler runs on the real clock; the ticks here are put in 2031, which it never reaches, and
// a scheduler of the test's fires them on its clock through the service's run service.
import * as assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { KeyStore } from '../../../src/core/auth/index.js';
import type { Logger } from '../../../src/core/log.js';
import { ApiError } from '../../../src/automation/errors.js';
import type { StartRunRequest } from '../../../src/automation/runs/service.js';
import type { RunRecord } from '../../../src/automation/runs/types.js';
import { parseManifest } from '../../../src/automation/registry/manifest.js';
import type { ScheduleRecord } from '../../../src/automation/triggers/cron/schedule.js';
import { CronExpression } from '../../../src/automation/triggers/cron/expression.js';
import { Scheduler, type FiredTick } from '../../../src/automation/triggers/cron/scheduler.js';
import type { CronMetrics } from '../../../src/automation/triggers/cron/metrics.js';
import { startHarness, type Harness } from '../harness.js';
import { release, workflowManifest } from '../registry-git.js';
import { waitUntil } from '../../helpers/wait.js';

const T0 = Date.parse('2031-01-01T00:00:00Z');
const MINUTE = 60_000;

function manifestWith(cron: unknown) {
  return parseManifest(workflowManifest('x', { triggers: { cron } }), 'manifest.json', 'workflow', 1000);
}

function issuesOf(cron: unknown): string[] {
  try {
    manifestWith(cron);
    return [];
  } catch (err) {
    return (err as { issues: { field: string }[] }).issues.map((i) => i.field);
  }
}

describe('triggers.cron in a manifest', () => {
  it('takes a 5-field or 6-field expression, or the object form', () => {
    assert.deepEqual(manifestWith('0 * * * *').triggers.cron, {
      schedule: '0 * * * *',
      timezone: null,
      input: {},
      overlap: 'skip',
    });
    assert.equal(manifestWith('*/2 * * * * *').triggers.cron?.schedule, '*/2 * * * * *');
    assert.deepEqual(
      manifestWith({ schedule: '30 2 * * *', timezone: 'Europe/Paris', input: { a: 1 }, overlap: 'allow' })
        .triggers.cron,
      { schedule: '30 2 * * *', timezone: 'Europe/Paris', input: { a: 1 }, overlap: 'allow' },
    );
    assert.equal(manifestWith(null).triggers.cron, null);
  });

  it('names the field of each problem', () => {
    assert.deepEqual(issuesOf('* * *'), ['triggers.cron']);
    assert.deepEqual(issuesOf('0 0 0 * * * 2030'), ['triggers.cron']);
    assert.deepEqual(issuesOf('61 * * * *'), ['triggers.cron']);
    assert.deepEqual(issuesOf(5), ['triggers.cron']);
    assert.deepEqual(issuesOf({ schedule: 5 }), ['triggers.cron.schedule']);
    assert.deepEqual(issuesOf({ schedule: '* * * * *', timezone: 'Mars/Base' }), ['triggers.cron.timezone']);
    assert.deepEqual(issuesOf({ schedule: '* * * * *', overlap: 'queue' }), ['triggers.cron.overlap']);
    assert.deepEqual(issuesOf({ schedule: '* * * * *', input: [1] }), ['triggers.cron.input']);
    assert.deepEqual(issuesOf({ schedule: '* * * * *', every: 1 }), ['triggers.cron.every']);
  });
});

describe('daylight-saving changes, as croner documents them (Europe/Paris, 2031)', () => {
  const iso = (xs: number[]) => xs.map((t) => new Date(t).toISOString());
  const expr = (schedule: string) => CronExpression.parse(schedule, 'Europe/Paris') as CronExpression;

  it('a fixed-time schedule runs after a spring-forward gap, and once when its time occurs twice', () => {
    // 30 March: 02:00 → 03:00, so 02:30 does not exist and it runs at 03:00 (01:00Z).
    assert.deepEqual(iso(expr('30 2 * * *').nextTicks(3, Date.parse('2031-03-28T12:00:00Z'))), [
      '2031-03-29T01:30:00.000Z',
      '2031-03-30T01:00:00.000Z',
      '2031-03-31T00:30:00.000Z',
    ]);
    // 26 October: 03:00 → 02:00, so 02:30 occurs twice; it runs at the first (00:30Z).
    assert.deepEqual(iso(expr('30 2 * * *').nextTicks(3, Date.parse('2031-10-24T12:00:00Z'))), [
      '2031-10-25T00:30:00.000Z',
      '2031-10-26T00:30:00.000Z',
      '2031-10-27T01:30:00.000Z',
    ]);
  });

  it('an interval schedule skips the gap and runs on both occurrences of a repeated time', () => {
    assert.deepEqual(iso(expr('*/30 * * * *').nextTicks(3, Date.parse('2031-03-30T00:10:00Z'))), [
      '2031-03-30T00:30:00.000Z',
      '2031-03-30T01:00:00.000Z',
      '2031-03-30T01:30:00.000Z',
    ]);
    assert.deepEqual(iso(expr('*/30 * * * *').nextTicks(4, Date.parse('2031-10-25T23:50:00Z'))), [
      '2031-10-26T00:00:00.000Z',
      '2031-10-26T00:30:00.000Z',
      '2031-10-26T01:00:00.000Z',
      '2031-10-26T01:30:00.000Z',
    ]);
  });

  it('latest gives the ticks at or before a time, latest first', () => {
    const at = Date.parse('2031-03-30T01:00:00Z');
    assert.deepEqual(iso(expr('*/30 * * * *').latest(2, at)), [
      '2031-03-30T01:00:00.000Z',
      '2031-03-30T00:30:00.000Z',
    ]);
    assert.deepEqual(iso(expr('*/30 * * * *').latest(1, at - 1)), ['2031-03-30T00:30:00.000Z']);
  });
});

describe('schedules on one node', () => {
  let h: Harness;
  let other: string;
  let now = T0;
  const counted = { fired: 0, skipped: [] as string[], missed: 0, failed: 0 };
  const metrics: CronMetrics = {
    fired: () => counted.fired++,
    skipped: (r) => counted.skipped.push(r),
    missed: (n) => (counted.missed += n),
    failed: () => counted.failed++,
  };
  let scheduler: (catchup?: number, start?: (req: StartRunRequest) => Promise<RunRecord>) => Scheduler;
  const lines: { level: string; msg: string; fields: any }[] = [];
  const at = (level: string) => (fields: any, msg: string) =>
    void lines.push({
      level,
      msg,
      fields: fields?.err ? { ...fields, err: String(fields.err.stack) } : fields,
    });
  const log = { debug: at('debug'), info: at('info'), warn: at('warn') } as unknown as Logger;
  const store = () => h.service.core.stores.schedules;
  const gate = (name: string) => join(h.dataDir, `gate-${name}`);

  /** Moves the schedule's next tick into the test's clock (2031): only the test's scheduler fires it. */
  const moveTo = async (automationId: string, at: number) => {
    await store().update(automationId, (s) => (s ? { ...s, nextFireAt: at } : undefined));
  };
  const held = (name: string, cron: unknown, extra: Record<string, unknown> = {}) => ({
    [`workflows/${name}/manifest.json`]: workflowManifest(name, {
      inputSchema: { type: 'object', required: ['gate'], properties: { gate: { type: 'string' } } },
      triggers: { cron },
      ...extra,
    }),
    [`workflows/${name}/index.js`]: `import { existsSync } from 'node:fs';
export default { steps: [{ name: 'wait', async run(ctx) {
  while (!existsSync(ctx.input.gate)) await ctx.sleep(10);
  return { gate: ctx.input.gate };
} }] };\n`,
  });
  const sync = (name: string, token?: string) =>
    h.api('POST', `/automations/workflows.${name}/sync`, token === undefined ? {} : { token });
  /** The schedule's runs (listed with trigger=cron), each with its input. */
  const cronRuns = async (automationId: string, token?: string) => {
    const opts = token === undefined ? {} : { token };
    const r = await h.api('GET', `/runs?trigger=cron&source=${automationId}&limit=100`, opts);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return Promise.all(
      (r.body.runs as any[]).map(
        async (run) => (await h.api('GET', `/runs/${run.id}?expand=input`, opts)).body,
      ),
    );
  };
  before(async () => {
    h = await startHarness();
    const keys = h.ctx.ctx.auth as KeyStore;
    other = (await keys.create({ tenant: 'tenant-other', user: 'olga', name: 'o', scopes: ['admin'] })).token;
    scheduler = (catchup = 1, start = (req: StartRunRequest) => h.service.core.runs.start(req)) =>
      new Scheduler({
        store: store(),
        queue: h.service.core.queue,
        start,
        catchup,
        pollMs: 1000,
        log,
        metrics,
        now: () => now,
      });
  });
  after(async () => {
    await h?.close();
  });

  it('a sync registers the schedule as the syncing tenant; GET /schedules lists it for that tenant only', async () => {
    release(
      h.registryPath,
      held('nightly', { schedule: '0 3 * * *', timezone: 'Europe/Paris', input: { gate: gate('n') } }),
      'workflows.nightly@1.0.0',
    );
    const synced = await sync('nightly');
    assert.equal(synced.status, 200, JSON.stringify(synced.body));
    const list = await h.api('GET', '/schedules?next=2');
    assert.equal(list.status, 200);
    assert.equal(list.body.total, 1);
    const s = list.body.data[0];
    assert.equal(s.slug, 'nightly');
    assert.equal(s.schedule, '0 3 * * *');
    assert.equal(s.timezone, 'Europe/Paris');
    assert.equal(s.overlap, 'skip');
    assert.equal(s.nextFireTimes.length, 2);
    // 03:00 in Paris is 01:00 or 02:00 UTC, whichever the season.
    assert.match(s.nextFireTimes[0], /T0[12]:00:00\.000Z$/);
    assert.equal(Date.parse(s.nextFireTimes[1]) - Date.parse(s.nextFireTimes[0]) >= 23 * 60 * MINUTE, true);
    assert.equal((await store().get(s.automationId))?.tenant, 'default');
    const theirs = await h.api('GET', '/schedules', { token: other });
    assert.deepEqual(theirs.body, { data: [], total: 0 });
    assert.equal((await h.api('GET', '/schedules?next=0')).status, 400);
    assert.equal((await h.api('GET', '/schedules?next=abc')).status, 400);
  });

  it('an input the input schema refuses fails the sync with 400 naming the field; nothing changes', async () => {
    release(
      h.registryPath,
      held('nightly', { schedule: '0 3 * * *', input: { gate: 7 } }),
      'workflows.nightly@1.1.0',
    );
    const r = await sync('nightly');
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.ok(
      r.body.issues.some((i: any) => i.field === 'manifest.triggers.cron.input.gate'),
      JSON.stringify(r.body),
    );
    assert.equal((await h.api('GET', '/automations/workflows.nightly')).body.version, '1.0.0');
    const bad = await (async () => {
      release(h.registryPath, held('nightly', 'not a cron'), 'workflows.nightly@1.1.1');
      return sync('nightly');
    })();
    assert.equal(bad.status, 400);
    assert.equal(bad.body.issues[0].field, 'manifest.triggers.cron');
  });

  it('a release without a schedule removes it', async () => {
    release(h.registryPath, held('nightly', null), 'workflows.nightly@1.2.0');
    assert.equal((await sync('nightly')).status, 200);
    assert.deepEqual((await h.api('GET', '/schedules')).body, { data: [], total: 0 });
  });

  it('fires one run per tick as the syncing tenant, trigger cron and no user; skips while the last one runs', async () => {
    release(
      h.registryPath,
      held('ticker', { schedule: '* * * * *', input: { gate: gate('t1') } }),
      'workflows.ticker@1.0.0',
    );
    // Synced by another tenant's key: the runs are that tenant's.
    assert.equal((await sync('ticker', other)).status, 200);
    const id = (await h.api('GET', '/automations/workflows.ticker')).body.id as string;
    await moveTo(id, T0);
    now = T0 - 1;
    assert.deepEqual(await scheduler().fireDue(), []);
    now = T0;
    const first = await scheduler().fireDue();
    assert.equal(first.length, 1, JSON.stringify([lines, await store().get(id)]));
    assert.equal(first[0]!.outcome.tick, T0);
    assert.equal(first[0]!.outcome.nextFireAt, T0 + MINUTE);
    const runId = first[0]!.outcome.fired!.runId;
    // The tick is gone: asking again at the same time fires nothing.
    assert.deepEqual(await scheduler().fireDue(), []);
    const run = await h.api('GET', `/runs/${runId}?expand=input`, { token: other });
    assert.equal(run.status, 200);
    assert.deepEqual(run.body.trigger, { type: 'cron', by: null });
    assert.deepEqual(run.body.input.metadata, { schedule: { tick: new Date(T0).toISOString() } });
    assert.equal(
      (await h.api('GET', `/runs/${runId}`)).status,
      404,
      "the default tenant does not see the other's run",
    );
    const listed = await h.api('GET', `/runs?trigger=cron&source=${id}`, { token: other });
    assert.deepEqual(
      listed.body.runs.map((r: any) => r.id),
      [runId],
    );

    // The run waits on its gate: the next tick is skipped, and recorded.
    now = T0 + MINUTE;
    const second = await scheduler().fireDue();
    assert.deepEqual(second[0]!.outcome.skipped, { reason: 'overlap' });
    assert.deepEqual(counted.skipped, ['overlap']);
    assert.ok(
      lines.some((l) => l.level === 'debug' && l.msg === 'schedule tick fired' && l.fields.run === runId),
    );
    assert.ok(
      lines.some(
        (l) => l.level === 'info' && l.msg === 'schedule tick skipped' && l.fields.previousRun === runId,
      ),
    );
    const s = (await h.api('GET', '/schedules', { token: other })).body.data[0];
    assert.equal(s.skipped, 1);
    assert.equal(s.fired, 1);
    assert.equal(s.lastSkipReason, 'overlap');
    assert.equal(s.lastRunId, runId);
    assert.equal(s.nextFireAt, new Date(T0 + 2 * MINUTE).toISOString());

    writeFileSync(gate('t1'), '');
    await waitUntil('the first scheduled run to end', async () => {
      const r = await h.api('GET', `/runs/${runId}`, { token: other });
      return r.body.finished === true;
    });
    now = T0 + 2 * MINUTE;
    const third = await scheduler().fireDue();
    assert.ok(third[0]!.outcome.fired, JSON.stringify(third));
  });

  it('overlap allow fires while the previous run still runs', async () => {
    release(
      h.registryPath,
      held('parallel', { schedule: '* * * * *', input: { gate: gate('p') }, overlap: 'allow' }),
      'workflows.parallel@1.0.0',
    );
    assert.equal((await sync('parallel')).status, 200);
    const id = (await h.api('GET', '/automations/workflows.parallel')).body.id as string;
    await moveTo(id, T0);
    now = T0;
    assert.ok((await scheduler().fireDue())[0]!.outcome.fired);
    now = T0 + MINUTE;
    assert.ok((await scheduler().fireDue())[0]!.outcome.fired);
    assert.equal((await cronRuns(id)).length, 2);
    writeFileSync(gate('p'), '');
  });

  it('after a gap only the latest AUTOMATION_CRON_CATCHUP ticks fire; the rest count as missed', async () => {
    writeFileSync(gate('c'), '');
    release(
      h.registryPath,
      held('catchup', { schedule: '* * * * *', input: { gate: gate('c') }, overlap: 'allow' }),
      'workflows.catchup@1.0.0',
    );
    assert.equal((await sync('catchup')).status, 200);
    const id = (await h.api('GET', '/automations/workflows.catchup')).body.id as string;
    await moveTo(id, T0);
    counted.missed = 0;
    // Ten ticks due (T0 … T0+9m), default catch-up: the latest alone.
    now = T0 + 9 * MINUTE + 30_000;
    const mine = (fired: FiredTick[]) => fired.filter((f) => f.automationId === id);
    const one = mine(await scheduler().fireDue());
    assert.deepEqual(
      one.map((f) => [f.outcome.tick, f.outcome.missed]),
      [[T0 + 9 * MINUTE, 9]],
    );
    assert.ok(
      lines.some(
        (l) =>
          l.level === 'info' &&
          l.msg.includes('caught up') &&
          l.fields.automation === id &&
          l.fields.missed === 9,
      ),
    );
    // Ten more, catch-up 3: the three latest, oldest first.
    now = T0 + 19 * MINUTE + 30_000;
    const three = mine(await scheduler(3).fireDue());
    assert.deepEqual(
      three.map((f) => [f.outcome.tick, f.outcome.missed]),
      [
        [T0 + 17 * MINUTE, 7],
        [T0 + 18 * MINUTE, 0],
        [T0 + 19 * MINUTE, 0],
      ],
    );
    const ticks = (await cronRuns(id)).map((r) => r.input.metadata.schedule.tick).sort();
    assert.deepEqual(
      ticks,
      [9, 17, 18, 19].map((m) => new Date(T0 + m * MINUTE).toISOString()),
    );
    const s = (await store().get(id)) as ScheduleRecord;
    assert.equal(s.missed, 16);
    assert.equal(s.nextFireAt, T0 + 20 * MINUTE);
  });

  it('two claimers of one tick start one run', async () => {
    const id = (await h.api('GET', '/automations/workflows.catchup')).body.id as string;
    now = T0 + 20 * MINUTE;
    const both = await Promise.all([scheduler().fireDue(), scheduler().fireDue()]);
    assert.equal(both.flat().filter((f) => f.automationId === id).length, 1);
    const ticks = (await cronRuns(id)).map((r) => r.input.metadata.schedule.tick);
    assert.equal(ticks.filter((t) => t === new Date(T0 + 20 * MINUTE).toISOString()).length, 1);
  });

  it('a start refused with a 4xx skips the tick with its code; any other failure leaves the tick due', async () => {
    const id = (await h.api('GET', '/automations/workflows.catchup')).body.id as string;
    now = T0 + 21 * MINUTE;
    const refused = await scheduler(1, () =>
      Promise.reject(new ApiError(429, 'too_many_queued_runs', 'the queue is full')),
    ).fireDue();
    assert.deepEqual(
      refused.filter((f) => f.automationId === id).map((f) => f.outcome.skipped),
      [{ reason: 'too_many_queued_runs' }],
    );
    assert.equal((await store().get(id))?.lastSkipReason, 'too_many_queued_runs');
    now = T0 + 22 * MINUTE;
    const failed = counted.failed;
    const broken = await scheduler(1, () => Promise.reject(new Error('the database is down'))).fireDue();
    assert.deepEqual(
      broken.filter((f) => f.automationId === id),
      [],
    );
    assert.ok(counted.failed > failed);
    assert.equal((await store().get(id))?.nextFireAt, T0 + 22 * MINUTE);
    // Once the start works again the same tick fires.
    const again = await scheduler().fireDue();
    assert.deepEqual(
      again.filter((f) => f.automationId === id).map((f) => f.outcome.tick),
      [T0 + 22 * MINUTE],
    );
  });
});
