// Tenant isolation of every automation route. Tenant A creates one of everything; then every
// route of the service's own OpenAPI document is called as tenant B with A's identifiers in its
// path (and, where a body names a resource, in its body). A route whose path names one of A's
// resources must answer 404 with the JSON error body; any other route must answer without a
// trace of A's data and, when its body names A's resources, exactly as it answers for
// identifiers that exist nowhere. After each call A's resources, read back as A, must be
// unchanged. The list of routes comes from the
// document, so a new route is covered (or fails for want of a parameter value or a body here)
// without anyone remembering to add it.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { strToU8, unzipSync, zipSync } from 'fflate';
import type { KeyStore } from '../../src/core/auth/index.js';
import { sampleRank } from '../../src/automation/runs/ids.js';
import { emptyDetail } from '../../src/automation/runs/types.js';
import { syntheticRun } from '../../loadtest/scenarios/automation-support/fill.js';
import { startHarness, type Harness } from './harness.js';

const AUTOMATION = 'workflows.text-report';
/** Strings only tenant A's data holds: none may reach tenant B. */
const SECRETS = [
  'a-secret-run-text',
  'a-secret-file-bytes',
  'a-secret-example-name',
  'a-secret-annotation',
  'a-secret-input-bytes',
  'a-secret-expected-bytes',
  'a-secret-evaluator',
  'a-secret-review-note',
  'a-secret-corrected-bytes',
];

/**
 * Routes that are the same for every tenant, with the reason. They are still called as B and
 * checked for traces of A's data; they are only exempt from the 404 rule.
 */
const TENANT_NEUTRAL: Record<string, string> = {
  'GET /api/v1/auth/check': "describes the caller's own key",
  'GET /api/v1/automations':
    'automations are a catalogue released by the operator through the git registry, shared by all tenants',
  'GET /api/v1/automations/{id}': 'the shared automation catalogue',
  'GET /api/v1/automations/{id}/triggers': 'the shared automation catalogue',
  'GET /api/v1/automations/{id}/versions': 'the shared automation catalogue (git tags)',
  'POST /api/v1/automations/{id}/sync':
    "reconciles the shared catalogue with the operator's git release; it creates nothing per tenant",
};

interface Key {
  token: string;
  tenant: string;
}

interface Ids {
  automationId: string;
  runId: string;
  fileId: string;
  exampleId: string;
  experimentId: string;
  /** Every run A has (its own, the example's and the experiment's). */
  runIds: string[];
}

let h: Harness;
let a: Key;
let b: Key;
let ids: Ids;
/** B's own run, created before A closed its review. */
let bRunId: string;

type Reply = { status: number; body: any; headers: Headers };
const call = (
  key: Key,
  method: string,
  path: string,
  opts: { body?: unknown; raw?: FormData | Uint8Array } = {},
) => h.api(method, path, { ...opts, token: key.token }) as Promise<Reply>;

async function ok(reply: Promise<Reply>, status = 200): Promise<any> {
  const r = await reply;
  assert.equal(r.status, status, JSON.stringify(r.body instanceof Buffer ? r.body.toString() : r.body));
  return r.body;
}

const form = (parts: Record<string, [string, string] | string>) => {
  const f = new FormData();
  for (const [name, v] of Object.entries(parts))
    if (typeof v === 'string') f.append(name, v);
    else f.append(name, new Blob([v[1]], { type: 'text/plain' }), v[0]);
  return f;
};

