import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  parseEvaluatorConfig,
  type ConfigIssue,
  type EvaluatorConfig,
} from '../../src/automation/evals/index.js';

function ok(yaml: string): EvaluatorConfig {
  const r = parseEvaluatorConfig(yaml);
  if (!r.ok) assert.fail(`expected a valid config, got ${JSON.stringify(r.errors, null, 2)}`);
  return r.config;
}

function errors(yaml: string): readonly ConfigIssue[] {
  const r = parseEvaluatorConfig(yaml);
  if (r.ok) assert.fail('expected the config to be rejected');
  return r.errors;
}

/** The config is rejected with an error at `path` whose message matches. */
function rejects(yaml: string, path: string, message: RegExp): ConfigIssue {
  const errs = errors(yaml);
  const hit = errs.find((e) => e.path === path && message.test(e.message));
  assert.ok(hit, `no error at ${path} matching ${message}; got ${JSON.stringify(errs, null, 2)}`);
  return hit;
}

const one = (body: string): string => `evaluators:\n  - name: e\n${body.replace(/^/gm, '    ')}\n`;

const FULL = `
passThreshold: 0.8
evaluators:
  - name: output-matches
    type: exact-diff
    weight: 2
    config: { numericTolerance: 1e-6, allowExtraFields: true, passThreshold: 1.0, paths: ["invoice.total", "lines[].sku", "/vendor"] }
  - name: has-total
    type: contains
    path: /summary
    value: Total
  - name: id-format
    type: regex
    path: /invoice/id
    value: "^INV-[0-9]{6}$"
  - name: is-json
    type: is-json
  - name: shape
    type: json-schema
    value: { type: object, required: [vendor, total], properties: { total: { type: number } } }
  - name: equals-expected-vendor
    type: equals
    path: /vendor
    value: { $expected: /vendor }
  - name: summary-close
    type: similar
    path: /summary
    value: { $expected: /summary }
    threshold: 0.8
  - name: business-rule
    type: javascript
    weight: 1
    config: { timeoutMs: 2000 }
    value: |
      const ok = output.total === expected.total;
      return { score: ok ? 1 : 0, label: ok ? 'match' : 'mismatch' };
  - name: expected-file-present
    type: file-equals
    value: { output: report.txt, expected: report.txt }
  - name: tone
    type: llm-judge
    weight: 0
    config: { mode: discrete, labels: { good: 1, ok: 0.5, bad: 0 }, promptExtension: "Polite, concise, no invented numbers." }
`;

describe('parseEvaluatorConfig: valid configs', () => {
  it('accepts the reference example with every type and fills defaults', () => {
    const c = ok(FULL);
    assert.equal(c.passThreshold, 0.8);
    assert.deepEqual(
      c.evaluators.map((e) => e.type),
      [
        'exact-diff',
        'contains',
        'regex',
        'is-json',
        'json-schema',
        'equals',
        'similar',
        'custom-script',
        'file-equals',
        'llm-judge',
      ],
    );
    const [diff, contains, , isJson, , equals, similar, script, file, judge] = c.evaluators;
    assert.equal(diff?.type === 'exact-diff' && diff.allowExtraFields, true);
    assert.equal(diff?.threshold, 1);
    assert.equal(diff?.weight, 2);
    assert.deepEqual(contains?.type === 'contains' && contains.values, ['Total']);
    assert.equal(isJson?.weight, 1);
    assert.deepEqual(equals?.type === 'equals' && equals.value, { expectedPointer: '/vendor' });
    assert.equal(similar?.threshold, 0.8);
    assert.equal(script?.type === 'custom-script' && script.timeoutMs, 2000);
    assert.equal(script?.threshold, 0.7);
    assert.equal(file?.type === 'file-equals' && file.expectedFile, 'report.txt');
    assert.equal(judge?.weight, 0);
    assert.equal(judge?.type === 'llm-judge' && judge.mode, 'discrete');
  });

  it('defaults passThreshold to 0.7 and accepts an empty evaluator list', () => {
    const c = ok('evaluators: []\n');
    assert.equal(c.passThreshold, 0.7);
    assert.equal(c.evaluators.length, 0);
  });

  it('reads type aliases for operands (pattern, schema, script) and a file name shorthand', () => {
    const c = ok(`
evaluators:
  - { name: a, type: regex, pattern: "^x", config: { flags: i } }
  - { name: b, type: json-schema, schema: true }
  - { name: c, type: custom-script, script: "return 1" }
  - { name: d, type: file-equals, value: out/report.txt }
  - { name: e, type: equals, path: /a }
`);
    const [a, b, cs, d, e] = c.evaluators;
    assert.equal(a?.type === 'regex' && a.pattern + a.flags, '^xi');
    assert.equal(b?.type === 'json-schema' && b.schema, true);
    assert.equal(cs?.type === 'custom-script' && cs.script, 'return 1');
    assert.equal(
      d?.type === 'file-equals' && `${d.outputFile}|${d.expectedFile}`,
      'out/report.txt|out/report.txt',
    );
    // equals without a value compares with the expected output at the same path.
    assert.deepEqual(e?.type === 'equals' && e.value, { expectedPointer: '/a' });
  });
});

