// Every endpoint of the client against a recording HTTP server: method, path, query, headers and
// body as they reach the wire.
import * as assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { ServiceClient, toFile } from '../../src/automation/client/index.js';
import { formOf, json, RUN_DONE, startFakeApi } from './client-fixture.js';
import type { FakeApi, Recorded } from './client-fixture.js';

let api: FakeApi;
let client: ServiceClient;

before(async () => {
  api = await startFakeApi();
  client = new ServiceClient({ api_key: 'sk-test', base_url: api.url, env: {} });
});
after(async () => api.close());
beforeEach(() => api.reset());

function only(): Recorded {
  assert.equal(
    api.log.length,
    1,
    `expected one request, saw ${api.log.map((r) => `${r.method} ${r.path}`).join(', ')}`,
  );
  return api.log[0]!;
}

function jsonBody(rec: Recorded): unknown {
  assert.equal(rec.headers['content-type'], 'application/json');
  return JSON.parse(rec.body.toString('utf8'));
}

describe('auth', () => {
  it('check sends GET /api/v1/auth/check with the bearer key', async () => {
    const answer = await client.auth.check();
    const rec = only();
    assert.equal(rec.method, 'GET');
    assert.equal(rec.path, '/api/v1/auth/check');
    assert.equal(rec.headers.authorization, 'Bearer sk-test');
    assert.equal(rec.headers.accept, 'application/json');
    assert.match(String(rec.headers['user-agent']), /^sluice-automation-client\//);
    assert.deepEqual(answer.scope, ['admin']);
  });
});

describe('automations', () => {
  it('list sends search, type, limit and offset', async () => {
    const page = await client.automations.list({ search: 'echo', type: 'workflow', limit: 5, offset: 10 });
    const rec = only();
    assert.equal(rec.path, '/api/v1/automations');
    assert.deepEqual(rec.query, { search: 'echo', type: 'workflow', limit: '5', offset: '10' });
    assert.equal(page.total, 1);
    assert.equal(page.data[0]?.slug, 'echo-report');
  });

  it('get, sync, versions and triggers address the typed alias', async () => {
    await client.automations.get('workflows.echo-report');
    const sync = await client.automations.sync('workflows.echo-report');
    await client.automations.versions('workflows.echo-report');
    await client.automations.triggers('agents.echo-agent');
    assert.deepEqual(
      api.log.map((r) => `${r.method} ${r.path}`),
      [
        'GET /api/v1/automations/workflows.echo-report',
        'POST /api/v1/automations/workflows.echo-report/sync',
        'GET /api/v1/automations/workflows.echo-report/versions',
        'GET /api/v1/automations/agents.echo-agent/triggers',
      ],
    );
    assert.equal(sync.release.tag, 'workflows.echo-report@1.0.0');
    assert.equal(api.log[1]!.body.length, 0);
  });

  it('encodes ids that contain reserved characters', async () => {
    await client.automations.get('odd id/with?chars');
    assert.equal(only().path, '/api/v1/automations/odd%20id%2Fwith%3Fchars');
  });

  it('examples CRUD and run', async () => {
    await client.automations.examples.list('aut_1', { limit: 2, offset: 4 });
    await client.automations.examples.create('aut_1', {
      name: 'first',
      input: { text: 'a' },
      expected: { text: 'A' },
    });
    await client.automations.examples.get('aut_1', 'ex_1');
    await client.automations.examples.update('aut_1', 'ex_1', { annotation: null });
    await client.automations.examples.delete('aut_1', 'ex_1');
    await client.automations.examples.run('aut_1', 'ex_1');
    assert.deepEqual(
      api.log.map((r) => `${r.method} ${r.path}`),
      [
        'GET /api/v1/automations/aut_1/examples',
        'POST /api/v1/automations/aut_1/examples',
        'GET /api/v1/automations/aut_1/examples/ex_1',
        'PATCH /api/v1/automations/aut_1/examples/ex_1',
        'DELETE /api/v1/automations/aut_1/examples/ex_1',
        'POST /api/v1/automations/aut_1/examples/ex_1/run',
      ],
    );
    assert.deepEqual(api.log[0]!.query, { limit: '2', offset: '4' });
    assert.deepEqual(jsonBody(api.log[1]!), { name: 'first', input: { text: 'a' }, expected: { text: 'A' } });
    assert.deepEqual(jsonBody(api.log[3]!), { annotation: null });
  });

  it('example input and expected files: list, upload, download, rename, delete', async () => {
    const ex = client.automations.examples;
    await ex.input.list('aut_1', 'ex_1');
    await ex.input.upload('aut_1', 'ex_1', {
      'docs/contract.pdf': Buffer.from('%PDF'),
      'notes.txt': new Blob(['n']),
    });
    const bytes = await ex.expected.download('aut_1', 'ex_1', 'out/a b.pdf');
    await ex.expected.rename('aut_1', 'ex_1', 'out/a b.pdf', 'c.pdf');
    const deleted = await ex.expected.delete('aut_1', 'ex_1', 'out/c.pdf');
    await ex.expected.upload('aut_1', 'ex_1', [toFile('x', 'x.txt', 'text/plain')]);
    assert.deepEqual(
      api.log.map((r) => `${r.method} ${r.path}`),
      [
        'GET /api/v1/automations/aut_1/examples/ex_1/input',
        'POST /api/v1/automations/aut_1/examples/ex_1/input',
        'GET /api/v1/automations/aut_1/examples/ex_1/expected/out/a%20b.pdf',
        'PATCH /api/v1/automations/aut_1/examples/ex_1/expected/out/a%20b.pdf',
        'DELETE /api/v1/automations/aut_1/examples/ex_1/expected/out/c.pdf',
        'POST /api/v1/automations/aut_1/examples/ex_1/expected',
      ],
    );
    const form = await formOf(api.log[1]!);
    const files = form.getAll('file') as File[];
    assert.deepEqual(
      files.map((f) => f.name),
      ['docs/contract.pdf', 'notes.txt'],
    );
    assert.equal(files[0]!.type, 'application/pdf');
    assert.equal(await files[0]!.text(), '%PDF');
    assert.equal(Buffer.from(bytes).toString(), '%PDF-1.7 bytes');
    assert.deepEqual(jsonBody(api.log[3]!), { newFilename: 'c.pdf' });
    assert.equal(deleted, undefined);
    const second = (await formOf(api.log[5]!)).getAll('file') as File[];
    assert.equal(second[0]!.name, 'x.txt');
    assert.equal(second[0]!.type, 'text/plain');
  });

  it('refuses dot segments and empty paths, which URL parsing would fold into another resource', async () => {
    const bad = (e: unknown) => (e as { code?: string }).code === 'invalid_argument';
    await assert.rejects(client.automations.examples.input.download('aut_1', 'ex_1', '../secret'), bad);
    await assert.rejects(client.automations.examples.input.download('aut_1', 'ex_1', 'a/./b'), bad);
    await assert.rejects(client.automations.examples.input.download('aut_1', 'ex_1', '//'), bad);
    await assert.rejects(client.runs.get('..'), bad);
    await assert.rejects(client.runs.get(''), bad);
    assert.equal(api.log.length, 0);
  });

  it('the SDK-named example file methods send the same requests', async () => {
    const ex = client.automations.examples;
    await ex.inputFiles.list('aut_1', 'ex_1');
    await ex.inputFiles.create('aut_1', 'ex_1', { file: [toFile('a', 'a.txt', 'text/plain')] });
    await ex.inputFile.get('aut_1', 'ex_1', 'a.txt');
    await ex.inputFile.update('aut_1', 'ex_1', 'a.txt', { newFilename: 'b.txt' });
    await ex.inputFile.delete('aut_1', 'ex_1', 'b.txt');
    await ex.expectedFiles.list('aut_1', 'ex_1');
    await ex.expectedFiles.create('aut_1', 'ex_1', [toFile('e', 'e.txt')]);
    await ex.expectedFile.get('aut_1', 'ex_1', 'e.txt');
    await ex.expectedFile.update('aut_1', 'ex_1', 'e.txt', { newFilename: 'f.txt' });
    await ex.expectedFile.delete('aut_1', 'ex_1', 'f.txt');
    const base = '/api/v1/automations/aut_1/examples/ex_1';
    assert.deepEqual(
      api.log.map((r) => `${r.method} ${r.path}`),
      [
        `GET ${base}/input`,
        `POST ${base}/input`,
        `GET ${base}/input/a.txt`,
        `PATCH ${base}/input/a.txt`,
        `DELETE ${base}/input/b.txt`,
        `GET ${base}/expected`,
        `POST ${base}/expected`,
        `GET ${base}/expected/e.txt`,
        `PATCH ${base}/expected/e.txt`,
        `DELETE ${base}/expected/f.txt`,
      ],
    );
    assert.deepEqual(
      ((await formOf(api.log[1]!)).getAll('file') as File[]).map((f) => f.name),
      ['a.txt'],
    );
    assert.deepEqual(jsonBody(api.log[3]!), { newFilename: 'b.txt' });
    assert.deepEqual(jsonBody(api.log[8]!), { newFilename: 'f.txt' });
  });

  it('dataset export sends exampleIds comma-separated and returns the ZIP bytes', async () => {
    const zip = await client.automations.dataset.export('aut_1', { exampleIds: ['ex_1', 'ex_2'] });
    const rec = only();
    assert.equal(rec.path, '/api/v1/automations/aut_1/dataset/export');
    assert.deepEqual(rec.query, { exampleIds: 'ex_1,ex_2' });
    assert.deepEqual([...zip.slice(0, 2)], [0x50, 0x4b]);
  });

  it('dataset import sends the ZIP as part `file` and the mode as a form field', async () => {
    await client.automations.dataset.import('aut_1', new Uint8Array([0x50, 0x4b, 5, 6]), { mode: 'replace' });
    const rec = only();
    assert.equal(rec.method, 'POST');
    assert.equal(rec.path, '/api/v1/automations/aut_1/dataset/import');
    assert.deepEqual(rec.query, {});
    assert.match(String(rec.headers['content-type']), /^multipart\/form-data; boundary=/);
    const form = await formOf(rec);
    const file = form.get('file') as File;
    assert.equal(file.name, 'dataset.zip');
    assert.equal(file.type, 'application/zip');
    assert.deepEqual([...new Uint8Array(await file.arrayBuffer())], [0x50, 0x4b, 5, 6]);
    assert.equal(form.get('mode'), 'replace');
  });

  it('evaluators get, update and put ({ yaml })', async () => {
    await client.automations.evaluators.get('aut_1');
    await client.automations.evaluators.update('aut_1', 'passThreshold: 0.8\nevaluators: []\n');
    await client.automations.evaluators.put('aut_1', { yaml: 'evaluators: []\n' });
    assert.equal(api.log[0]!.path, '/api/v1/automations/aut_1/evaluators');
    assert.equal(api.log[1]!.method, 'PUT');
    assert.deepEqual(jsonBody(api.log[1]!), { yaml: 'passThreshold: 0.8\nevaluators: []\n' });
    assert.equal(api.log[2]!.method, 'PUT');
    assert.deepEqual(jsonBody(api.log[2]!), { yaml: 'evaluators: []\n' });
  });

  it('review health sends the SDK camelCase names whatever the caller used', async () => {
    await client.automations.reviews.health('aut_1', {
      type: ['workflow', 'agent'],
      triggeredBy: ['u1', 'system'],
      from: new Date('2026-01-01T00:00:00Z'),
      experiments: false,
      bucket: 'week',
      rollingWindow: 50,
      min_rolling_reviews: 3,
      exampleIdContains: 'inv',
    });
    const rec = only();
    assert.equal(rec.path, '/api/v1/automations/aut_1/reviews/health');
    assert.deepEqual(rec.query, {
      type: 'workflow,agent',
      triggeredBy: 'u1,system',
      from: '2026-01-01T00:00:00.000Z',
      experiments: 'false',
      bucket: 'week',
      rollingWindow: '50',
      minRollingReviews: '3',
      exampleIdContains: 'inv',
    });
  });
});

describe('experiments', () => {
  it('create, list, get, cancel, resolve (and its alias ref)', async () => {
    assert.equal(client.automations.experiments, client.experiments);
    await client.experiments.create('aut_1', { examples: ['ex_1'], batchConcurrency: 2 });
    await client.experiments.list('aut_1', { limit: 10, fromDate: '-7d', to_date: '2026-02-01' });
    await client.experiments.get('aut_1', 'exp_1');
    await client.experiments.cancel('aut_1', 'exp_1');
    await client.experiments.resolve('exp_1');
    await client.experiments.ref('exp_1');
    assert.deepEqual(
      api.log.map((r) => `${r.method} ${r.path}`),
      [
        'POST /api/v1/automations/aut_1/experiments',
        'GET /api/v1/automations/aut_1/experiments',
        'GET /api/v1/automations/aut_1/experiments/exp_1',
        'POST /api/v1/automations/aut_1/experiments/exp_1/cancel',
        'GET /api/v1/experiments/exp_1',
        'GET /api/v1/experiments/exp_1',
      ],
    );
    assert.deepEqual(jsonBody(api.log[0]!), { examples: ['ex_1'], batchConcurrency: 2 });
    assert.deepEqual(api.log[1]!.query, { limit: '10', fromDate: '-7d', toDate: '2026-02-01' });
  });

  it('exports are returned as text verbatim; csv is the default format', async () => {
    const csv = await client.experiments.export('aut_1', 'exp_1');
    const all = await client.experiments.exportAll('aut_1', { format: 'json' });
    await client.experiments.export('aut_1', 'exp_1', { format: 'json', includeTrace: true });
    assert.equal(api.log[0]!.path, '/api/v1/automations/aut_1/experiments/exp_1/export');
    assert.deepEqual(api.log[0]!.query, { format: 'csv' });
    assert.deepEqual(api.log[1]!.query, { format: 'json' });
    assert.deepEqual(api.log[2]!.query, { format: 'json', includeTrace: 'true' });
    assert.equal(api.log[1]!.path, '/api/v1/automations/aut_1/experiments/export');
    assert.equal(csv, 'executionId,exampleId,score\nrun_1,ex_1,1\n');
    assert.equal(all, '[{"executionId":"run_1","score":1}]');
  });
});

describe('runs', () => {
  it('list sends every filter in the SDK camelCase, whichever case the caller used', async () => {
    api.use(() => json('r', { runs: [RUN_DONE], nextCursor: null }));
    await client.runs.list({
      type: 'workflow',
      source: 'workflows.echo-report',
      status: ['completed', 'failed'],
      trigger: 'api',
      triggeredBy: 'system',
      sourceRef: 'main',
      batchId: 'exp_1',
      exampleId: 'ex_1',
      example_id_contains: 'ex',
      from: '2026-01-01',
      to: '2026-02-01',
      createdAfter: new Date('2026-01-02T00:00:00Z'),
      created_before: '2026-01-03',
      completedAfter: '2026-01-04',
      completed_before: '2026-01-05',
      cursor: 'c0',
      offset: 0,
      limit: 50,
      ids: ['run_1', 'run_2'],
      experiments: false,
      sort: 'createdAt',
      order: 'asc',
      reviewStatus: 'open',
      review_verdict: 'incorrect',
      hasReview: true,
      no_review: false,
      hasCorrections: true,
      reviewNoteContains: 'total',
      reviewCreatedAfter: '2026-01-06',
      review_created_before: '2026-01-07',
      reviewUpdatedAfter: '2026-01-08',
      review_updated_before: '2026-01-09',
      reviewClosedAfter: '2026-01-10',
      review_closed_before: '2026-01-11',
      sinceLastClosed: true,
      sampleRate: 0.25,
    });
    assert.deepEqual(only().query, {
      type: 'workflow',
      source: 'workflows.echo-report',
      status: 'completed,failed',
      trigger: 'api',
      triggeredBy: 'system',
      sourceRef: 'main',
      batchId: 'exp_1',
      exampleId: 'ex_1',
      exampleIdContains: 'ex',
      from: '2026-01-01',
      to: '2026-02-01',
      createdAfter: '2026-01-02T00:00:00.000Z',
      createdBefore: '2026-01-03',
      completedAfter: '2026-01-04',
      completedBefore: '2026-01-05',
      cursor: 'c0',
      offset: '0',
      limit: '50',
      ids: 'run_1,run_2',
      experiments: 'false',
      sort: 'createdAt',
      order: 'asc',
      reviewStatus: 'open',
      reviewVerdict: 'incorrect',
      hasReview: 'true',
      noReview: 'false',
      hasCorrections: 'true',
      reviewNoteContains: 'total',
      reviewCreatedAfter: '2026-01-06',
      reviewCreatedBefore: '2026-01-07',
      reviewUpdatedAfter: '2026-01-08',
      reviewUpdatedBefore: '2026-01-09',
      reviewClosedAfter: '2026-01-10',
      reviewClosedBefore: '2026-01-11',
      sinceLastClosed: 'true',
      sampleRate: '0.25',
    });
  });

  it('iterate follows nextCursor across short and empty pages until it is absent', async () => {
    const pages: Record<string, { runs: { id: string }[]; nextCursor: string | null }> = {
      '': { runs: [{ id: 'r1' }, { id: 'r2' }], nextCursor: 'c1' },
      c1: { runs: [], nextCursor: 'c2' },
      c2: { runs: [{ id: 'r3' }], nextCursor: null },
    };
    api.use((req) => json('r', pages[req.query['cursor'] ?? '']));
    const ids: string[] = [];
    for await (const run of client.runs.iterate({ limit: 2, sampleRate: 0.5 })) ids.push(run.id);
    assert.deepEqual(ids, ['r1', 'r2', 'r3']);
    assert.deepEqual(
      api.log.map((r) => r.query),
      [
        { limit: '2', sampleRate: '0.5' },
        { limit: '2', sampleRate: '0.5', cursor: 'c1' },
        { limit: '2', sampleRate: '0.5', cursor: 'c2' },
      ],
    );
  });

  it('iterate refuses a cursor that repeats instead of looping forever', async () => {
    api.use(() => json('r', { runs: [{ id: 'r1' }], nextCursor: 'same' }));
    await assert.rejects(
      async () => {
        for await (const _ of client.runs.iterate()) {
          /* drain */
        }
      },
      (e: unknown) => (e as { code?: string }).code === 'invalid_response',
    );
    assert.equal(api.log.length, 2);
  });

  it('get with expand, cancel, events, steps, trace, usage, scores, promote', async () => {
    const run = await client.runs.get('run_1', { expand: ['input', 'usage'] });
    await client.runs.get('run_1', { expand: 'debug' });
    await client.runs.cancel('run_1');
    await client.runs.events('run_1');
    await client.runs.steps('run_1');
    await client.runs.trace('run_1');
    await client.runs.usage('run_1');
    await client.runs.scores('run_1');
    await client.runs.promote('run_1', { name: 'from run 1' });
    await client.runs.scores.list('run_1');
    await client.runs.trace.get('run_1');
    assert.equal(run.output && (run.output as { text: string }).text, 'HELLO');
    assert.deepEqual(
      api.log.map((r) => `${r.method} ${r.path}`),
      [
        'GET /api/v1/runs/run_1',
        'GET /api/v1/runs/run_1',
        'POST /api/v1/runs/run_1/cancel',
        'GET /api/v1/runs/run_1/events',
        'GET /api/v1/runs/run_1/steps',
        'GET /api/v1/runs/run_1/trace',
        'GET /api/v1/runs/run_1/usage',
        'GET /api/v1/runs/run_1/scores',
        'POST /api/v1/runs/run_1/promote',
        'GET /api/v1/runs/run_1/scores',
        'GET /api/v1/runs/run_1/trace',
      ],
    );
    assert.deepEqual(api.log[0]!.query, { expand: 'input,usage' });
    assert.deepEqual(api.log[1]!.query, { expand: 'debug' });
    assert.deepEqual(jsonBody(api.log[8]!), { name: 'from run 1' });
  });

  it('artifacts: list, zip (bearer), zip with a signed token (no bearer), one artifact', async () => {
    await client.runs.artifacts.list('run_1');
    const zip = await client.runs.artifacts.zip('run_1', { bundle: 'review' });
    await client.runs.artifacts.zip('run_1', { token: 'signed.tok' });
    const one = await client.runs.artifacts.download('run_1', 'output/report.txt');
    assert.deepEqual(api.log[0]!.query, {});
    assert.deepEqual(api.log[1]!.query, { zip: '1', bundle: 'review' });
    assert.equal(api.log[1]!.headers.authorization, 'Bearer sk-test');
    assert.deepEqual(api.log[2]!.query, { zip: '1', token: 'signed.tok' });
    assert.equal(api.log[2]!.headers.authorization, undefined);
    assert.equal(api.log[3]!.path, '/api/v1/runs/run_1/artifacts/output/report.txt');
    assert.deepEqual([...zip.slice(0, 2)], [0x50, 0x4b]);
    assert.equal(Buffer.from(one).toString(), 'HELLO');
  });

  it('reviews: get, put, delete and the expected files (and the SDK names update, clear, renameExpected)', async () => {
    const r = client.runs.reviews;
    await r.get('run_1');
    await r.put('run_1', {
      verdict: 'incorrect',
      note: 'total wrong',
      correctedOutput: { total: 3 },
      corrections: [{ kind: 'field', path: '/total', correctedValue: 3 }],
    });
    await r.delete('run_1');
    await r.listExpected('run_1');
    await r.uploadExpected('run_1', Buffer.from('fixed'), { name: 'report.txt' });
    await r.copyOutputToExpected('run_1', 'report.txt', { expectedName: 'expected.txt' });
    const bytes = await r.downloadExpected('run_1', 'expected.txt');
    await r.updateExpected('run_1', 'expected.txt', { name: 'renamed.txt' });
    await r.deleteExpected('run_1', 'renamed.txt');
    assert.deepEqual(
      api.log.map((x) => `${x.method} ${x.path}`),
      [
        'GET /api/v1/runs/run_1/reviews',
        'PUT /api/v1/runs/run_1/reviews',
        'DELETE /api/v1/runs/run_1/reviews',
        'GET /api/v1/runs/run_1/reviews/expected',
        'POST /api/v1/runs/run_1/reviews/expected',
        'POST /api/v1/runs/run_1/reviews/expected',
        'GET /api/v1/runs/run_1/reviews/expected/expected.txt',
        'PATCH /api/v1/runs/run_1/reviews/expected/expected.txt',
        'DELETE /api/v1/runs/run_1/reviews/expected/renamed.txt',
      ],
    );
    assert.equal((jsonBody(api.log[1]!) as { verdict: string }).verdict, 'incorrect');
    const form = await formOf(api.log[4]!);
    const file = form.get('file') as File;
    assert.equal(file.name, 'report.txt');
    assert.equal(await file.text(), 'fixed');
    assert.equal(form.get('name'), 'report.txt');
    assert.deepEqual(jsonBody(api.log[5]!), { outputFileName: 'report.txt', expectedName: 'expected.txt' });
    assert.equal(Buffer.from(bytes).toString(), 'HELLO');
    assert.deepEqual(jsonBody(api.log[7]!), { name: 'renamed.txt' });

    api.reset();
    await r.update('run_1', { verdict: 'correct' });
    await r.renameExpected('run_1', 'a.txt', 'b.txt');
    await r.clear('run_1');
    assert.deepEqual(
      api.log.map((x) => `${x.method} ${x.path}`),
      [
        'PUT /api/v1/runs/run_1/reviews',
        'PATCH /api/v1/runs/run_1/reviews/expected/a.txt',
        'DELETE /api/v1/runs/run_1/reviews',
      ],
    );
    assert.deepEqual(jsonBody(api.log[1]!), { name: 'b.txt' });
  });
});

describe('files', () => {
  const STORED = {
    id: 'file_1',
    filename: 'contract.pdf',
    contentType: 'application/pdf',
    size: 4,
    purpose: 'run-input',
    createdAt: '2026-01-01T00:00:00Z',
  };

  it('create (one multipart POST), get, download, content, delete', async () => {
    api.use((req) =>
      req.method === 'POST'
        ? json('r', STORED)
        : req.path.endsWith('/content')
          ? { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: '%PDF' }
          : req.method === 'DELETE'
            ? json('r', { deleted: true })
            : json('r', STORED),
    );
    const stored = await client.files.create(Buffer.from('%PDF'), {
      filename: 'contract.pdf',
      purpose: 'run-input',
    });
    const meta = await client.files.get('file_1');
    const content = await client.files.download('file_1');
    const again = await client.files.content('file_1');
    const deleted = await client.files.delete('file_1');
    assert.deepEqual(
      api.log.map((x) => `${x.method} ${x.path}`),
      [
        'POST /api/v1/files',
        'GET /api/v1/files/file_1',
        'GET /api/v1/files/file_1/content',
        'GET /api/v1/files/file_1/content',
        'DELETE /api/v1/files/file_1',
      ],
    );
    const form = await formOf(api.log[0]!);
    const file = form.get('file') as File;
    assert.equal(file.name, 'contract.pdf');
    assert.equal(file.type, 'application/pdf');
    assert.equal(await file.text(), '%PDF');
    assert.equal(form.get('purpose'), 'run-input');
    assert.equal(stored.id, 'file_1');
    assert.equal(meta.size, 4);
    assert.equal(Buffer.from(content).toString(), '%PDF');
    assert.equal(Buffer.from(again).toString(), '%PDF');
    assert.equal(deleted.deleted, true);
  });

  it('upload with a presigned-put session: PUT the bytes without the key, then complete', async () => {
    api.use((req) => {
      if (req.method === 'POST' && req.path === '/api/v1/files/uploads')
        return json('r', {
          transport: 'presigned-put',
          uploadId: 'up_1',
          fileId: 'file_1',
          url: `${api.url}/storage/up_1?sig=abc`,
          headers: { 'content-type': 'application/pdf', 'x-amz-meta-a': 'b' },
          expiresAt: '2026-01-01T01:00:00Z',
          maxFileSizeBytes: 1000,
        });
      if (req.method === 'PUT') return { status: 200 };
      return json('r', STORED);
    });
    const progress: number[][] = [];
    const stored = await client.files.upload(toFile('%PDF', 'contract.pdf'), {
      idempotencyKey: 'idem-1',
      onProgress: (done, total) => progress.push([done, total]),
    });
    assert.equal(stored.id, 'file_1');
    assert.deepEqual(
      api.log.map((x) => `${x.method} ${x.path}`),
      ['POST /api/v1/files/uploads', 'PUT /storage/up_1', 'POST /api/v1/files/uploads/up_1/complete'],
    );
    assert.deepEqual(jsonBody(api.log[0]!), {
      filename: 'contract.pdf',
      contentType: 'application/pdf',
      size: 4,
      idempotencyKey: 'idem-1',
    });
    const put = api.log[1]!;
    assert.deepEqual(put.query, { sig: 'abc' });
    assert.equal(put.headers.authorization, undefined);
    assert.equal(put.headers['x-amz-meta-a'], 'b');
    assert.equal(put.body.toString(), '%PDF');
    assert.deepEqual(progress, [[4, 4]]);
  });

  it('a failed storage PUT aborts the upload session', async () => {
    api.use((req) => {
      if (req.method === 'POST')
        return json('r', {
          transport: 'presigned-put',
          uploadId: 'up_2',
          fileId: 'file_2',
          url: `${api.url}/storage/up_2`,
          headers: {},
          expiresAt: '2026-01-01T01:00:00Z',
          maxFileSizeBytes: 1000,
        });
      if (req.method === 'PUT') return { status: 403, body: 'denied' };
      return json('r', { aborted: true });
    });
    await assert.rejects(
      client.files.upload(toFile('x', 'x.txt')),
      (e: unknown) => (e as { status?: number }).status === 403,
    );
    assert.deepEqual(
      api.log.map((x) => `${x.method} ${x.path}`),
      ['POST /api/v1/files/uploads', 'PUT /storage/up_2', 'DELETE /api/v1/files/uploads/up_2'],
    );
  });

  it('upload with a multipart session posts part `file` to the URL it names', async () => {
    api.use((req) =>
      req.path === '/api/v1/files/uploads'
        ? json('r', { transport: 'multipart', url: '/v1/files', maxFileSizeBytes: 1000 })
        : json('r', STORED),
    );
    await client.files.upload(toFile('%PDF', 'contract.pdf'), { purpose: 'run-input' });
    assert.deepEqual(
      api.log.map((x) => `${x.method} ${x.path}`),
      ['POST /api/v1/files/uploads', 'POST /api/v1/files'],
    );
    assert.equal((jsonBody(api.log[0]!) as { purpose: string }).purpose, 'run-input');
    assert.equal(typeof (jsonBody(api.log[0]!) as { idempotencyKey: string }).idempotencyKey, 'string');
    const form = await formOf(api.log[1]!);
    assert.equal((form.get('file') as File).name, 'contract.pdf');
    assert.equal(form.get('purpose'), 'run-input');
  });

  it('createUpload, completeUpload and abortUpload one by one', async () => {
    await client.files.createUpload({ filename: 'a.txt', contentType: 'text/plain', size: 1 });
    await client.files.completeUpload('up 1');
    await client.files.abortUpload('up_1');
    assert.deepEqual(
      api.log.map((x) => `${x.method} ${x.path}`),
      [
        'POST /api/v1/files/uploads',
        'POST /api/v1/files/uploads/up%201/complete',
        'DELETE /api/v1/files/uploads/up_1',
      ],
    );
    assert.deepEqual(jsonBody(api.log[0]!), { filename: 'a.txt', contentType: 'text/plain', size: 1 });
  });

  it('upload falls back to one POST /files when the server has no upload sessions', async () => {
    api.use((req) =>
      req.path === '/api/v1/files/uploads'
        ? json('r', { issues: [{ field: '<root>', message: 'not found', code: 'not_found' }] }, 404)
        : json('r', STORED),
    );
    const stored = await client.files.upload(new File(['a,b'], 'n.csv'), { contentType: 'text/csv' });
    assert.equal(stored.id, 'file_1');
    assert.deepEqual(
      api.log.map((x) => `${x.method} ${x.path}`),
      ['POST /api/v1/files/uploads', 'POST /api/v1/files'],
    );
    const file = (await formOf(api.log[1]!)).get('file') as File;
    assert.equal(file.name, 'n.csv');
    assert.equal(file.type, 'text/csv');
  });

  it('run uploads files first when the multipart body would pass multipart_max_bytes', async () => {
    const small = new ServiceClient({
      api_key: 'sk-test',
      base_url: api.url,
      env: {},
      multipart_max_bytes: 256 * 1024 + 10,
    });
    api.use((req) => {
      if (req.path === '/api/v1/files/uploads')
        return json('r', { transport: 'multipart', url: '/v1/files', maxFileSizeBytes: 1e9 });
      if (req.path === '/api/v1/files') return json('r', { ...STORED, id: `file_${api.log.length}` });
      return json('r', { id: 'run_1', type: 'workflow', finished: false }, 201);
    });
    await small.run('workflows.x', {
      big: toFile('0123456789ABC', 'big.bin'),
      tiny: toFile('ab', 't.txt'),
      n: 1,
    });
    // The larger file goes first; the 2-byte one then fits within the 10 bytes left.
    assert.deepEqual(
      api.log.map((x) => `${x.method} ${x.path}`),
      ['POST /api/v1/files/uploads', 'POST /api/v1/files', 'POST /api/v1/runs'],
    );
    assert.equal((jsonBody(api.log[0]!) as { purpose: string }).purpose, 'run-input');
    const form = await formOf(api.log[2]!);
    assert.deepEqual(JSON.parse(form.get('input') as string), {
      big: { $fileId: 'file_2' },
      tiny: { $file: 'files.tiny' },
      n: 1,
    });
    assert.equal(await (form.get('files.tiny') as File).text(), 'ab');
    assert.equal(form.get('files.big'), null);

    api.reset();
    api.use((req) =>
      req.path === '/api/v1/files/uploads'
        ? json('r', { transport: 'multipart', url: '/v1/files', maxFileSizeBytes: 1e9 })
        : req.path === '/api/v1/files'
          ? json('r', STORED)
          : json('r', { id: 'run_2', type: 'workflow', finished: false }, 201),
    );
    await small.run('workflows.x', { only: toFile('0123456789ABCDEF', 'o.bin') });
    // Every file went first: the start is plain JSON.
    assert.deepEqual(jsonBody(api.log[2]!), {
      target: 'workflows.x',
      input: { only: { $fileId: 'file_1' } },
    });
  });

  it('multipart_max_bytes null keeps every file in the multipart body', async () => {
    const unlimited = new ServiceClient({
      api_key: 'k',
      base_url: api.url,
      env: {},
      multipartMaxBytes: null,
    });
    api.use(() => json('r', { id: 'run_1', type: 'workflow', finished: false }, 201));
    await unlimited.run('workflows.x', { big: new Uint8Array(6 * 1024 * 1024) });
    assert.equal(only().path, '/api/v1/runs');
    assert.throws(
      () => new ServiceClient({ env: { SERVICE_MULTIPART_MAX_BYTES: 'lots' } }),
      (e: unknown) => (e as { code?: string }).code === 'configuration_error',
    );
  });
});