/** Everything of A's, read as A; compared before and after each of B's calls. */
async function snapshotOfA(): Promise<Record<string, unknown>> {
  const aut = `/automations/${ids.automationId}`;
  const ex = `${aut}/examples/${ids.exampleId}`;
  const exp = `${aut}/experiments/${ids.experimentId}`;
  const reads = [
    `/files/${ids.fileId}`,
    `/files/${ids.fileId}/content`,
    `/runs?limit=100`,
    ...ids.runIds.map((id) => `/runs/${id}?expand=input,usage`),
    `/runs/${ids.runId}/events`,
    `/runs/${ids.runId}/scores`,
    `/runs/${ids.runId}/artifacts/output/report.md`,
    `/runs/${ids.runId}/reviews`,
    `/runs/${ids.runId}/reviews/expected`,
    `/runs/${ids.runId}/reviews/expected/fixed.md`,
    `${aut}/examples?limit=1000`,
    ex,
    `${ex}/input`,
    `${ex}/input/in.txt`,
    `${ex}/expected`,
    `${ex}/expected/report.md`,
    `${aut}/dataset/export`,
    `${aut}/evaluators`,
    `${aut}/experiments?limit=1000`,
    exp,
    `${exp}/export?format=json`,
    `${aut}/experiments/export?format=json`,
    `/experiments/${ids.experimentId}`,
  ];
  const out: Record<string, unknown> = {};
  for (const path of reads) {
    const r = await call(a, 'GET', path);
    // A failed read is recorded, not thrown: it is what B's call changed.
    // (An error body carries a fresh requestId, so only its status is kept.)
    out[path] =
      r.status === 200
        ? { status: r.status, body: r.body instanceof Buffer ? r.body.toString('base64') : r.body }
        : { status: r.status };
  }
  return out;
}

/** The text of an answer, with ZIP entries (names and contents) unpacked so they can be searched. */
function answerText(r: Reply): string {
  if (!(r.body instanceof Buffer)) return JSON.stringify(r.body);
  if ((r.headers.get('content-type') ?? '').includes('zip')) {
    const entries = unzipSync(new Uint8Array(r.body));
    return Object.entries(entries)
      .map(([name, bytes]) => `${name}\n${Buffer.from(bytes).toString('utf8')}`)
      .join('\n');
  }
  return r.body.toString('utf8');
}

/** A's identifiers that appear in an answer although B's request did not name them. */
function traces(r: Reply, request: string): string[] {
  const text = answerText(r);
  const found = SECRETS.filter((s) => text.includes(s));
  const own = [ids.fileId, ids.exampleId, ids.experimentId, ...ids.runIds];
  for (const id of own) if (text.includes(id) && !request.includes(id)) found.push(id);
  return found;
}

const isErrorBody = (body: unknown) =>
  body !== null &&
  typeof body === 'object' &&
  Array.isArray((body as { issues?: unknown }).issues) &&
  (body as { issues: unknown[] }).issues.length > 0 &&
  typeof (body as { requestId?: unknown }).requestId === 'string';

/** A read's path with A's identifiers named, for failure messages. */
const short = (path: string) =>
  path
    .replace(ids.automationId, '{id}')
    .replace(ids.exampleId, '{exampleId}')
    .replace(ids.experimentId, '{experimentId}')
    .replace(ids.fileId, '{fileId}')
    .replace(ids.runId, '{runId}');

const PLACEHOLDER = /\{(fileId|exampleId|runId|experimentId)\}/;

/** An identifier of the same shape as `id` that names nothing. */
const absent = (id: string) => id.slice(0, -4) + (id.endsWith('zzzz') ? 'yyyy' : 'zzzz');

before(async () => {
  // A small scan limit, so the listing test below can hold more of A's runs than one scan reads.
  h = await startHarness({ AUTOMATION_LIST_SCAN_LIMIT: '100' });
  const keys = h.ctx.ctx.auth as KeyStore;
  // Both keys hold every scope, so a refusal can only come from the tenant boundary.
  const ka = await keys.create({ tenant: 'tenant-a', user: 'alice', name: 'a', scopes: ['admin'] });
  const kb = await keys.create({ tenant: 'tenant-b', user: 'bob', name: 'b', scopes: ['admin'] });
  a = { token: ka.token, tenant: 'tenant-a' };
  b = { token: kb.token, tenant: 'tenant-b' };
});
after(async () => {
  await h?.close();
});

