// Tenant-written `pattern`s (json-schema evaluators, automation input and output schemas) run
// in the evaluator worker pool under AUTOMATION_PATTERN_TIMEOUT, so a catastrophically
// backtracking one neither stalls the service nor runs unbounded.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ServiceClient } from '../../src/automation/client/index.js';
import { checkSchema, ScriptPool } from '../../src/automation/evals/index.js';
import { startHarness, type Harness } from './harness.js';
import { release } from './registry-git.js';

const A = 'workflows.text-report';
const CATASTROPHIC = '^(a+)+$';
// Backtracking over 2^40 ways to split the a's: hours for a backtracking engine.
const EVIL = 'a'.repeat(40) + '!';

/** Polls state (not time) until `fn` gives a value, with a generous overall deadline. */
async function until<T>(what: string, fn: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await fn();
    if (value !== undefined) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('checkSchema', () => {
  let pool: ScriptPool;
  before(() => {
    pool = new ScriptPool({ patternTimeoutMs: 300 });
  });
  after(() => pool.close());

  it('stops a catastrophic pattern in a worker; this thread keeps running meanwhile', async () => {
    const schema = { type: 'object', properties: { id: { type: 'string', pattern: CATASTROPHIC } } };
    let settled = false;
    const checking = checkSchema(schema, { id: EVIL }, pool).finally(() => (settled = true));
    // This callback runs while the pattern is being matched: the thread is not blocked.
    await until('the worker to start', () => (pool.running > 0 ? true : undefined));
    assert.equal(settled, false);
    const outcome = await checking;
    assert.equal(outcome.ok, false);
    assert.match(outcome.ok ? '' : outcome.message, /longer than 300 ms/);
    assert.equal(pool.running, 0);
  });

  it('gives the same answers as inline validation for ordinary patterns', async () => {
    const schema = {
      type: 'object',
      required: ['id'],
      properties: { id: { type: 'string', pattern: '^INV-[0-9]+$' } },
      patternProperties: { '^x-': { type: 'number' } },
    };
    const good = await checkSchema(schema, { id: 'INV-12', 'x-a': 1 }, pool);
    assert.deepEqual(good, { ok: true, valid: true, issues: [] });
    const bad = await checkSchema(schema, { id: 'nope', 'x-a': 'one' }, pool);
    const inline = await checkSchema(schema, { id: 'nope', 'x-a': 'one' }, undefined);
    assert.equal(bad.ok && bad.valid, false);
    assert.deepEqual(bad, inline);
    const missing = await checkSchema(schema, {}, pool);
    assert.deepEqual(missing.ok && missing.issues.map((i) => i.missingProperty), ['id']);
  });
});

describe('patterns in the automation service', () => {
  let h: Harness;
  let client: ServiceClient;
  before(async () => {
    h = await startHarness({ AUTOMATION_PATTERN_TIMEOUT: '2s' });
    client = new ServiceClient({ api_key: h.token, base_url: h.url, env: {} });
  });
  after(async () => {
    await h?.close();
  });

  it('scores a json-schema evaluator with a catastrophic pattern as an error, answering requests meanwhile', async () => {
    await client.automations.evaluators.put(
      A,
      `evaluators:\n  - name: shape\n    type: json-schema\n    path: /text\n    value: { type: string, pattern: '${CATASTROPHIC}' }\n  - name: has-text\n    type: is-json\n`,
    );
    const ex = await client.automations.examples.create(A, { name: 'evil', input: { text: EVIL } });
    const events: { runId?: string | null }[] = [];
    let done = false;
    const streaming = (async () => {
      for await (const e of client.experiments.stream(A, { examples: [ex.id] })) events.push(e);
      done = true;
    })();
    await until('the pattern to run in the pool', () =>
      h.service.core.evalPool.running > 0 ? true : undefined,
    );
    // Seen from this thread while scoring runs: the service's event loop is free.
    assert.equal(done, false);
    const check = await h.api('GET', '/auth/check');
    assert.equal(check.status, 200);
    await streaming;
    assert.equal(events.length, 1);
    const { scores } = await client.runs.scores(events[0]!.runId!);
    const byName = new Map(scores.map((s) => [s.evaluatorName, s]));
    assert.equal(byName.get('shape')!.score, 0);
    assert.match(String(byName.get('shape')!.error), /schema ran longer than 2000 ms/);
    assert.equal(byName.get('has-text')!.score, 1);
  });

  it('refuses a run whose input hits a catastrophic input-schema pattern with a 422, answering requests meanwhile', async () => {
    const manifestPath = join(h.registryPath, 'workflows/text-report/manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, any>;
    manifest['inputSchema'].properties.tag = { type: 'string', pattern: CATASTROPHIC };
    manifest['outputSchema'].properties.text = { type: 'string', pattern: CATASTROPHIC };
    release(
      h.registryPath,
      { 'workflows/text-report/manifest.json': JSON.stringify(manifest, null, 2) },
      'workflows.text-report@1.2.0',
    );
    assert.equal((await h.api('POST', `/automations/${A}/sync`)).status, 200);

    let answered = false;
    const starting = h
      .api('POST', '/runs', { body: { target: A, input: { text: 'x', tag: EVIL } } })
      .finally(() => (answered = true));
    await until('the input check to run in the pool', () =>
      h.service.core.evalPool.running > 0 ? true : undefined,
    );
    assert.equal(answered, false);
    const check = await h.api('GET', '/auth/check');
    assert.equal(check.status, 200);
    const refused = await starting;
    assert.equal(refused.status, 422, JSON.stringify(refused.body));
    assert.equal(refused.body.issues[0].code, 'input_schema_failed');
    assert.equal(refused.body.issues[0].field, 'input');
    assert.match(refused.body.issues[0].message, /input schema of text-report: .*longer than 2000 ms/);

    // Ordinary inputs are judged by the same patterns, in the pool too.
    const mismatch = await h.api('POST', '/runs', { body: { target: A, input: { text: 'x', tag: 'b' } } });
    assert.equal(mismatch.status, 400);
    assert.equal(mismatch.body.issues[0].field, 'input.tag');
    const fine = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: A, input: { text: 'aaa', tag: 'aa' } },
    });
    assert.equal(fine.status, 200);
    assert.equal(fine.body.execution.schemaValid, true);

    // An output that hits the catastrophic output pattern: the check is stopped, not valid.
    const evil = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: A, input: { text: EVIL } },
    });
    assert.equal(evil.status, 200);
    assert.equal(evil.body.execution.status, 'completed');
    assert.equal(evil.body.execution.schemaValid, false);
  });
});
