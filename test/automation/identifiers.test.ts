// Hostile identifiers against every route of the automation service: path parameters taken from
// the service's own OpenAPI document (so a new route is covered without touching this file), plus
// the identifier fields of bodies and queries. Each must be a 4xx with the JSON error envelope.
import * as assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from './harness.js';

let h: Harness;

before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

/** A request with the path sent byte for byte (fetch would resolve `..` segments itself). */
function raw(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; type: string; body: any }> {
  const url = new URL(h.url);
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          authorization: `Bearer ${h.token}`,
          ...(data ? { 'content-type': 'application/json', 'content-length': String(data.length) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const type = String(res.headers['content-type'] ?? '');
          let parsed: unknown = text;
          if (type.includes('json')) parsed = JSON.parse(text);
          resolve({ status: res.statusCode ?? 0, type, body: parsed });
        });
      },
    );
    req.on('error', reject);
    req.end(data);
  });
}

const BAD: Record<string, string> = {
  overlong: 'a'.repeat(5000),
  nul: 'a%00b',
  dotdot: '..',
  'encoded slash': 'a%2Fb',
  'non-ascii': '%C3%A9t%C3%A9',
};

function assertClientError(r: { status: number; type: string; body: any }, what: string, exact?: number) {
  assert.ok(r.status >= 400 && r.status < 500, `${what}: status ${r.status} ${JSON.stringify(r.body)}`);
  if (exact !== undefined) assert.equal(r.status, exact, `${what}: ${JSON.stringify(r.body)}`);
  assert.match(r.type, /json/, what);
  assert.ok(Array.isArray(r.body.issues) && r.body.issues.length > 0, what);
}

describe('identifiers', () => {
  it('every route answers a malformed path parameter with a 4xx JSON error, never a 5xx', async () => {
    const doc = (await (await fetch(`${h.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string; schema: any }[] }>>;
    };
    let checked = 0;
    for (const [template, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const params = (op.parameters ?? []).filter((p) => p.in === 'path');
        for (const param of params) {
          const isId = param.schema.pattern !== undefined;
          for (const [label, value] of Object.entries(BAD)) {
            let path = template;
            for (const other of params)
              path = path.replace(`{${other.name}}`, other.name === param.name ? value : 'x1');
            const r = await raw(method.toUpperCase(), path, method === 'get' ? undefined : {});
            const what = `${method.toUpperCase()} ${template} with ${label} {${param.name}}`;
            // Ids are refused as malformed; a file path that is well-formed once decoded may be a 404.
            const exact = isId || ['overlong', 'nul', 'dotdot'].includes(label) ? 400 : undefined;
            assertClientError(r, what, exact);
            checked++;
          }
        }
      }
    }
    assert.ok(checked > 200, `${checked} requests`);
  });

  it('no query parameter of any route turns an overlong or NUL value into a 5xx', async () => {
    const doc = (await (await fetch(`${h.url}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    };
    let checked = 0;
    for (const [template, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const params = op.parameters ?? [];
        let path = template;
        for (const p of params.filter((x) => x.in === 'path'))
          path = path.replace(`{${p.name}}`, p.name === 'id' ? 'workflows.text-report' : 'x1');
        for (const q of params.filter((x) => x.in === 'query'))
          for (const value of ['a'.repeat(5000), 'a%00b', '%C3%A9', '..']) {
            const r = await raw(
              method.toUpperCase(),
              `${path}?${q.name}=${value}`,
              method === 'get' ? undefined : {},
            );
            assert.ok(
              r.status < 500,
              `${method} ${template}?${q.name}=${value.slice(0, 20)}: ${r.status} ${JSON.stringify(r.body)}`,
            );
            checked++;
          }
      }
    }
    assert.ok(checked > 50, `${checked} requests`);
  });

  it('a well-formed id that names nothing is a 404', async () => {
    for (const path of [
      '/api/v1/automations/aut_0123456789abcdef0123',
      '/api/v1/runs/run_000000000000abcdef',
      '/api/v1/files/file_nothing',
      '/api/v1/experiments/exp_nothing',
      '/api/v1/automations/workflows.text-report/examples/ex_nothing',
    ]) {
      const r = await raw('GET', path);
      assertClientError(r, path, 404);
    }
  });

  it('identifier fields of bodies and queries are bounded', async () => {
    const long = 'a'.repeat(5000);
    const A = 'workflows.text-report';
    const cursor = (id: string) => Buffer.from(JSON.stringify([1, id])).toString('base64url');
    const cases: [string, string, unknown?][] = [
      ['POST', '/api/v1/runs', { target: long }],
      ['POST', '/api/v1/runs', { target: `${A}@${long}` }],
      ['POST', '/api/v1/runs', { target: `${A}@../x` }],
      ['POST', `/api/v1/runs?version=${long}`, { target: A }],
      ['POST', '/api/v1/runs', { target: A, input: { text: 'x' }, files: { doc: { $fileId: long } } }],
      ['POST', '/api/v1/runs', { target: A, input: { text: 'x' }, files: { doc: { $fileId: 'a\0b' } } }],
      ['GET', `/api/v1/runs?ids=${long}`],
      ['GET', `/api/v1/runs?source=${long}`],
      ['GET', `/api/v1/runs?batch_id=${long}`],
      ['GET', `/api/v1/runs?example_id=${long}`],
      ['GET', `/api/v1/runs?status=${long}`],
      ['GET', `/api/v1/runs?triggered_by=${long}`],
      ['GET', `/api/v1/runs?trigger=${long}`],
      ['GET', `/api/v1/runs?type=${long}`],
      ['GET', `/api/v1/runs?cursor=${long}`],
      ['GET', `/api/v1/runs?cursor=${cursor(long)}`],
      ['GET', `/api/v1/runs?sort=completed_at&cursor=${cursor(long)}`],
      ['GET', `/api/v1/automations/${A}/dataset/export?example_ids=${long}`],
      ['GET', `/api/v1/automations/${A}/reviews/health?batch_id=${long}`],
      ['GET', `/api/v1/automations/${A}/reviews/health?example_id=${long}`],
      ['POST', `/api/v1/automations/${A}/experiments`, { examples: [long] }],
      ['POST', `/api/v1/automations/${A}/experiments`, { sourceRef: '../x' }],
      ['POST', `/api/v1/automations/${A}/experiments`, { sourceRef: long }],
      ['POST', `/api/v1/automations/${A}/examples`, { id: long }],
    ];
    for (const [method, path, body] of cases) {
      const r = await raw(method, path, body);
      assertClientError(r, `${method} ${path.slice(0, 120)} ${JSON.stringify(body)?.slice(0, 120)}`, 400);
    }
  });
});