describe('tenant isolation', () => {
  it('tenant A creates one of everything', async () => {
    const automationId = (await ok(call(a, 'GET', `/automations/${AUTOMATION}`)))['id'] as string;
    const aut = `/automations/${automationId}`;
    const file = await ok(
      call(a, 'POST', '/files', { raw: form({ file: ['a.txt', 'a-secret-file-bytes'] }) }),
      201,
    );
    const run = await ok(
      call(a, 'POST', '/runs?wait_for_completion=60', {
        body: { target: AUTOMATION, input: { text: 'a-secret-run-text words' } },
      }),
    );
    assert.equal(run.execution.status, 'completed');
    await ok(
      call(a, 'PUT', `${aut}/evaluators`, {
        body: {
          yaml: 'evaluators:\n  - name: a-secret-evaluator\n    type: contains\n    path: /text\n    value: words\n',
        },
      }),
    );
    const example = await ok(
      call(a, 'POST', `${aut}/examples`, {
        body: {
          name: 'a-secret-example-name',
          annotation: 'a-secret-annotation',
          input: { text: 'alpha words' },
          expected: { text: 'alpha words' },
        },
      }),
      201,
    );
    const ex = `${aut}/examples/${example.id}`;
    await ok(
      call(a, 'POST', `${ex}/input`, { raw: form({ files: ['in.txt', 'a-secret-input-bytes'] }) }),
      201,
    );
    await ok(
      call(a, 'POST', `${ex}/expected`, { raw: form({ files: ['report.md', 'a-secret-expected-bytes'] }) }),
      201,
    );
    const started = await ok(call(a, 'POST', `${ex}/run`), 201);
    await h.service.core.runs.waitFor(started.id, 60_000);
    const experiment = await ok(
      call(a, 'POST', `${aut}/experiments`, { body: { examples: [example.id] } }),
      202,
    );
    const deadline = Date.now() + 60_000;
    for (;;) {
      const e = await ok(call(a, 'GET', `${aut}/experiments/${experiment.id}`));
      if (e.status === 'completed') break;
      assert.ok(Date.now() < deadline, 'the experiment did not finish');
      await new Promise((r) => setTimeout(r, 50));
    }
    // B's own run exists before A closes a review (see the since_last_closed test below).
    const bRun = await ok(
      call(b, 'POST', '/runs?wait_for_completion=60', {
        body: { target: AUTOMATION, input: { text: 'b text' } },
      }),
    );
    await ok(
      call(a, 'PUT', `/runs/${run.id}/reviews`, {
        // Closed explicitly: only a correct verdict closes a review by default.
        body: { verdict: 'incorrect', status: 'closed', note: 'a-secret-review-note' },
      }),
    );
    await ok(
      call(a, 'POST', `/runs/${run.id}/reviews/expected`, {
        raw: form({ file: ['fixed.md', 'a-secret-corrected-bytes'], name: 'fixed.md' }),
      }),
      201,
    );
    const list = await ok(call(a, 'GET', '/runs?limit=100'));
    const runIds = (list.runs as { id: string }[]).map((r) => r.id);
    assert.equal(runIds.length, 3, 'A has its run, the example run and the experiment run');
    assert.ok(!runIds.includes(bRun.id));
    bRunId = bRun.id;
    ids = {
      automationId,
      runId: run.id,
      fileId: file.id,
      exampleId: example.id,
      experimentId: experiment.id,
      runIds,
    };
    // A's exports hold A's data (so an empty export for B below means something).
    assert.ok(answerText(await call(a, 'GET', `${aut}/dataset/export`)).includes('a-secret-input-bytes'));
    const rows = await ok(call(a, 'GET', `${aut}/experiments/export?format=json`));
    assert.equal(rows.length, 1);
    assert.equal(rows[0].evaluatorName, 'a-secret-evaluator');
  });

  it("no route of the OpenAPI document lets tenant B see or touch A's resources", async (t) => {
    const doc = (await (await fetch(`${h.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<
          string,
          { parameters?: { name: string; in: string; required: boolean }[]; requestBody?: unknown }
        >
      >;
    };
    const routes: { method: string; path: string; op: (typeof doc.paths)[string][string] }[] = [];
    for (const [path, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops)) routes.push({ method: method.toUpperCase(), path, op });
    for (const key of Object.keys(TENANT_NEUTRAL))
      assert.ok(
        routes.some((r) => `${r.method} ${r.path}` === key),
        `${key} is listed as tenant-neutral but is not in the document`,
      );

    /** The value of a path parameter: one of A's identifiers, chosen by where it appears. */
    const param = (path: string, name: string): { value: string; owned: boolean } => {
      if (name === 'id' && path.startsWith('/api/v1/automations/'))
        return { value: ids.automationId, owned: false };
      if (name === 'id' && path.startsWith('/api/v1/runs/')) return { value: ids.runId, owned: true };
      if (name === 'id' && path.startsWith('/api/v1/files/')) return { value: ids.fileId, owned: true };
      if (name === 'exampleId') return { value: ids.exampleId, owned: true };
      if (name === 'experimentId') return { value: ids.experimentId, owned: true };
      if (name === 'filename') return { value: 'fixed.md', owned: true };
      if (name === 'path' && path.includes('/input/')) return { value: 'in.txt', owned: true };
      if (name === 'path' && path.includes('/expected/')) return { value: 'report.md', owned: true };
      if (name === 'path' && path.includes('/artifacts/')) return { value: 'output/report.md', owned: true };
      throw new Error(`no identifier of tenant A for {${name}} in ${path}: add one to this test`);
    };
    const owns = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].some((m) => param(path, m[1]!).owned);
    // Reads first, then writes to A's resources, writes to collections, deletions, and the
    // dataset import that replaces at the very end: on a service that leaks, as many routes as
    // possible still meet A's resources in place.
    const rank = (r: { method: string; path: string }) =>
      r.method === 'GET'
        ? 0
        : r.method === 'DELETE'
          ? 4
          : owns(r.path)
            ? 1
            : r.path.endsWith('/dataset/import')
              ? 5
              : 2;
    // Deletions run deepest path first, so a file goes before the example that holds it.
    const byPath = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);
    routes.sort(
      (x, y) =>
        rank(x) - rank(y) || (x.method === 'DELETE' ? byPath(y.path, x.path) : byPath(x.path, y.path)),
    );
    t.diagnostic(`${routes.length} routes, ${Object.keys(TENANT_NEUTRAL).length} of them tenant-neutral`);

    const queryValues: Record<string, string> = { format: 'json' };
    /** Optional query parameters that make a call reach further. */
    const extraQuery: Record<string, string> = {
      'POST /api/v1/automations/{id}/dataset/import': 'mode=replace',
    };
    const bImport = () =>
      zipSync({
        'examples/b-import/input.json': strToU8(JSON.stringify({ text: 'b' })),
      });
    /** B's request bodies; `{…}` placeholders are replaced by A's identifiers (or absent ones). */
    const bodies: Record<string, () => { body?: unknown; raw?: FormData | Uint8Array }> = {
      'POST /api/v1/runs': () => ({
        body: { target: AUTOMATION, input: { text: 'b' }, files: { doc: { $fileId: '{fileId}' } } },
      }),
      'POST /api/v1/files': () => ({ raw: form({ file: ['b.txt', 'b bytes'] }) }),
      'POST /api/v1/automations/{id}/examples': () => ({ body: { name: 'b example', input: { text: 'b' } } }),
      'PATCH /api/v1/automations/{id}/examples/{exampleId}': () => ({ body: { name: 'renamed by b' } }),
      'POST /api/v1/automations/{id}/examples/{exampleId}/input': () => ({
        raw: form({ files: ['in.txt', 'overwritten by b'] }),
      }),
      'POST /api/v1/automations/{id}/examples/{exampleId}/expected': () => ({
        raw: form({ files: ['report.md', 'overwritten by b'] }),
      }),
      'PATCH /api/v1/automations/{id}/examples/{exampleId}/input/{path}': () => ({
        body: { newFilename: 'b.txt' },
      }),
      'PATCH /api/v1/automations/{id}/examples/{exampleId}/expected/{path}': () => ({
        body: { newFilename: 'b.md' },
      }),
      'POST /api/v1/automations/{id}/dataset/import': () => ({ raw: bImport() }),
      'PUT /api/v1/automations/{id}/evaluators': () => ({
        body: { yaml: 'evaluators:\n  - name: b-evaluator\n    type: is-json\n' },
      }),
      'POST /api/v1/automations/{id}/experiments': () => ({ body: { examples: ['{exampleId}'] } }),
      'POST /api/v1/automations/{id}/experiments/stream': () => ({ body: { examples: ['{exampleId}'] } }),
      'PUT /api/v1/runs/{id}/reviews': () => ({ body: { verdict: 'correct', note: 'by b' } }),
      'POST /api/v1/runs/{id}/reviews/expected': () => ({
        raw: form({ file: ['fixed.md', 'by b'], name: 'fixed.md' }),
      }),
      'PATCH /api/v1/runs/{id}/reviews/expected/{filename}': () => ({ body: { name: 'b.md' } }),
      'POST /api/v1/runs/{id}/promote': () => ({ body: { name: 'promoted by b' } }),
    };
    const fill = (value: unknown, absentIds: boolean): unknown =>
      JSON.parse(
        JSON.stringify(value).replace(new RegExp(PLACEHOLDER.source, 'g'), (_, name: keyof Ids) =>
          absentIds ? absent(ids[name] as string) : (ids[name] as string),
        ),
      );

    const failures: string[] = [];
    let baseline = await snapshotOfA();
    for (const [path, read] of Object.entries(baseline))
      assert.equal((read as { status: number }).status, 200, `A reads ${path}`);
    for (const { method, path, op } of routes) {
      const key = `${method} ${path}`;
      let owned = false;
      const url = path.replace(/^\/api\/v1/, '').replace(/\{(\w+)\}/g, (_, name: string) => {
        const p = param(path, name);
        owned ||= p.owned;
        return p.value.split('/').map(encodeURIComponent).join('/');
      });
      const query: string[] = (op.parameters ?? [])
        .filter((p) => p.in === 'query' && p.required)
        .map((p) => {
          const v = queryValues[p.name];
          if (v === undefined)
            throw new Error(`no value for the required query ${p.name} of ${key}: add one`);
          return `${p.name}=${encodeURIComponent(v)}`;
        });
      if (extraQuery[key]) query.push(extraQuery[key]);
      const target = url + (query.length ? `?${query.join('&')}` : '');
      const make = bodies[key];
      if (op.requestBody !== undefined && !make)
        throw new Error(`no request body for ${key}: add one to this test`);
      const namesA = make !== undefined && PLACEHOLDER.test(JSON.stringify(make().body ?? ''));
      const send = (absentIds: boolean) => {
        const given = make?.() ?? {};
        return call(b, method, target, {
          ...(given.body !== undefined ? { body: fill(given.body, absentIds) } : {}),
          ...(given.raw !== undefined ? { raw: given.raw } : {}),
        });
      };
      const r = await send(false);
      const leaked = traces(r, target + JSON.stringify(fill(make?.().body ?? '', false)));
      if (leaked.length > 0) failures.push(`${key}: B's answer (${r.status}) holds A's ${leaked.join(', ')}`);
      if (r.status >= 500) failures.push(`${key}: ${r.status}`);
      if (r.status >= 400 && !isErrorBody(r.body))
        failures.push(`${key}: ${r.status} without the JSON error body`);
      if (owned && !(key in TENANT_NEUTRAL)) {
        if (r.status !== 404) failures.push(`${key}: ${r.status}, not 404, for A's resource`);
      } else if (namesA) {
        // A body naming A's resources must be answered as if they did not exist.
        const other = await send(true);
        if (other.status !== r.status)
          failures.push(`${key}: ${r.status} with A's identifiers but ${other.status} with absent ones`);
      }
      if (method !== 'GET') {
        const now = await snapshotOfA();
        try {
          assert.deepEqual(now, baseline);
        } catch {
          const changed = Object.keys(now).filter(
            (k) => JSON.stringify(now[k]) !== JSON.stringify(baseline[k]),
          );
          failures.push(`${key}: changed A's ${changed.map(short).join(', ')}`);
          baseline = now;
        }
      }
    }
    assert.deepEqual(failures, [], `tenant B reached tenant A's data:\n${failures.join('\n')}`);
  });

  it("B's own resources may reuse A's identifiers without learning that they exist", async () => {
    const aut = `/automations/${ids.automationId}`;
    const before = await snapshotOfA();
    const mine = await ok(
      call(b, 'POST', `${aut}/examples`, { body: { id: ids.exampleId, name: 'b copy' } }),
      201,
    );
    assert.equal(mine.id, ids.exampleId);
    assert.equal((await ok(call(b, 'GET', `${aut}/examples/${ids.exampleId}`))).name, 'b copy');
    // Append compares names: B's 'b copy' collides, A's example of the same name does not count.
    const zip = zipSync({
      'examples/b-copy/input.json': strToU8('{}'),
      'examples/b-copy/meta.json': strToU8(JSON.stringify({ name: 'b copy' })),
      'examples/a-secret-example-name/input.json': strToU8('{}'),
    });
    const appended = await ok(call(b, 'POST', `${aut}/dataset/import?mode=append`, { raw: zip }));
    assert.equal(appended.skipped, 1, "the collision is with B's own example, not A's");
    assert.equal(appended.created, 1);
    await ok(call(b, 'DELETE', `${aut}/examples/${ids.exampleId}`));
    assert.deepEqual(await snapshotOfA(), before);
    assert.equal(
      (await ok(call(a, 'GET', `${aut}/examples/${ids.exampleId}`))).name,
      'a-secret-example-name',
    );
  });

  it("one tenant's closed reviews do not move another tenant's since_last_closed listing", async () => {
    // B's run was created before A closed its review; B has closed no review of its own.
    const page = await ok(call(b, 'GET', '/runs?since_last_closed=true&limit=1000'));
    assert.ok((page.runs as { id: string }[]).some((r) => r.id === bRunId));
    const mineA = await ok(call(a, 'GET', '/runs?since_last_closed=true&limit=100'));
    assert.deepEqual(mineA.runs, [], "A's runs all predate A's closed review");
  });

  it("B's run listing reads only B's runs, and its cursor never points at one of A's", async () => {
    // 150 runs of A, newer than B's, written through the service's own run store: more than
    // one listing scan reads, and the first a newest-first scan over every tenant would meet.
    const store = h.service.core.runs.store;
    const start = Date.now();
    const mine = new Set<string>();
    for (let i = 0; i < 150; i++) {
      const run = syntheticRun(i, start);
      mine.add(run.id);
      await store.create(
        { ...run, tenant: a.tenant, sampleRank: sampleRank(a.tenant, run.id) },
        emptyDetail(),
        [],
      );
    }
    const page = await ok(call(b, 'GET', '/runs?limit=10'));
    const listed = (page.runs as { id: string }[]).map((r) => r.id);
    assert.ok(listed.includes(bRunId), "B's newest run is on B's first page");
    assert.ok(listed.every((id) => !mine.has(id) && !ids.runIds.includes(id)));
    if (page.nextCursor !== null) {
      const [, id] = JSON.parse(Buffer.from(page.nextCursor as string, 'base64url').toString()) as [
        number,
        string,
      ];
      assert.ok(!mine.has(id) && !ids.runIds.includes(id), `the cursor names A's run ${id}`);
    }
    const all = await ok(call(a, 'GET', '/runs?limit=10'));
    assert.equal(all.runs.length, 10, "A's own listing still reads A's runs");
  });
});
