// Dry runs: the decision a request would get, its matched rule and remaining quota, without
// counting — the counters and the statistics stay where they were. Then the console's views of
// the service over HTTP: dry run, loaded rules as a tree, per-rule counters, all behind a key.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningService } from '../../src/core/service.js';
import { startRatelimit } from '../../src/ratelimit/index.js';
import { ManualClock } from '../../src/ratelimit/engine/clock.js';
import { Code } from '../../src/ratelimit/types.js';
import { makeTestContext, type TestContext } from '../helpers/context.js';
import { fixture, makeEngine, rulesFrom } from './helpers.js';

const request = (entries: [string, string][], hitsAddend?: number) => ({
  domain: 'test-domain',
  descriptors: [{ entries: entries.map(([key, value]) => ({ key, value })) }],
  ...(hitsAddend === undefined ? {} : { hitsAddend }),
});

describe('engine dry run', () => {
  it('answers like a decision without moving any counter or statistic', () => {
    const { engine, stats } = makeEngine(rulesFrom({ 'basic.yaml': fixture('basic.yaml') }));
    const key1 = request([['key1', 'anything']]); // 3 per minute
    const before = [...stats.snapshot()];
    for (let i = 0; i < 5; i++) {
      const dry = engine.dryRun(key1);
      assert.ok(!(dry instanceof Promise));
      assert.equal(dry.response.overallCode, Code.OK);
      assert.equal(dry.response.statuses[0]!.limitRemaining, 2, 'as if it were the first hit');
      assert.equal(dry.inWindow[0], 0);
      assert.equal(dry.rules[0]?.fullKey, 'test-domain.key1');
    }
    assert.deepEqual([...stats.snapshot()], before, 'no statistic moved');

    // Two real hits, then the dry run sees them.
    assert.ok(!(engine.shouldRateLimit(key1) instanceof Promise));
    assert.ok(!(engine.shouldRateLimit(key1) instanceof Promise));
    const snapshot = [...stats.snapshot()];
    const seen = engine.dryRun(key1);
    assert.ok(!(seen instanceof Promise));
    assert.equal(seen.inWindow[0], 2);
    assert.equal(seen.response.statuses[0]!.limitRemaining, 0);
    assert.equal(seen.response.overallCode, Code.OK);
    const over = engine.dryRun(request([['key1', 'anything']], 2));
    assert.ok(!(over instanceof Promise));
    assert.equal(over.response.overallCode, Code.OVER_LIMIT);
    assert.deepEqual([...stats.snapshot()], snapshot);
    // The real decision afterwards counts from where the real hits left it (the dry runs added nothing).
    const third = engine.shouldRateLimit(key1);
    assert.ok(!(third instanceof Promise));
    assert.equal(third.overallCode, Code.OK);
    assert.equal(third.statuses[0]!.limitRemaining, 0);
  });

  it('names no rule for a descriptor nothing matches, and refuses what a decision refuses', () => {
    const { engine } = makeEngine(rulesFrom({ 'basic.yaml': fixture('basic.yaml') }));
    const none = engine.dryRun(request([['nothing', 'here']]));
    assert.ok(!(none instanceof Promise));
    assert.equal(none.rules[0], undefined);
    assert.equal(none.response.overallCode, Code.OK);
    assert.throws(() => engine.dryRun({ domain: '', descriptors: [] }), /domain must not be empty/);
  });
});

