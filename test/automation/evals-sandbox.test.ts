import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  parseEvaluatorConfig,
  scoreRun,
  ScriptPool,
  type EvaluatorResult,
} from '../../src/automation/evals/index.js';

let pool: ScriptPool;
before(() => {
  pool = new ScriptPool({ defaultMemoryLimitMb: 32 });
});
after(() => pool.close());

async function runScript(script: string, extra = ''): Promise<EvaluatorResult> {
  const yaml = `evaluators:\n  - name: s\n    type: custom-script\n    ${extra}\n    value: ${JSON.stringify(script)}\n`;
  const parsed = parseEvaluatorConfig(yaml);
  if (!parsed.ok) assert.fail(JSON.stringify(parsed.errors));
  const run = await scoreRun({
    config: parsed.config,
    output: { a: 1 },
    expected: { a: 1 },
    input: { q: 'x' },
    pool,
  });
  assert.ok(run.results[0]);
  return run.results[0];
}

async function works(): Promise<void> {
  const r = await runScript('return output.a === expected.a');
  assert.equal(r.error, null);
  assert.equal(r.score, 1);
}

describe('custom-script sandbox', () => {
  it('stops an infinite loop and scores it as an error', async () => {
    const r = await runScript('while (true) {}', 'config: { timeoutMs: 200 }');
    assert.equal(r.score, 0);
    assert.equal(r.passed, false);
    assert.match(r.error ?? '', /longer than 200 ms/);
    await works();
  });

  it('stops an endless chain of promise jobs', async () => {
    const r = await runScript(
      'Promise.resolve().then(function f() { return Promise.resolve().then(f); }); return 1;',
      'config: { timeoutMs: 200 }',
    );
    assert.match(r.error ?? '', /longer than 200 ms/);
    await works();
  });

  it('stops a memory bomb at the worker memory cap, and the pool keeps working', async () => {
    const r = await runScript(
      'const keep = []; while (true) keep.push({ n: keep.length, s: "x" + keep.length });',
      'config: { timeoutMs: 30000, memoryLimitMb: 16 }',
    );
    assert.equal(r.score, 0);
    assert.match(r.error ?? '', /memory limit of 16 MiB/);
    await works();
  });

  it('rounds memory limits up to a power of two', () => {
    assert.deepEqual(
      [16, 17, 40, 64, 1000, 1024].map((mb) => ScriptPool.effectiveMemoryLimitMb(mb)),
      [16, 32, 64, 64, 1024, 1024],
    );
  });

  it('can be cancelled by the caller', async () => {
    const parsed = parseEvaluatorConfig(
      'evaluators:\n  - { name: s, type: custom-script, value: "while (true) {}" }\n',
    );
    if (!parsed.ok) assert.fail(JSON.stringify(parsed.errors));
    const controller = new AbortController();
    const running = scoreRun({ config: parsed.config, output: 1, pool, signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    const run = await running;
    assert.match(run.results[0]?.error ?? '', /cancelled/);
    await works();
  });

  it('stops a string-doubling bomb', async () => {
    const r = await runScript(
      'let s = "x"; const keep = []; while (true) { s = s + s; keep.push(s); }',
      'config: { timeoutMs: 30000, memoryLimitMb: 16 }',
    );
    assert.equal(r.score, 0);
    assert.match(r.error ?? '', /memory|Invalid string length/);
  });

  it('turns unbounded recursion into an evaluator error', async () => {
    const r = await runScript('function f(n) { return f(n + 1) + 1; } return f(0);');
    assert.match(r.error ?? '', /RangeError: Maximum call stack/);
    await works();
  });

  it('offers no way to the host: no process, require, eval or binary buffers', async () => {
    const r = await runScript(
      'return { score: 1, reason: [typeof process, typeof require, typeof globalThis.ArrayBuffer, typeof Uint8Array, typeof WebAssembly, typeof setTimeout].join(",") }',
    );
    assert.equal(r.details.reason, 'undefined,undefined,undefined,undefined,undefined,undefined');
    const viaConstructor = await runScript('return this.constructor.constructor("return process")().pid > 0');
    assert.match(viaConstructor.error ?? '', /Code generation from strings disallowed/);
    const viaArgs = await runScript('return output.constructor.constructor("return process")().pid > 0');
    assert.match(viaArgs.error ?? '', /Code generation from strings disallowed/);
  });

  it('keeps no state between scripts', async () => {
    await runScript('globalThis.leak = 42; return 1');
    const r = await runScript('return { score: 1, reason: String(typeof leak) }');
    assert.equal(r.details.reason, 'undefined');
  });

  it('cannot tamper with how its result is read', async () => {
    const r = await runScript('JSON.stringify = () => "{\\"value\\": 1}"; return 0.5');
    assert.equal(r.score, 0.5);
  });

  it('rejects results that are not JSON or too large', async () => {
    assert.match((await runScript('return () => 1')).error ?? '', /not JSON-serialisable/);
    assert.match(
      (await runScript('const o = {}; o.self = o; return o')).error ?? '',
      /not JSON-serialisable/,
    );
    const big = await runScript(
      'for (let i = 0; i < 100000; i++) __sluiceLogs.push("x".repeat(100)); return 1',
    );
    assert.match(big.error ?? '', /exceed 262144 characters/);
  });

  it('rejects a Promise result instead of waiting for it', async () => {
    const r = await runScript('return new Promise(() => {})');
    assert.match(r.error ?? '', /synchronous/);
  });

  it('runs user regexes off the server thread and stops catastrophic backtracking', async () => {
    const parsed = parseEvaluatorConfig(
      'evaluators:\n  - { name: r, type: regex, path: /s, value: "^(a+)+$" }\n',
    );
    if (!parsed.ok) assert.fail(JSON.stringify(parsed.errors));
    const bad = await scoreRun({ config: parsed.config, output: { s: `${'a'.repeat(40)}!` }, pool });
    assert.match(bad.results[0]?.error ?? '', /regular expression ran longer than/);
    const good = await scoreRun({ config: parsed.config, output: { s: 'aaaa' }, pool });
    assert.equal(good.results[0]?.passed, true);
    assert.equal(good.results[0]?.details.match, 'aaaa');
  });

  it('reports a closed pool as an evaluator error', async () => {
    const closed = new ScriptPool();
    await closed.close();
    const parsed = parseEvaluatorConfig(
      'evaluators:\n  - { name: s, type: custom-script, value: "return 1" }\n',
    );
    if (!parsed.ok) assert.fail(JSON.stringify(parsed.errors));
    const run = await scoreRun({ config: parsed.config, output: 1, pool: closed });
    assert.match(run.results[0]?.error ?? '', /closed/);
  });
});
