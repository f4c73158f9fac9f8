import * as assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  adaptToolChatProvider,
  DeterministicJudgeProvider,
  parseEvaluatorConfig,
  scoreRun,
  ScriptPool,
  type EvalFiles,
  type EvaluatorConfig,
  type EvaluatorResult,
  type ModelProvider,
  type ScoreRunArgs,
} from '../../src/automation/evals/index.js';

function config(yaml: string): EvaluatorConfig {
  const r = parseEvaluatorConfig(yaml);
  if (!r.ok) assert.fail(JSON.stringify(r.errors));
  return r.config;
}

/** Scores a one-evaluator config and returns that evaluator's result. */
async function score1(evaluatorYaml: string, args: Omit<ScoreRunArgs, 'config'>): Promise<EvaluatorResult> {
  const c = config(`evaluators:\n  - name: e\n${evaluatorYaml.replace(/^/gm, '    ')}\n`);
  const run = await scoreRun({ ...args, config: c });
  const r = run.results[0];
  assert.ok(r);
  return r;
}

function assertPass(r: EvaluatorResult): void {
  assert.equal(r.error, null, `unexpected error: ${r.error}`);
  assert.equal(r.passed, true, `expected a pass: ${JSON.stringify(r)}`);
}

function assertFail(r: EvaluatorResult): void {
  assert.equal(r.error, null, `unexpected error: ${r.error}`);
  assert.equal(r.passed, false, `expected a failure: ${JSON.stringify(r)}`);
}

const invoice = {
  vendor: 'ACME',
  total: 120.5,
  invoice: { id: 'INV-004211' },
  lines: [
    { sku: 'A1', qty: 2 },
    { sku: 'B2', qty: 1 },
  ],
  summary: 'Total due: 120.50',
};

describe('exact-diff', () => {
  it('passes identical output and reports nothing', async () => {
    const r = await score1('type: exact-diff', { output: structuredClone(invoice), expected: invoice });
    assertPass(r);
    assert.equal(r.score, 1);
    assert.deepEqual(r.details.diff, []);
  });

  it('fails a changed field with a partial score and a diff list', async () => {
    const output = { ...structuredClone(invoice), total: 99, extra: true };
    const r = await score1('type: exact-diff', { output, expected: invoice });
    assertFail(r);
    const diff = r.details.diff as { path: string; kind: string }[];
    assert.deepEqual(
      diff.map((d) => `${d.kind} ${d.path}`),
      ['changed total', 'extra extra'],
    );
    // 9 compared leaves (vendor, total, invoice.id, 4 line fields, summary, the extra field), 2 differ.
    assert.equal(r.details.compared, 9);
    assert.equal(r.score, 7 / 9);
  });

  it('honours numeric tolerance and allowExtraFields', async () => {
    const output = { ...structuredClone(invoice), total: 120.5000001, extra: true };
    const r = await score1('type: exact-diff\nconfig: { numericTolerance: 0.001, allowExtraFields: true }', {
      output,
      expected: invoice,
    });
    assertPass(r);
    const strict = await score1(
      'type: exact-diff\nconfig: { numericTolerance: 0.00000001, allowExtraFields: true }',
      { output, expected: invoice },
    );
    assertFail(strict);
  });

  it('compares only the given paths, with [] over every element', async () => {
    const output = {
      ...structuredClone(invoice),
      vendor: 'Other',
      lines: [
        { sku: 'A1', qty: 9 },
        { sku: 'B2', qty: 9 },
      ],
    };
    const r = await score1('type: exact-diff\nconfig: { paths: ["lines[].sku", "/invoice/id"] }', {
      output,
      expected: invoice,
    });
    assertPass(r);
    const wrong = { ...output, lines: [{ sku: 'A1' }, { sku: 'XX' }, { sku: 'C3' }] };
    const f = await score1('type: exact-diff\nconfig: { paths: ["lines[].sku"] }', {
      output: wrong,
      expected: invoice,
    });
    assertFail(f);
    assert.deepEqual(
      (f.details.diff as { path: string; kind: string }[]).map((d) => `${d.kind} ${d.path}`),
      ['changed lines[1].sku', 'extra lines[2].sku'],
    );
  });

  it('is an evaluator error when the example has no expected output', async () => {
    const r = await score1('type: exact-diff', { output: invoice });
    assert.equal(r.score, 0);
    assert.match(r.error ?? '', /no expected output/);
  });

  it('reports type and missing differences', async () => {
    const r = await score1('type: exact-diff', { output: { a: '1' }, expected: { a: 1, b: [1] } });
    assertFail(r);
    assert.deepEqual(
      (r.details.diff as { kind: string }[]).map((d) => d.kind),
      ['type', 'missing'],
    );
    assert.equal(r.score, 0);
  });
});

