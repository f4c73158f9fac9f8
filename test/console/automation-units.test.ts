// The automation console's page logic that needs no browser: the corrected-output schema check,
// the NDJSON line splitting of the experiment stream, placing evaluator issues at their lines,
// the run list's query, and the review health chart's geometry.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { compareExperiments } from '../../console/src/automation/experiment-compare.js';
import { healthGeometry } from '../../console/src/automation/health-chart.js';
import { issuesByLine, lineOf, placeIssues } from '../../console/src/automation/issue-lines.js';
import { LineSplitter, readNdjson } from '../../console/src/automation/ndjson.js';
import { filtersFrom, runsQuery } from '../../console/src/automation/run-filters.js';
import { previewJson, queueQuery, totalTokens, waterfall } from '../../console/src/automation/run-shapes.js';
import { checkAgainstSchema, checkJsonText } from '../../console/src/automation/schema-check.js';

describe('corrected output schema check', () => {
  const schema = {
    type: 'object',
    required: ['text', 'words'],
    additionalProperties: false,
    properties: {
      text: { type: 'string', minLength: 1 },
      words: { type: 'integer', minimum: 0 },
      tags: { type: 'array', items: { enum: ['a', 'b'] }, uniqueItems: true },
      kind: { $ref: '#/$defs/kind' },
    },
    $defs: { kind: { anyOf: [{ const: 'x' }, { type: 'number' }] } },
  };

  it('accepts a matching value', () => {
    assert.deepEqual(checkAgainstSchema({ text: 'a b', words: 2, tags: ['a'], kind: 'x' }, schema), []);
  });

  it('names each problem with its JSON Pointer', () => {
    const problems = checkAgainstSchema(
      { text: '', words: 1.5, tags: ['a', 'c', 'a'], kind: 'y', extra: 1 },
      schema,
    );
    const at = problems.map((p) => p.path).sort();
    assert.deepEqual(at, ['', '/kind', '/tags', '/tags/1', '/text', '/words']);
    assert.ok(problems.some((p) => p.path === '' && p.message.includes('"extra"')));
    assert.ok(problems.some((p) => p.path === '/words' && p.message.includes('integer')));
  });

  it('reports missing required fields and wrong types at the root', () => {
    assert.deepEqual(checkAgainstSchema({ text: 'x' }, schema), [
      { path: '', message: 'is missing the required field "words"' },
    ]);
    assert.equal(checkAgainstSchema([1], schema)[0]?.message, 'must be object, is array');
  });

  it('ignores keywords it does not know and schemas that are not schemas', () => {
    assert.deepEqual(checkAgainstSchema({ a: 1 }, { type: 'object', format: 'weird', 'x-ui': true }), []);
    assert.deepEqual(checkAgainstSchema({ a: 1 }, null), []);
    assert.deepEqual(checkAgainstSchema({ a: 1 }, true), []);
  });

  it('says when the text is not JSON', () => {
    const r = checkJsonText('{"a": ', schema);
    assert.equal(r.value, undefined);
    assert.match(r.problems[0]!.message, /^not JSON/);
    assert.deepEqual(checkJsonText('{"text":"t","words":0}', schema).problems, []);
  });

  it('reads tuples (prefixItems and draft-07 array items) and patterns', () => {
    const tuple = { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false };
    assert.deepEqual(checkAgainstSchema(['a', 1], tuple), []);
    assert.deepEqual(
      checkAgainstSchema(['a', 1, 2], tuple).map((p) => p.path),
      ['/2'],
    );
    const legacy = { items: [{ type: 'string' }], additionalItems: { type: 'number' } };
    assert.deepEqual(
      checkAgainstSchema(['a', 'b'], legacy).map((p) => p.path),
      ['/1'],
    );
    assert.equal(checkAgainstSchema('abc', { pattern: '^a+$' }).length, 1);
  });
});

describe('NDJSON lines', () => {
  it('splits chunks at newlines and keeps a partial line for the next chunk', () => {
    const s = new LineSplitter();
    assert.deepEqual(s.push('{"a":1}\n{"b"'), ['{"a":1}']);
    assert.deepEqual(s.push(':2}\n\n'), ['{"b":2}']);
    assert.deepEqual(s.push('{"c":3}'), []);
    assert.deepEqual(s.push('\n'), ['{"c":3}']);
  });

  it('reads a stream whose chunks cut lines and characters anywhere', async () => {
    const text = '{"n":1,"s":"é"}\n{"n":2}\n{"n":3}';
    const bytes = new TextEncoder().encode(text);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 5) controller.enqueue(bytes.slice(i, i + 5));
        controller.close();
      },
    });
    const seen: unknown[] = [];
    await readNdjson(stream, (v) => seen.push(v));
    assert.deepEqual(seen, [{ n: 1, s: 'é' }, { n: 2 }, { n: 3 }]);
  });
});

