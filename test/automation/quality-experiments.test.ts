// Evaluators, experiments, NDJSON streaming, exports and cancel against the real service.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { strToU8 } from 'fflate';
import { ServiceClient, ClientValidationError } from '../../src/automation/client/index.js';
import { Value } from '@sinclair/typebox/value';
import type { TSchema } from '@sinclair/typebox';
import type { KeyStore } from '../../src/core/auth/index.js';
import {
  AutomationsExperimentsListResponse,
  EvaluatorConfigResponse,
  ExperimentCreateResponse,
  ExperimentDetail,
  ExperimentRef,
} from '../../src/automation/wire/experiments.js';
import { startHarness, type Harness } from './harness.js';
import { HANG_MS, waitUntil } from '../helpers/wait.js';

/** The body is exactly the SDK's type: no missing, extra or mistyped field. */
function assertWire(schema: TSchema, body: unknown): void {
  const errors = [...Value.Errors(schema, body)].slice(0, 5).map((e) => `${e.path}: ${e.message}`);
  assert.deepEqual(errors, [], `${String(schema.$id)}: ${JSON.stringify(body).slice(0, 300)}`);
}

const A = 'workflows.text-report';
let h: Harness;
let client: ServiceClient;

before(async () => {
  // Two run threads: the cancel test needs both of an experiment's lanes running at once, and a
  // pool thread holds one run at a time.
  h = await startHarness({ AUTOMATION_EXPERIMENT_CONCURRENCY: '4', AUTOMATION_POOL_THREADS: '2' });
  client = new ServiceClient({ api_key: h.token, base_url: h.url, env: {} });
});
after(async () => {
  await h?.close();
});

/** What the built-in text-report workflow answers for two distinct words (sorted top words). */
function textReport(text: string) {
  const words = text.split(' ');
  const top = [...words].sort();
  return {
    output: { text, words: words.length, characters: text.length, topWords: top, report: 'report.md' },
    file: `# Text report\n\n- words: ${words.length}\n- characters: ${text.length}\n- top words: ${top.join(', ')}\n\n> ${text}\n`,
  };
}

const ALL_TYPES = `
passThreshold: 0.9
evaluators:
  - name: output-matches
    type: exact-diff
    config: { paths: [words, characters, 'topWords[]'] }
  - name: same-text
    type: equals
    path: /text
    value: { $expected: /text }
  - name: has-beta
    type: contains
    path: /text
    value: beta
  - name: starts-alpha
    type: regex
    path: /text
    value: '^alpha'
  - name: is-json
    type: is-json
  - name: shape
    type: json-schema
    value: { type: object, required: [text, words], properties: { words: { type: integer } } }
  - name: close-text
    type: similar
    path: /text
    value: alpha betta
    threshold: 0.8
  - name: report-file
    type: file-equals
    value: { output: report.md, expected: report.md }
  - name: rule
    type: javascript
    value: |
      return { score: output.words === expected.words ? 1 : 0, label: 'words' };
  - name: judge
    type: llm-judge
    weight: 0
    config: { promptExtension: 'Same text, same counts, nothing invented.', model: deterministic }
`;

/** A parsed cell written back as RFC 4180 quoting would write it. */
const cell = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\r') continue;
    else if (c === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  return rows;
}