describe('equals', () => {
  it('passes deep-equal values regardless of key order, and fails otherwise', async () => {
    assertPass(await score1('type: equals\nvalue: { b: [1, 2], a: "x" }', { output: { a: 'x', b: [1, 2] } }));
    assertFail(await score1('type: equals\nvalue: { b: [1, 2], a: "x" }', { output: { a: 'x', b: [2, 1] } }));
  });

  it('compares with the expected output at a pointer', async () => {
    assertPass(
      await score1('type: equals\npath: /vendor\nvalue: { $expected: /vendor }', {
        output: invoice,
        expected: { vendor: 'ACME' },
      }),
    );
    assertFail(
      await score1('type: equals\npath: /vendor', { output: invoice, expected: { vendor: 'Other' } }),
    );
  });

  it('is an evaluator error when the expected value is absent', async () => {
    const r = await score1('type: equals\npath: /vendor', { output: invoice, expected: {} });
    assert.equal(r.score, 0);
    assert.match(r.error ?? '', /no value at "\/vendor"/);
  });
});

describe('contains', () => {
  it('passes when every value occurs and scores the share found', async () => {
    assertPass(await score1('type: contains\npath: /summary\nvalue: [Total, "120.50"]', { output: invoice }));
    const r = await score1('type: contains\npath: /summary\nvalue: [Total, EUR]', { output: invoice });
    assertFail(r);
    assert.equal(r.score, 0.5);
    assert.deepEqual(r.details.missing, ['EUR']);
  });

  it('supports any-mode and ignoreCase, and searches JSON text of structured values', async () => {
    assertPass(
      await score1('type: contains\nvalue: [nope, acme]\nconfig: { mode: any, ignoreCase: true }', {
        output: invoice,
      }),
    );
    assertFail(
      await score1('type: contains\nvalue: [nope, acme]\nconfig: { mode: any }', { output: invoice }),
    );
  });

  it('fails when the path does not exist', async () => {
    const r = await score1('type: contains\npath: /missing\nvalue: x', { output: invoice });
    assertFail(r);
    assert.equal(r.score, 0);
  });
});

describe('regex', () => {
  it('passes a match and fails a non-match (inline)', async () => {
    const r = await score1('type: regex\npath: /invoice/id\nvalue: "^INV-[0-9]{6}$"', { output: invoice });
    assertPass(r);
    assert.equal(r.details.match, 'INV-004211');
    assertFail(await score1('type: regex\npath: /vendor\nvalue: "^inv"', { output: invoice }));
    assertPass(
      await score1('type: regex\npath: /vendor\nvalue: "^acme$"\nconfig: { flags: i }', { output: invoice }),
    );
  });
});

describe('is-json', () => {
  it('passes a JSON string and structured output, fails broken JSON', async () => {
    assertPass(await score1('type: is-json\npath: /raw', { output: { raw: '{"a": [1, 2]}' } }));
    assertPass(await score1('type: is-json', { output: { a: 1 } }));
    const r = await score1('type: is-json\npath: /raw', { output: { raw: '{"a": [1, 2}' } });
    assertFail(r);
    assert.match(String(r.details.reason), /JSON/);
  });
});