describe('evaluator issues at their lines', () => {
  it('reads the line the service appends, and the one YAML syntax errors name', () => {
    assert.equal(lineOf('is a threshold and must lie in [0, 1], got 3 (line 2)'), 2);
    assert.equal(lineOf('YAML syntax error at line 3, column 5: bad (line 3)'), 3);
    assert.equal(lineOf('YAML syntax error at line 7, column 1: bad'), 7);
    assert.equal(lineOf('evaluators must be a list'), null);
  });

  it('groups issues by line for the gutter', () => {
    const placed = placeIssues([
      { field: 'evaluators.0.type', message: 'unknown type (line 4)' },
      { field: 'evaluators.0.name', message: 'not kebab case (line 4)' },
      { field: 'evaluators', message: 'missing' },
    ]);
    const byLine = issuesByLine(placed);
    assert.deepEqual([...byLine.keys()], [4]);
    assert.equal(byLine.get(4)!.length, 2);
    assert.equal(placed[2]!.line, null);
  });
});

describe('run list query', () => {
  it('keeps known filters, drops unknown names, and adds limit and cursor', () => {
    const filters = filtersFrom(
      new URLSearchParams('status=failed&source=workflows.a&bogus=1&hasReview=true&tab=x'),
    );
    assert.deepEqual(filters, { status: 'failed', source: 'workflows.a', hasReview: 'true' });
    const q = new URLSearchParams(runsQuery(filters, 50, 'abc'));
    assert.equal(q.get('status'), 'failed');
    assert.equal(q.get('limit'), '50');
    assert.equal(q.get('cursor'), 'abc');
    assert.equal(q.get('bogus'), null);
    assert.equal(new URLSearchParams(runsQuery({}, 25, null)).get('cursor'), null);
  });
});

describe('review health chart geometry', () => {
  const box = { width: 120, height: 120, left: 10, right: 10, top: 10, bottom: 10 };

  it('draws the line through the values and the band between the bounds', () => {
    const g = healthGeometry(
      [
        { t: 0, value: 1, lower: 0.5, upper: 1 },
        { t: 100, value: 0.5, lower: 0, upper: 1 },
      ],
      box,
    );
    assert.equal(g.line, 'M10,10 L110,60');
    assert.equal(g.band, 'M10,10 L110,10 L110,110 L10,60 Z');
    assert.deepEqual(
      g.ticks.map((t) => t.y),
      [110, 60, 10],
    );
  });

  it('centres a single point and clips values outside [0, 1]', () => {
    const g = healthGeometry([{ t: 5, value: 1.2, lower: -0.1, upper: 1 }], box);
    assert.deepEqual(g.points, [{ x: 60, y: 10 }]);
    assert.equal(healthGeometry([], box).band, '');
  });
});

describe('run list previews and usage', () => {
  it('writes compact JSON on one line, cut with an ellipsis', () => {
    assert.equal(previewJson({ text: 'a  b' }), '{"text":"a b"}');
    assert.equal(previewJson('x'.repeat(50), 10), 'xxxxxxxxx…');
    assert.equal(previewJson(null), '—');
    assert.equal(previewJson(undefined), '—');
    assert.equal(previewJson([1, 2]), '[1,2]');
  });

  it('adds input and output tokens, and has none for a run without counts', () => {
    const usage = (input: number | null, output: number | null) => ({
      tokens: { input, output, cacheRead: null, cacheWrite: null },
      creditsCharged: null,
      durationMs: null,
    });
    assert.equal(totalTokens(usage(10, 5)), 15);
    assert.equal(totalTokens(usage(10, null)), 10);
    assert.equal(totalTokens(usage(null, null)), null);
    assert.equal(totalTokens(null), null);
  });
});

describe('step waterfall geometry', () => {
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 27, 0, 0, 0, ms)).toISOString();

  it('places each step from the run’s start on an axis to the run’s end', () => {
    const w = waterfall(
      [
        { name: 'a', status: 'completed', startedAt: at(10), completedAt: at(60) },
        { name: 'b', status: 'failed', startedAt: at(60), durationMs: 20 },
      ],
      at(0),
      at(100),
    );
    assert.equal(w.totalMs, 100);
    assert.deepEqual(
      w.bars.map((b) => [b.name, b.status, b.offsetMs, b.durationMs, b.x, b.width]),
      [
        ['a', 'completed', 10, 50, 0.1, 0.5],
        ['b', 'failed', 60, 20, 0.6, 0.2],
      ],
    );
  });

  it('starts at the earliest step when the run has no start, lists undated steps, never divides by zero', () => {
    const w = waterfall([{ name: 'x', startedAt: at(5), completedAt: at(5) }, { name: 'y' }, {}]);
    assert.equal(w.totalMs, 1);
    assert.deepEqual(w.undated, ['y', 'step 2']);
    assert.equal(w.bars[0]!.x, 0);
    assert.equal(w.bars[0]!.width, 0);
  });

  it('clamps a step whose end is before its start to zero length', () => {
    const w = waterfall([{ name: 'z', startedAt: at(50), completedAt: at(40) }], at(0), at(100));
    assert.equal(w.bars[0]!.durationMs, 0);
  });
});

