import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  meetsThreshold,
  parseEvaluatorConfig,
  scoreRun,
  weightedScore,
  type EvaluatorConfig,
} from '../../src/automation/evals/index.js';

function config(yaml: string): EvaluatorConfig {
  const r = parseEvaluatorConfig(yaml);
  if (!r.ok) assert.fail(JSON.stringify(r.errors));
  return r.config;
}

const output = { vendor: 'ACME', summary: 'Total due' };

describe('weighted score', () => {
  it('is Σ wᵢsᵢ / Σ wᵢ over the evaluators', async () => {
    const c = config(`
passThreshold: 0.8
evaluators:
  - { name: vendor, type: equals, path: /vendor, value: ACME, weight: 3 }
  - { name: words, type: contains, path: /summary, value: [Total, EUR], weight: 1 }
`);
    const run = await scoreRun({ config: c, output });
    assert.deepEqual(
      run.results.map((r) => [r.name, r.score, r.passed, r.weight]),
      [
        ['vendor', 1, true, 3],
        ['words', 0.5, false, 1],
      ],
    );
    assert.equal(run.score, (3 * 1 + 1 * 0.5) / 4);
    assert.equal(run.passed, true);
    assert.equal(run.passThreshold, 0.8);
  });

  it('fails the run below the pass threshold even when some evaluators pass', async () => {
    const c = config(`
passThreshold: 0.9
evaluators:
  - { name: vendor, type: equals, path: /vendor, value: ACME, weight: 1 }
  - { name: words, type: contains, path: /summary, value: EUR, weight: 1 }
`);
    const run = await scoreRun({ config: c, output });
    assert.equal(run.score, 0.5);
    assert.equal(run.passed, false);
  });

  it('reports weight-0 evaluators without counting them', async () => {
    const c = config(`
evaluators:
  - { name: vendor, type: equals, path: /vendor, value: ACME }
  - { name: report-only, type: equals, path: /vendor, value: OTHER, weight: 0 }
`);
    const run = await scoreRun({ config: c, output });
    assert.equal(run.results.length, 2);
    assert.deepEqual(run.results[1] && [run.results[1].score, run.results[1].passed, run.results[1].weight], [
      0,
      false,
      0,
    ]);
    assert.equal(run.score, 1);
    assert.equal(run.passed, true);
  });

  it('is null (not scored) when no evaluator has weight > 0', async () => {
    const onlyReports = await scoreRun({
      config: config('evaluators:\n  - { name: a, type: is-json, weight: 0 }\n'),
      output,
    });
    assert.equal(onlyReports.score, null);
    assert.equal(onlyReports.passed, null);
    assert.equal(onlyReports.results.length, 1);
    const empty = await scoreRun({ config: config('evaluators: []\n'), output });
    assert.equal(empty.score, null);
    assert.equal(empty.passed, null);
  });

  it('counts an evaluator error as score 0 without failing the call', async () => {
    const c = config(`
passThreshold: 0.5
evaluators:
  - { name: vendor, type: equals, path: /vendor, value: ACME }
  - { name: broken, type: equals, path: /vendor, value: { $expected: /missing } }
`);
    const run = await scoreRun({ config: c, output, expected: {} });
    assert.equal(run.results[1]?.score, 0);
    assert.match(run.results[1]?.error ?? '', /no value/);
    assert.equal(run.score, 0.5);
    assert.equal(run.passed, true);
  });

  it('scores a run without output (failed run) without throwing', async () => {
    const c = config(`
evaluators:
  - { name: diff, type: exact-diff }
  - { name: vendor, type: equals, path: /vendor, value: ACME }
  - { name: words, type: contains, value: Total }
  - { name: id, type: regex, path: /id, value: "^x" }
  - { name: json, type: is-json }
  - { name: shape, type: json-schema, value: { type: object } }
  - { name: close, type: similar, value: Total }
`);
    const run = await scoreRun({ config: c, output: undefined, expected: { vendor: 'ACME' } });
    assert.deepEqual(
      run.results.map((r) => [r.name, r.score, r.passed]),
      c.evaluators.map((e) => [e.name, 0, false]),
    );
    assert.equal(run.score, 0);
    assert.equal(run.passed, false);
  });

  it('does not let float rounding flip a boundary decision', () => {
    // (0.7·1 + 0.7·2) / 3 is 0.6999999999999998 in binary floating point.
    const s = weightedScore([
      { score: 0.7, weight: 1 },
      { score: 0.7, weight: 2 },
    ]);
    assert.ok(s !== null && s < 0.7);
    assert.equal(meetsThreshold(s, 0.7), true);
    assert.equal(meetsThreshold(0.69, 0.7), false);
  });

  it('weights need not be integers', () => {
    assert.equal(
      weightedScore([
        { score: 1, weight: 0.25 },
        { score: 0, weight: 0.75 },
        { score: 0.3, weight: 0 },
      ]),
      0.25,
    );
  });
});