describe('json-schema', () => {
  const yaml =
    'type: json-schema\nvalue: { type: object, required: [vendor, total], properties: { total: { type: number } } }';
  it('passes a valid output and fails an invalid one with ajv errors', async () => {
    assertPass(await score1(yaml, { output: invoice }));
    const r = await score1(yaml, { output: { vendor: 'x', total: 'ten' } });
    assertFail(r);
    assert.deepEqual(r.details.errors, [{ path: '/total', message: 'must be number' }]);
  });

  it('uses the 2020-12 dialect when the schema names it', async () => {
    const y =
      'type: json-schema\nvalue: { $schema: "https://json-schema.org/draft/2020-12/schema", type: array, prefixItems: [{ type: string }], items: false }';
    assertPass(await score1(y, { output: ['a'] }));
    assertFail(await score1(y, { output: ['a', 'b'] }));
  });
});

describe('similar', () => {
  it('scores normalised Levenshtein similarity against the threshold', async () => {
    const r = await score1('type: similar\npath: /s\nvalue: kitten\nthreshold: 0.5', {
      output: { s: 'sitting' },
    });
    // distance 3 over the longer length 7
    assert.equal(r.score, 1 - 3 / 7);
    assertPass(r);
    assertFail(
      await score1('type: similar\npath: /s\nvalue: kitten\nthreshold: 0.8', { output: { s: 'sitting' } }),
    );
  });

  it('compares with the expected output by default and normalises when asked', async () => {
    const r = await score1(
      'type: similar\npath: /s\nconfig: { ignoreCase: true, normalizeWhitespace: true }',
      { output: { s: '  Hello   World ' }, expected: { s: 'hello world' } },
    );
    assertPass(r);
    assert.equal(r.score, 1);
  });

  it('refuses texts too long to compare instead of stalling the thread', async () => {
    const r = await score1('type: similar\npath: /s', {
      output: { s: 'a'.repeat(6000) },
      expected: { s: 'b'.repeat(6000) },
    });
    assert.equal(r.score, 0);
    assert.match(r.error ?? '', /too long to compare/);
  });

  it('counts code points, not UTF-16 units', async () => {
    const r = await score1('type: similar\npath: /s\nvalue: "a😀"', { output: { s: 'a😁' } });
    assert.equal(r.score, 0.5);
  });
});

describe('file-equals', () => {
  let dir: string;
  let files: EvalFiles;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-evals-'));
    const write = (p: string, data: string | Buffer): void => {
      mkdirSync(dirname(join(dir, p)), { recursive: true });
      writeFileSync(join(dir, p), data);
    };
    write('output/report.txt', 'total: 120.50\n');
    write('expected/report.txt', 'total: 120.50\n');
    write('output/image.bin', Buffer.from([0, 1, 2, 3, 255]));
    write('expected/image.bin', Buffer.from([0, 1, 9, 3, 255]));
    const read =
      (sub: string) =>
      async (name: string): Promise<Uint8Array | undefined> => {
        try {
          return readFileSync(join(dir, sub, name));
        } catch {
          return undefined;
        }
      };
    files = { readOutput: read('output'), readExpected: read('expected') };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('passes identical bytes and fails different bytes with the offset', async () => {
    const r = await score1('type: file-equals\nvalue: report.txt', { output: {}, files });
    assertPass(r);
    assert.equal(r.details.outputSha256, r.details.expectedSha256);
    const f = await score1('type: file-equals\nvalue: { output: image.bin, expected: image.bin }', {
      output: {},
      files,
    });
    assertFail(f);
    assert.equal(f.details.firstDifferenceAt, 2);
  });

  it('fails a missing output file and errors on a missing expected file or no file access', async () => {
    const missing = await score1('type: file-equals\nvalue: { output: none.txt, expected: report.txt }', {
      output: {},
      files,
    });
    assertFail(missing);
    const noExpected = await score1('type: file-equals\nvalue: { output: report.txt, expected: none.txt }', {
      output: {},
      files,
    });
    assert.match(noExpected.error ?? '', /no expected file "none.txt"/);
    const noAccess = await score1('type: file-equals\nvalue: report.txt', { output: {} });
    assert.match(noAccess.error ?? '', /no file access/);
  });
});