describe('parseEvaluatorConfig: broken configs', () => {
  it('reports YAML syntax errors with their line', () => {
    const e = rejects(
      'evaluators:\n  - name: a\n    type: [unclosed\n',
      '<root>',
      /YAML syntax error at line \d+/,
    );
    assert.equal(typeof e.line, 'number');
  });

  it('rejects duplicate keys', () => {
    rejects('passThreshold: 0.5\npassThreshold: 0.6\nevaluators: []\n', '<root>', /unique|duplicate/i);
  });

  it('rejects non-core tags such as !!js/function', () => {
    rejects('evaluators:\n  - name: a\n    type: !!js/function "function(){}"\n', '<root>', /tag/i);
  });

  it('rejects an empty document, a scalar document and a list document', () => {
    rejects('', '<root>', /empty/);
    rejects('# only a comment\n', '<root>', /empty/);
    rejects('hello\n', '<root>', /mapping/);
    rejects('- a\n- b\n', '<root>', /mapping/);
  });

  it('rejects a document over 1 MiB', () => {
    rejects(`evaluators: []\n# ${'x'.repeat(1024 * 1024)}\n`, '<root>', /at most 1048576/);
  });

  it('rejects an alias bomb', () => {
    const lines = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 8; i += 1)
      lines.push(
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(10)
          .fill(`*${String.fromCharCode(97 + i)}`)
          .join(', ')}]`,
      );
    lines.push('evaluators: []');
    const errs = errors(lines.join('\n'));
    assert.ok(
      errs.some((e) => e.path === '<root>' && /alias|cannot be expanded/i.test(e.message)),
      JSON.stringify(errs),
    );
  });

  it('rejects missing and mistyped top-level fields and unknown keys', () => {
    rejects('passThreshold: 0.5\n', 'evaluators', /required/);
    rejects('evaluators: {}\n', 'evaluators', /list/);
    rejects('evaluators: []\nextra: 1\n', 'extra', /unknown field/);
  });

  it('rejects a pass threshold outside [0,1] or not a number', () => {
    rejects('passThreshold: 1.5\nevaluators: []\n', 'passThreshold', /threshold.*\[0, 1\]/);
    rejects('passThreshold: -0.1\nevaluators: []\n', 'passThreshold', /\[0, 1\]/);
    rejects('passThreshold: .nan\nevaluators: []\n', 'passThreshold', /finite number/);
    rejects('passThreshold: "high"\nevaluators: []\n', 'passThreshold', /finite number/);
  });

  it('rejects an evaluator that is not a mapping', () => {
    rejects('evaluators:\n  - just-a-string\n', 'evaluators[0]', /mapping/);
  });

  it('rejects unknown and missing types', () => {
    rejects(one('type: fuzzy-match'), 'evaluators[0].type', /unknown evaluator type "fuzzy-match"/);
    rejects('evaluators:\n  - name: e\n', 'evaluators[0].type', /required/);
    rejects(one('type: 3'), 'evaluators[0].type', /string/);
  });

  it('rejects missing, malformed and duplicate names', () => {
    rejects('evaluators:\n  - type: is-json\n', 'evaluators[0].name', /required/);
    rejects('evaluators:\n  - { name: Not_Kebab, type: is-json }\n', 'evaluators[0].name', /kebab-case/);
    rejects(
      `evaluators:\n  - { name: ${'a'.repeat(65)}, type: is-json }\n`,
      'evaluators[0].name',
      /at most 64/,
    );
    rejects(
      'evaluators:\n  - { name: a, type: is-json }\n  - { name: a, type: is-json }\n',
      'evaluators[1].name',
      /duplicate/,
    );
  });

  it('rejects negative and non-numeric weights', () => {
    rejects(one('type: is-json\nweight: -1'), 'evaluators[0].weight', /weight.*≥ 0/);
    rejects(one('type: is-json\nweight: .inf'), 'evaluators[0].weight', /finite/);
    rejects(one('type: is-json\nweight: heavy'), 'evaluators[0].weight', /finite/);
  });

  it('rejects per-evaluator thresholds outside [0,1], and both spellings at once', () => {
    rejects(one('type: similar\npath: /a\nthreshold: 2'), 'evaluators[0].threshold', /\[0, 1\]/);
    rejects(
      one('type: exact-diff\nconfig: { passThreshold: -1 }'),
      'evaluators[0].config.passThreshold',
      /\[0, 1\]/,
    );
    rejects(
      one('type: exact-diff\nthreshold: 1\nconfig: { passThreshold: 1 }'),
      'evaluators[0].config.passThreshold',
      /either/,
    );
  });

  it('rejects unknown fields on an evaluator and in its config', () => {
    rejects(one('type: is-json\nvalue: 1'), 'evaluators[0].value', /unknown field/);
    rejects(
      one('type: exact-diff\nconfig: { tolerance: 1 }'),
      'evaluators[0].config.tolerance',
      /unknown field/,
    );
    rejects(one('type: contains\nvalue: x\nconfig: []'), 'evaluators[0].config', /mapping/);
  });

  it('rejects paths that are not JSON Pointers', () => {
    rejects(one('type: equals\npath: vendor\nvalue: x'), 'evaluators[0].path', /JSON Pointer/);
    rejects(one('type: equals\npath: /a~2b\nvalue: x'), 'evaluators[0].path', /~/);
    rejects(
      one('type: similar\npath: /a\nvalue: { $expected: nope }'),
      'evaluators[0].value.$expected',
      /JSON Pointer/,
    );
    rejects(
      one('type: similar\npath: /a\nvalue: { $expected: /a, other: 1 }'),
      'evaluators[0].value',
      /no other fields/,
    );
  });

  it('rejects bad exact-diff options', () => {
    rejects(one('type: exact-diff\nconfig: { paths: "a.b" }'), 'evaluators[0].config.paths', /list/);
    rejects(
      one('type: exact-diff\nconfig: { paths: ["a..b"] }'),
      'evaluators[0].config.paths[0]',
      /empty field name/,
    );
    rejects(
      one('type: exact-diff\nconfig: { paths: ["ok", "lines[x]"] }'),
      'evaluators[0].config.paths[1]',
      /array index/,
    );
    rejects(
      one('type: exact-diff\nconfig: { numericTolerance: -0.1 }'),
      'evaluators[0].config.numericTolerance',
      /≥ 0/,
    );
    rejects(
      one('type: exact-diff\nconfig: { allowExtraFields: "yes" }'),
      'evaluators[0].config.allowExtraFields',
      /true or false/,
    );
  });

  it('rejects contains without strings', () => {
    rejects(one('type: contains'), 'evaluators[0].value', /required/);
    rejects(one('type: contains\nvalue: []'), 'evaluators[0].value', /at least one/);
    rejects(one('type: contains\nvalue: [a, 3]'), 'evaluators[0].value[1]', /string/);
    rejects(one('type: contains\nvalue: x\nconfig: { mode: some }'), 'evaluators[0].config.mode', /all, any/);
  });

  it('rejects regexes that do not compile, bad flags and both spellings', () => {
    const e = rejects(one('type: regex\nvalue: "([a-z]+"'), 'evaluators[0].value', /does not compile/);
    assert.equal(e.line, 4);
    rejects(one('type: regex\npattern: "a{2,1}"'), 'evaluators[0].pattern', /does not compile/);
    rejects(one('type: regex\nvalue: a\nconfig: { flags: g }'), 'evaluators[0].config.flags', /flags/);
    rejects(one('type: regex\nvalue: a\npattern: b'), 'evaluators[0].pattern', /either/);
    rejects(one('type: regex'), 'evaluators[0].pattern', /required/);
  });

  it('rejects JSON Schemas that do not compile', () => {
    rejects(one('type: json-schema\nvalue: { type: thing }'), 'evaluators[0].value', /does not compile/);
    rejects(
      one('type: json-schema\nschema: { $ref: "#/definitions/missing" }'),
      'evaluators[0].schema',
      /does not compile/,
    );
    rejects(one('type: json-schema\nvalue: "object"'), 'evaluators[0].value', /JSON Schema/);
  });

  it('rejects scripts that do not compile, with the line inside the script', () => {
    const e = rejects(
      one('type: custom-script\nvalue: |\n  const x = 1;\n  return x +* 2;'),
      'evaluators[0].value',
      /does not compile: .*line 2 of the script/,
    );
    assert.equal(e.line, 4);
    rejects(one('type: javascript\nscript: "await thing()"'), 'evaluators[0].script', /does not compile/);
    // The body is compiled on its own, so closing the wrapper function is a syntax error.
    rejects(
      one('type: custom-script\nvalue: "}); (function () {"'),
      'evaluators[0].value',
      /does not compile/,
    );
    rejects(one('type: custom-script\nvalue: ""'), 'evaluators[0].value', /empty/);
  });

  it('rejects script limits outside their ranges', () => {
    rejects(
      one('type: custom-script\nvalue: return 1\nconfig: { timeoutMs: 0 }'),
      'evaluators[0].config.timeoutMs',
      /\[1, 60000\]/,
    );
    rejects(
      one('type: custom-script\nvalue: return 1\nconfig: { timeoutMs: 1.5 }'),
      'evaluators[0].config.timeoutMs',
      /whole number/,
    );
    rejects(
      one('type: custom-script\nvalue: return 1\nconfig: { memoryLimitMb: 4 }'),
      'evaluators[0].config.memoryLimitMb',
      /\[16, 1024\]/,
    );
  });

  it('rejects bad file-equals names', () => {
    rejects(one('type: file-equals'), 'evaluators[0].value', /required/);
    rejects(one('type: file-equals\nvalue: ../etc/passwd'), 'evaluators[0].value', /relative file path/);
    rejects(one('type: file-equals\nvalue: /abs.txt'), 'evaluators[0].value', /relative file path/);
    rejects(one('type: file-equals\nvalue: { expected: a.txt }'), 'evaluators[0].value.output', /required/);
    rejects(
      one('type: file-equals\nvalue: { output: a.txt, extra: b }'),
      'evaluators[0].value.extra',
      /unknown field/,
    );
  });

  it('rejects llm-judge configs without criteria or labels', () => {
    rejects(one('type: llm-judge'), 'evaluators[0].config.promptExtension', /required/);
    rejects(
      one('type: llm-judge\nconfig: { promptExtension: short }'),
      'evaluators[0].config.promptExtension',
      /at least 10/,
    );
    rejects(
      one('type: llm-judge\nconfig: { mode: discrete, promptExtension: "Be polite and concise." }'),
      'evaluators[0].config.labels',
      /required in discrete/,
    );
    rejects(
      one(
        'type: llm-judge\nconfig: { mode: discrete, labels: { good: 2 }, promptExtension: "Be polite and concise." }',
      ),
      'evaluators[0].config.labels.good',
      /\[0, 1\]/,
    );
    rejects(
      one('type: llm-judge\nconfig: { mode: fuzzy, promptExtension: "Be polite and concise." }'),
      'evaluators[0].config.mode',
      /continuous, discrete/,
    );
  });

  it('treats prototype names as plain (unknown) names', () => {
    rejects(one('type: constructor'), 'evaluators[0].type', /unknown evaluator type "constructor"/);
    rejects(one('type: toString'), 'evaluators[0].type', /unknown evaluator type/);
    rejects(one('type: is-json\n__proto__: { weight: 5 }'), 'evaluators[0].__proto__', /unknown field/);
    rejects('__proto__: { evaluators: [] }\n', '__proto__', /unknown field/);
    const c = ok(
      one(
        'type: llm-judge\nconfig: { mode: discrete, labels: { __proto__: 1, bad: 0 }, promptExtension: "Be polite and concise." }',
      ),
    );
    const judge = c.evaluators[0];
    assert.deepEqual(judge?.type === 'llm-judge' && Object.keys(judge.labels), ['__proto__', 'bad']);
  });

  it('reports every problem of a config at once', () => {
    const errs = errors(`
passThreshold: 3
evaluators:
  - { name: a, type: regex, value: "(" }
  - { name: b, type: nope }
  - { name: c, type: similar, path: /x, threshold: -1 }
`);
    assert.deepEqual(
      errs.map((e) => e.path),
      ['passThreshold', 'evaluators[0].value', 'evaluators[1].type', 'evaluators[2].threshold'],
    );
    assert.deepEqual(
      errs.map((e) => e.line),
      [2, 4, 5, 6],
    );
  });
});