describe('review queue query', () => {
  it('asks for the automation’s unreviewed finished runs, oldest first, without experiment runs', () => {
    const q = new URLSearchParams(queueQuery('wf_1', '1', null));
    assert.equal(q.get('source'), 'wf_1');
    assert.equal(q.get('noReview'), 'true');
    assert.equal(q.get('experiments'), 'false');
    assert.equal(q.get('order'), 'asc');
    assert.equal(q.get('status'), 'completed,failed');
    assert.equal(q.get('sampleRate'), null);
    const sampled = new URLSearchParams(queueQuery('wf_1', '0.1', 'c1'));
    assert.equal(sampled.get('sampleRate'), '0.1');
    assert.equal(sampled.get('cursor'), 'c1');
  });
});

describe('experiment comparison', () => {
  type Detail = Parameters<typeof compareExperiments>[0];
  const result = (
    runId: string,
    evaluatorName: string,
    score: number | null,
    error: string | null = null,
  ) => ({
    id: `${runId}-${evaluatorName}`,
    runId,
    automationId: 'wf',
    evaluatorName,
    evaluatorType: 'equals',
    score,
    passed: score === null ? null : score >= 1,
    label: null,
    weight: null,
    passThreshold: null,
    description: null,
    details: null,
    error,
    createdAt: '2026-11-27T00:00:00.000Z',
  });
  const detail = (
    id: string,
    runs: [string, string | null][],
    results: ReturnType<typeof result>[],
  ): Detail =>
    ({
      id,
      automationId: 'wf',
      automationType: 'workflow',
      status: 'completed',
      runCount: runs.length,
      completedCount: runs.length,
      passedCount: 0,
      failedCount: 0,
      avgScore: null,
      createdAt: '2026-11-27T00:00:00.000Z',
      completedAt: null,
      version: null,
      runs: runs.map(([runId, exampleId]) => ({
        id: runId,
        status: 'completed',
        exampleId,
        exampleName: exampleId ? `name-${exampleId}` : null,
        createdAt: '2026-11-27T00:00:00.000Z',
        completedAt: null,
      })),
      resultsByRun: Object.fromEntries(
        runs.map(([runId]) => [runId, results.filter((r) => r.runId === runId)]),
      ),
    }) as unknown as Detail;

  it('matches runs by example, lists changed examples first by size of change, then dataset order', () => {
    const a = detail(
      'A',
      [
        ['a1', 'e1'],
        ['a2', 'e2'],
        ['a3', 'e3'],
        ['a4', 'e4'],
      ],
      [
        result('a1', 'x', 1),
        result('a2', 'x', 1),
        result('a3', 'x', 1),
        result('a4', 'x', 1),
        result('a4', 'y', 1),
      ],
    );
    const b = detail(
      'B',
      [
        ['b1', 'e1'],
        ['b2', 'e2'],
        ['b3', 'e3'],
        ['b5', 'e5'],
      ],
      [result('b1', 'x', 1), result('b2', 'x', 0.5), result('b3', 'x', 0), result('b5', 'x', 1)],
    );
    const c = compareExperiments(a, b);
    assert.deepEqual(c.evaluators, ['x', 'y']);
    assert.deepEqual(
      c.examples.map((e) => [e.label, e.changed, e.change]),
      [
        ['name-e3', true, 1],
        ['name-e2', true, 0.5],
        ['name-e4', true, 0],
        ['name-e5', true, 0],
        ['name-e1', false, 0],
      ],
    );
    assert.equal(c.changedCount, 4);
    const e4 = c.examples.find((e) => e.label === 'name-e4')!;
    assert.equal(e4.runB, null);
    assert.equal(e4.scores.y!.b, undefined);
  });

  it('counts an evaluator error on one side as a change', () => {
    const a = detail('A', [['a1', 'e1']], [result('a1', 'x', null)]);
    const b = detail('B', [['b1', 'e1']], [result('b1', 'x', null, 'boom')]);
    assert.equal(compareExperiments(a, b).examples[0]!.changed, true);
  });
});