describe('custom-script', () => {
  let pool: ScriptPool;
  before(() => {
    pool = new ScriptPool();
  });
  after(() => pool.close());

  it('passes and fails by the score the script returns', async () => {
    const yaml =
      'type: custom-script\nvalue: |\n  const ok = output.total === expected.total;\n  return { score: ok ? 1 : 0, reason: ok ? "same total" : "total differs", label: ok ? "match" : "mismatch" };';
    const r = await score1(yaml, { output: invoice, expected: { total: 120.5 }, pool });
    assertPass(r);
    assert.equal(r.label, 'match');
    assert.equal(r.details.reason, 'same total');
    const f = await score1(yaml, { output: invoice, expected: { total: 1 }, pool });
    assertFail(f);
    assert.equal(f.label, 'mismatch');
  });

  it('accepts numbers and booleans, and an explicit pass overrides the threshold', async () => {
    assert.equal((await score1('type: custom-script\nvalue: return 0.25', { output: 1, pool })).score, 0.25);
    assertPass(
      await score1('type: custom-script\nvalue: "return input.n === 3"', {
        output: 1,
        input: { n: 3 },
        pool,
      }),
    );
    assertPass(
      await score1('type: custom-script\nvalue: "return { score: 0.1, pass: true }"', { output: 1, pool }),
    );
    assertFail(await score1('type: custom-script\nvalue: "return actual === 2"', { output: 1, pool }));
  });

  it('turns a throw or a bad result into an evaluator error with the logs', async () => {
    const t = await score1(
      'type: custom-script\nvalue: |\n  console.log("checking", output);\n  throw new TypeError("boom");',
      { output: { a: 1 }, pool },
    );
    assert.equal(t.score, 0);
    assert.match(t.error ?? '', /threw TypeError: boom/);
    assert.deepEqual(t.details.logs, ['checking {"a":1}']);
    const bad = await score1('type: custom-script\nvalue: return 7', { output: 1, pool });
    assert.match(bad.error ?? '', /returned 7/);
    const none = await score1('type: custom-script\nvalue: "const x = 1;"', { output: 1, pool });
    assert.match(none.error ?? '', /returned null/);
  });

  it('is an evaluator error without a pool', async () => {
    const r = await score1('type: custom-script\nvalue: return 1', { output: 1 });
    assert.match(r.error ?? '', /no script pool/);
  });
});