describe('rate limit console views over HTTP', () => {
  let t: TestContext;
  let service: RunningService;
  let runtime: string;
  let http: string;
  let auth: Record<string, string>;

  before(async () => {
    runtime = mkdtempSync(join(tmpdir(), 'sluice-rl-dry-'));
    mkdirSync(join(runtime, 'config'));
    writeFileSync(join(runtime, 'config', 'basic.yaml'), fixture('basic.yaml'));
    t = await makeTestContext({
      env: { RUNTIME_ROOT: runtime, RUNTIME_WATCH_ROOT: 'false', WINDOW_ALGORITHM: 'fixed' },
    });
    service = await startRatelimit(t.ctx, { clock: new ManualClock(Date.now()) });
    http = service.addresses.http!;
    auth = { authorization: `Bearer ${t.token}` };
  });
  after(async () => {
    await service?.close();
    await t?.cleanup();
    rmSync(runtime, { recursive: true, force: true });
  });

  const dryRun = (body: unknown, headers: Record<string, string> = auth) =>
    fetch(`${http}/json/dry-run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  // The counters without their history ring (which moves with the clock, not with the requests).
  const stats = async () =>
    (
      (await (await fetch(`${http}/json/stats`, { headers: auth })).json()) as {
        rules: { key: string; history?: unknown }[];
      }
    ).rules.map(({ history: _history, ...counters }) => counters);

  it('needs a key for the views, while /json stays open', async () => {
    assert.equal((await dryRun(request([['key1', 'x']]), {})).status, 401);
    assert.equal((await fetch(`${http}/json/config`)).status, 401);
    assert.equal((await fetch(`${http}/json/stats`)).status, 401);
    const decision = await fetch(`${http}/json`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(request([['key2', 'a']])),
    });
    assert.equal(decision.status, 200);
  });

  it('dry-runs a request: decision, matched rule, remaining quota, and the counters do not move', async () => {
    const body = request([['key1', 'dry']]);
    const before = await stats();
    for (let i = 0; i < 4; i++) {
      const res = await dryRun(body);
      assert.equal(res.status, 200);
      const answer = (await res.json()) as any;
      assert.equal(answer.dryRun, true);
      assert.equal(answer.overallCode, 'OK');
      assert.equal(answer.statuses[0].limitRemaining, 2);
      assert.equal(answer.statuses[0].hitsInWindow, 0);
      assert.deepEqual(answer.statuses[0].matchedRule, {
        source: 'config',
        metricKey: 'test-domain.key1',
        name: '',
        requestsPerUnit: 3,
        unit: 'MINUTE',
        unlimited: false,
        shadowMode: false,
        quotaMode: false,
        replaces: [],
      });
    }
    assert.deepEqual(await stats(), before, 'per-rule counters unchanged by dry runs');
    // A real decision moves them, and the next dry run sees the hit.
    await fetch(`${http}/json`, { method: 'POST', body: JSON.stringify(body) });
    const after = (await (await dryRun(body)).json()) as any;
    assert.equal(after.statuses[0].hitsInWindow, 1);
    assert.equal(after.statuses[0].limitRemaining, 1);
  });

  it('answers a bad dry-run body with a 400 that says why', async () => {
    const res = await dryRun({ domain: 'test-domain', descriptors: [{ entries: 'no' }] });
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { code: string }).code, 'bad_request');
    const empty = await dryRun({ domain: '', descriptors: [] });
    assert.equal(empty.status, 400);
  });

  it('lists every configured rule, zeros until hit, each with its recent history', async () => {
    const body = (await (await fetch(`${http}/json/stats`, { headers: auth })).json()) as any;
    assert.equal(body.historyStepMs, 2000);
    assert.equal(body.historyPoints, 30);
    const subkey = body.rules.find((r: any) => r.key === 'test-domain.key1_value1.subkey1');
    assert.ok(subkey, 'a configured rule that was never hit is listed');
    assert.equal(subkey.configured, true);
    assert.equal(subkey.total_hits, 0);
    assert.equal(subkey.over_limit, 0);
    assert.ok(subkey.history.total_hits.every((n: number) => n === 0));
    assert.equal(subkey.history.total_hits.length, subkey.history.over_limit.length);
    const keys = body.rules.map((r: any) => r.key);
    assert.deepEqual(keys, [...keys].sort(), 'sorted by key');
  });

  it('shows the loaded configuration as a tree per domain', async () => {
    const config = (await (await fetch(`${http}/json/config`, { headers: auth })).json()) as any;
    assert.equal(config.loaded, true);
    const domain = config.domains.find((d: any) => d.domain === 'test-domain');
    assert.ok(domain);
    const key1 = domain.descriptors.find((d: any) => d.key === 'key1' && d.value === 'value1');
    assert.equal(key1.descriptors[0].key, 'subkey1');
    assert.equal(key1.descriptors[0].rule.requestsPerUnit, 5);
    assert.equal(key1.descriptors[0].rule.unit, 'SECOND');
    const free = domain.descriptors.find((d: any) => d.key === 'free');
    assert.equal(free.rule.unlimited, true);
  });
});