describe('evaluators and experiments', () => {
  it('answers yaml "" (a string, as the API type says) when no configuration is stored', async () => {
    const none = await h.api('GET', '/automations/agents.echo-agent/evaluators');
    assert.equal(none.status, 200);
    assertWire(EvaluatorConfigResponse, none.body);
    assert.equal(none.body.yaml, '');
    assert.equal(none.body.automationType, 'agent');
    assert.deepEqual(none.body.config, { evaluators: [], passThreshold: 0.7 });
  });

  it("PUT takes the SDK's JSON {yaml} (or YAML text) and answers EvaluatorConfigResponse", async () => {
    const yaml = 'passThreshold: 0.5\nevaluators:\n  - name: words\n    type: equals\n    path: /words\n';
    const put = await h.api('PUT', `/automations/${A}/evaluators`, { body: { yaml } });
    assert.equal(put.status, 200);
    assertWire(EvaluatorConfigResponse, put.body);
    assert.equal(put.body.yaml, yaml);
    assert.equal(put.body.automationType, 'workflow');
    assert.equal(put.body.config.passThreshold, 0.5);
    assert.equal(put.body.config.evaluators.length, 1);
    assert.deepEqual(
      { ...put.body.config.evaluators[0] },
      {
        name: 'words',
        type: 'equals',
        weight: 1,
        threshold: 1,
        path: '/words',
        value: { expectedPointer: '/words' },
      },
    );
    const got = await h.api('GET', `/automations/${A}/evaluators`);
    assert.deepEqual(got.body, put.body);
    const text = await h.api('PUT', `/automations/${A}/evaluators`, {
      raw: 'evaluators: []\n',
      headers: { 'content-type': 'text/yaml' },
    });
    assert.equal(text.status, 200);
    assert.equal(text.body.yaml, 'evaluators: []\n');
    const empty = await h.api('PUT', `/automations/${A}/evaluators`);
    assert.equal(empty.status, 400);
    assert.equal(empty.body.issues[0].field, 'yaml');
  });

  it('rejects broken evaluator configs with field paths and keeps the stored one', async () => {
    await client.automations.evaluators.put(A, 'evaluators: []\n');
    const cases: [string, RegExp][] = [
      ['evaluators: [\n', /<root>/],
      ['evaluators:\n  - name: a\n    type: nope\n', /^evaluators\.0/],
      [
        'evaluators:\n  - name: a\n    type: equals\n    value: 1\n    threshold: 1.5\n',
        /^evaluators\.0\.threshold/,
      ],
      ['evaluators:\n  - name: a\n    type: regex\n    value: "("\n', /^evaluators\.0/],
      ['evaluators:\n  - name: a\n    type: javascript\n    value: "return ("\n', /^evaluators\.0/],
      ['evaluators:\n  - name: Bad_Name\n    type: is-json\n', /^evaluators\.0\.name/],
      ['passThreshold: 2\nevaluators: []\n', /^passThreshold/],
    ];
    for (const [yaml, field] of cases) {
      await assert.rejects(client.automations.evaluators.put(A, yaml), (e: unknown) => {
        assert.ok(e instanceof ClientValidationError, String(e));
        const issues = (e.envelope as { issues: { field: string; code: string; message: string }[] }).issues;
        assert.match(issues[0]!.field, field, `${yaml} → ${JSON.stringify(issues)}`);
        if (field.source !== '<root>')
          assert.match(issues[0]!.message, /\(line \d+\)$/, 'problems name their line');
        return true;
      });
    }
    const notText = await h.api('PUT', `/automations/${A}/evaluators`, { body: { yaml: 5 } });
    assert.equal(notText.status, 400);
    assert.equal((await client.automations.evaluators.get(A))['yaml'], 'evaluators: []\n');
  });

  it('scores every evaluator type on a known case and records the scores on the run', async () => {
    const stored = await client.automations.evaluators.put(A, ALL_TYPES);
    assert.equal((stored['config'] as { evaluators: unknown[] }).evaluators.length, 10);
    const t = textReport('alpha beta');
    const ex = await client.automations.examples.create(A, {
      name: 'known',
      input: { text: 'alpha beta' },
      expected: t.output,
    });
    await client.automations.examples.expected.upload(A, ex.id, { 'report.md': strToU8(t.file) });
    const events = [];
    for await (const e of client.experiments.stream(A, { examples: [ex.id] })) events.push(e);
    assert.equal(events.length, 1);
    const runId = events[0]!.runId!;
    const { scores } = await client.runs.scores(runId);
    const byName = new Map(scores.map((s) => [s.evaluatorName, s]));
    assert.equal(byName.size, 10);
    for (const name of [
      'output-matches',
      'same-text',
      'has-beta',
      'starts-alpha',
      'is-json',
      'shape',
      'report-file',
      'rule',
      'judge',
    ])
      assert.equal(byName.get(name)?.score, 1, `${name}: ${JSON.stringify(byName.get(name))}`);
    // 'alpha beta' vs 'alpha betta': one insertion in 11 code points.
    assert.ok(Math.abs(byName.get('close-text')!.score! - (1 - 1 / 11)) < 1e-9);
    assert.equal(byName.get('close-text')!.passed, true);
    assert.equal(byName.get('rule')!.label, 'words');
    assert.equal(events[0]!.passed, true);
    assert.equal(byName.get('judge')!.weight, 0);

    // A single example run is scored too, once it finishes.
    const single = await client.automations.examples.run(A, ex.id);
    await h.service.core.runs.waitFor(String(single['id']), HANG_MS);
    // Scoring follows the run's completion, so the scores are awaited as state.
    const own = await waitUntil('the single run to be scored', async () => {
      const scores = (await client.runs.scores(String(single['id']))).scores;
      return scores.length >= 10 && scores;
    });
    assert.equal(own.length, 10);
    assert.ok(own.every((r) => r.evaluatorName === 'close-text' || r.score === 1));
  });

  it('an evaluator that fails is recorded with its score, a wrong output file fails file-equals', async () => {
    const ex = await client.automations.examples.create(A, {
      name: 'wrong',
      input: { text: 'alpha beta' },
      expected: { ...textReport('alpha beta').output, words: 3, text: 'alpha gamma' },
    });
    await client.automations.examples.expected.upload(A, ex.id, { 'report.md': strToU8('something else') });
    const created = await client.experiments.create(A, { examples: [ex.id] });
    assertWire(ExperimentCreateResponse, created);
    assert.match(created.id, /^exp_[0-9a-f]{18}$/);
    assert.equal(created.total, 1);
    const run = await h.service.core.runs.waitFor(created.runs[0]!.id, HANG_MS);
    const detail = await waitUntil('the experiment to complete', async () => {
      const d = await client.experiments.get(A, created.id);
      return d.status === 'completed' && d;
    });
    assertWire(ExperimentDetail, detail);
    const results = detail.resultsByRun[run.id]!;
    const byName = new Map(results.map((s) => [s.evaluatorName, s]));
    assert.equal(byName.get('same-text')!.score, 0);
    assert.equal(byName.get('report-file')!.score, 0);
    assert.equal(byName.get('rule')!.score, 0);
    assert.equal(detail.passedCount, 0);
    assert.equal(detail.failedCount, 1);
  });

  it('runs 20 examples, streams 20 NDJSON lines, and exports consistent CSV and JSON', async () => {
    await client.automations.evaluators.put(
      A,
      'passThreshold: 1\nevaluators:\n  - name: counts\n    type: exact-diff\n    config: { paths: [words, characters] }\n  - name: text\n    type: equals\n    path: /text\n',
    );
    const ids: string[] = [];
    // Some names are spreadsheet formulas: the CSV must not let them run (OWASP "CSV Injection").
    const names: Record<number, string> = {
      1: '=HYPERLINK("http://x","a,b")',
      2: '@SUM(1)',
      3: '-2+3',
      5: '+1',
    };
    for (let i = 0; i < 20; i++) {
      const text = `w${i} beta`;
      const expected = textReport(text).output;
      if (i % 4 === 0) expected.words = 5; // 5 of 20 are wrong on purpose
      const name = names[i] ?? `n${i}`;
      ids.push((await client.automations.examples.create(A, { name, input: { text }, expected })).id);
    }
    const events = [];
    for await (const e of client.experiments.stream(A, { examples: ids, batchConcurrency: 3 }))
      events.push(e);
    assert.equal(events.length, 20);
    assert.ok(events.every((e) => e.type === 'run.completed' && e.status === 'completed'));
    assert.deepEqual(new Set(events.map((e) => e.exampleId)), new Set(ids));
    const experimentId = events[0]!.experimentId!;
    assert.equal(events.filter((e) => e.passed).length, 15);
    assert.deepEqual(
      events.map((e) => e.completedCount),
      Array.from({ length: 20 }, (_, i) => i + 1),
    );

    const detail = await client.experiments.get(A, experimentId);
    assertWire(ExperimentDetail, detail);
    assert.equal(detail.status, 'completed');
    assert.equal(detail.runCount, 20);
    assert.equal(detail.completedCount, 20);
    assert.equal(detail.passedCount, 15);
    assert.equal(detail.failedCount, 5);
    assert.equal(detail.runs.length, 20);
    assert.equal(Object.keys(detail.resultsByRun).length, 20);
    // counts: 2 leaves, 1 wrong → 0.5 for the wrong ones; text always 1 → weighted 0.75
    assert.ok(Math.abs((detail.avgScore as number) - (15 * 1 + 5 * 0.75) / 20) < 1e-9);

    // The product SDK refuses text/csv (it accepts JSON, octet-stream and zip content types).
    const raw = await h.api('GET', `/automations/${A}/experiments/${experimentId}/export?format=csv`);
    assert.equal(raw.status, 200);
    assert.equal(raw.headers.get('content-type'), 'application/octet-stream');
    assert.equal(raw.headers.get('content-disposition'), `attachment; filename="${experimentId}.csv"`);
    const rawJson = await h.api(
      'GET',
      `/automations/${A}/experiments/${experimentId}/export?format=json&includeTrace=1`,
    );
    assert.match(rawJson.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(rawJson.headers.get('content-disposition'), `attachment; filename="${experimentId}.json"`);
    const csv = parseCsv(await client.experiments.export(A, experimentId, { format: 'csv' }));
    assert.equal(raw.body.toString('utf8'), csv.map((r) => r.map(cell).join(',') + '\r\n').join(''));
    const json = JSON.parse(await client.experiments.export(A, experimentId, { format: 'json' })) as Record<
      string,
      unknown
    >[];
    assert.deepEqual(csv[0], [
      'executionId',
      'exampleId',
      'exampleName',
      'batchId',
      'evaluatorName',
      'evaluatorType',
      'score',
      'passed',
      'label',
      'weight',
      'createdAt',
      'error',
    ]);
    assert.equal(csv.length - 1, 40);
    assert.equal(json.length, 40);
    for (let i = 0; i < json.length; i++) {
      const row = csv[i + 1]!;
      assert.equal(row[0], json[i]!['executionId']);
      assert.equal(row[3], experimentId);
      assert.equal(row[4], json[i]!['evaluatorName']);
      assert.equal(Number(row[6]), json[i]!['score']);
      assert.equal(row[7], String(json[i]!['passed']));
      const name = json[i]!['exampleName'] as string;
      assert.equal(row[2], /^[=+\-@]/.test(name) ? `'${name}` : name, 'formula cells start with a quote');
    }
    assert.equal(
      json.filter((r) => /^[=+\-@]/.test(r['exampleName'] as string)).length,
      8,
      'JSON is as stored',
    );
    const failing = json.filter((r) => r['evaluatorName'] === 'counts' && r['passed'] === false);
    assert.equal(failing.length, 5);
    const all = JSON.parse(await client.experiments.exportAll(A, { format: 'json' })) as unknown[];
    assert.ok(all.length >= 40 + 10);
    const allCsv = await h.api('GET', `/automations/${A}/experiments/export?format=csv`);
    assert.equal(allCsv.headers.get('content-type'), 'application/octet-stream');
    assert.equal(allCsv.headers.get('content-disposition'), 'attachment; filename="text-report-results.csv"');
    assert.equal(
      parseCsv(allCsv.body.toString('utf8')).length - 1,
      all.length,
      'CSV and JSON list the same rows',
    );
    const bad = await h.api('GET', `/automations/${A}/experiments/${experimentId}/export?format=xml`);
    assert.equal(bad.status, 400);
    const missing = await h.api('GET', `/automations/${A}/experiments/${experimentId}/export`);
    assert.equal(missing.status, 400);

    const run0 = detail.runs[0]!;
    const scores = await client.runs.scores(run0.id);
    assert.equal(scores.scores.length, 2);
    const listed = await h.api('GET', `/runs?batch_id=${experimentId}&limit=100`);
    assert.equal(listed.body.runs.length, 20);

    const ref = await client.experiments.ref(experimentId);
    assertWire(ExperimentRef, ref);
    assert.deepEqual(ref, { id: experimentId, automationId: (await client.automations.get(A)).id });
    // Another tenant does not find it, neither by id nor under the automation.
    const keys = h.ctx.ctx.auth as KeyStore;
    const other = (await keys.create({ tenant: 'tenant-other', user: 'eve', name: 'e', scopes: ['admin'] }))
      .token;
    assert.equal((await h.api('GET', `/experiments/${experimentId}`, { token: other })).status, 404);
    assert.equal(
      (await h.api('GET', `/automations/${A}/experiments/${experimentId}`, { token: other })).status,
      404,
    );
    const recent = await client.experiments.list(A, { fromDate: '-1d', limit: 100 });
    assertWire(AutomationsExperimentsListResponse, recent);
    assert.ok((recent['data'] as { id: string }[]).some((e) => e.id === experimentId));
    const old = await client.experiments.list(A, { to_date: '7d ago' });
    assert.equal(old['total'], 0);
    const future = await client.experiments.list(A, { from_date: '2999-01-01' });
    assert.equal(future['total'], 0);
    const snake = await h.api('GET', `/automations/${A}/experiments?from_date=-1d&limit=1&offset=1`);
    assert.equal(snake.body.data.length, 1);
    assert.equal((await h.api('GET', `/automations/${A}/experiments?from_date=yesterday-ish`)).status, 400);
    assert.equal((await h.api('GET', `/experiments/exp_nope`)).status, 404);
    assert.equal(
      (await h.api('POST', `/automations/${A}/experiments`, { body: { examples: ['ex_missing'] } })).status,
      400,
    );
    assert.equal(
      (await h.api('POST', `/automations/${A}/experiments`, { body: { batchConcurrency: 0 } })).status,
      400,
    );
    // A misspelt selection is refused rather than running the whole dataset.
    const misspelt = await h.api('POST', `/automations/${A}/experiments`, { body: { exampleIds: [ids[0]] } });
    assert.equal(misspelt.status, 400);
    const nullConcurrency = await h.api('POST', `/automations/${A}/experiments`, {
      body: { examples: [ids[2]], batchConcurrency: null },
    });
    assert.equal(nullConcurrency.status, 202);
    await h.service.core.runs.waitFor(nullConcurrency.body.runs[0].id, HANG_MS);
    const badRef = await h.api('POST', `/automations/${A}/experiments`, {
      body: { examples: [ids[0]], sourceRef: 'no-such-ref' },
    });
    assert.equal(badRef.status, 404);
    const pinned = await client.experiments.create(A, { examples: [ids[1]!], sourceRef: 'latest' });
    const pinnedRun = await h.service.core.runs.waitFor(pinned.runs[0]!.id, HANG_MS);
    assert.equal(pinnedRun.status, 'completed');
    assert.equal(pinnedRun.git.requestedRef, 'latest');
  });

  it('cancel keeps completed runs and cancels queued and running work', async () => {
    await client.automations.evaluators.put(A, 'evaluators:\n  - name: text\n    type: is-json\n');
    const ids: string[] = [];
    // The slow examples sleep for the longest input the workflow accepts, so they finish only
    // when cancelled: nothing here depends on how fast the machine runs the fast one.
    for (let i = 0; i < 6; i++)
      ids.push(
        (
          await client.automations.examples.create(A, {
            name: `slow${i}`,
            input: { text: `s${i}`, delay_ms: i === 0 ? 0 : 600_000 },
          })
        ).id,
      );
    const created = await client.experiments.create(A, { examples: ids, batchConcurrency: 2 });
    assert.equal(created.total, 6);
    assert.equal(created.runs.length, 2);
    // The two lanes start concurrently, so the fast example's run is found by its example id.
    const firstRun = created.runs.find((r) => r.exampleId === ids[0])!.id;
    assert.equal((await h.service.core.runs.waitFor(firstRun, HANG_MS)).status, 'completed');
    // The fast run is scored and its lane has started the next example: one run completed,
    // two in flight, three examples not started yet.
    await waitUntil('the first result and the third run', async () => {
      const detail = await client.experiments.get(A, created.id);
      return (detail.completedCount ?? 0) >= 1 && detail.runs.length === 3;
    });
    const cancelled = await client.experiments.cancel(A, created.id);
    assertWire(ExperimentDetail, cancelled);
    assert.equal(cancelled.status, 'completed');
    const statuses = new Map(cancelled.runs.map((r) => [r.id, r.status]));
    assert.equal(statuses.get(firstRun), 'completed', 'completed runs are kept');
    assert.equal(cancelled.resultsByRun[firstRun]!.length, 1, 'and so are their scores');
    const others = cancelled.runs.filter((r) => r.id !== firstRun);
    assert.equal(others.length, 2);
    assert.ok(
      others.every((r) => r.status === 'cancelled'),
      JSON.stringify(others),
    );
    assert.equal(cancelled.runCount, 6);
    assert.equal(cancelled.runs.length, 3, 'examples not started are never run');
    assert.equal(cancelled.completedCount, 3);
    const again = await client.experiments.cancel(A, created.id);
    assert.equal(again.runs.length, cancelled.runs.length);
  });
});