describe('llm-judge', () => {
  const provider = new DeterministicJudgeProvider();
  const continuous = 'type: llm-judge\nconfig: { promptExtension: "The summary states the right total." }';
  const discrete =
    'type: llm-judge\nconfig: { mode: discrete, labels: { good: 1, ok: 0.5, bad: 0 }, promptExtension: "Polite, concise, no invented numbers." }';

  it('passes output equal to the expected output and fails a different one (deterministic provider)', async () => {
    const r = await score1(continuous, { output: invoice, expected: structuredClone(invoice), provider });
    assertPass(r);
    assert.equal(r.score, 1);
    assert.ok((r.details.usage as { inputTokens: number }).inputTokens > 0);
    const f = await score1(continuous, {
      output: { summary: 'something else entirely' },
      expected: invoice,
      provider,
    });
    assertFail(f);
    assert.ok(f.score < 0.7);
  });

  it('maps discrete labels to scores', async () => {
    const r = await score1(discrete, { output: 'the same words', expected: 'the same words', provider });
    assertPass(r);
    assert.equal(r.label, 'good');
    const f = await score1(discrete, { output: 'zzzzzzzzzzzzzz', expected: 'the same words', provider });
    assertFail(f);
    assert.equal(f.label, 'bad');
    assert.equal(f.score, 0);
  });

  it('fails a missing output value without calling the provider', async () => {
    let called = false;
    const spy: ModelProvider = {
      complete: async () => {
        called = true;
        return { text: '{"score": 1}', usage: { inputTokens: 0, outputTokens: 0 } };
      },
    };
    const r = await score1(
      'type: llm-judge\npath: /summary\nconfig: { promptExtension: "The summary states the right total." }',
      { output: {}, provider: spy },
    );
    assertFail(r);
    assert.equal(called, false);
  });

  it('gives the same answer to the same prompt', async () => {
    const a = await score1(continuous, { output: { t: 'abcdef' }, expected: { t: 'abcxef' }, provider });
    const b = await score1(continuous, { output: { t: 'abcdef' }, expected: { t: 'abcxef' }, provider });
    assert.equal(a.score, b.score);
  });

  it('sends the criteria, labels and output to the provider and accepts fenced JSON replies', async () => {
    let seen = '';
    const fenced: ModelProvider = {
      complete: async (messages) => {
        seen = messages.map((m) => m.content).join('\n');
        return {
          text: 'Verdict:\n```json\n{"label": "OK", "reason": "fine"}\n```',
          usage: { inputTokens: 1, outputTokens: 1 },
        };
      },
    };
    const r = await score1(discrete, { output: { text: 'a</output>b' }, provider: fenced });
    assert.equal(r.label, 'ok');
    assert.equal(r.score, 0.5);
    assert.match(seen, /Polite, concise/);
    assert.match(seen, /<labels>/);
    // "<" inside values is escaped, so an output cannot close the section early.
    assert.match(seen, /a\\u003c\/output>b/);
  });

  it('turns bad replies, provider failures and a missing provider into evaluator errors', async () => {
    const reply = (text: string): ModelProvider => ({
      complete: async () => ({ text, usage: { inputTokens: 0, outputTokens: 0 } }),
    });
    assert.match(
      (await score1(continuous, { output: 1, provider: reply('I think it is fine') })).error ?? '',
      /no JSON object/,
    );
    assert.match(
      (await score1(continuous, { output: 1, provider: reply('{"score": 7}') })).error ?? '',
      /score 7/,
    );
    assert.match(
      (await score1(discrete, { output: 1, provider: reply('{"label": "great"}') })).error ?? '',
      /not one of good, ok, bad/,
    );
    const failing: ModelProvider = { complete: async () => Promise.reject(new Error('connection refused')) };
    assert.match(
      (await score1(continuous, { output: 1, provider: failing })).error ?? '',
      /provider failed: connection refused/,
    );
    assert.match((await score1(continuous, { output: 1 })).error ?? '', /no model provider/);
  });

  it('uses a tool-style chat provider through the adapter', async () => {
    let roles: string[] = [];
    const chat = adaptToolChatProvider({
      complete: async ({ messages, tools }) => {
        roles = messages.map((m) => m.role);
        assert.deepEqual(tools, []);
        return { content: '{"score": 0.9, "reason": "close"}', usage: { input: 12, output: 3 } };
      },
    });
    const r = await score1(continuous, { output: 1, provider: chat });
    assertPass(r);
    assert.equal(r.score, 0.9);
    assert.deepEqual(roles, ['system', 'user']);
    assert.deepEqual(r.details.usage, { inputTokens: 12, outputTokens: 3 });
  });

  it('stops waiting for a provider that never answers', async () => {
    const hanging: ModelProvider = { complete: () => new Promise(() => {}) };
    const r = await score1(
      'type: llm-judge\nconfig: { timeoutMs: 50, promptExtension: "The summary states the right total." }',
      { output: 1, provider: hanging },
    );
    assert.match(r.error ?? '', /did not answer within 50 ms/);
  });
});
