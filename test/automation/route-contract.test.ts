// The route contract: query and JSON body validated once from the declaration, typed values
// handed to the handler, returned values sent with the first declared 2xx status.

import { after, before, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { Type } from '@sinclair/typebox';
import { Router, startHttpServer, type HttpServerHandle } from '../../src/core/http/index.js';
import { contentDisposition } from '../../src/core/http/download.js';
import { route } from '../../src/automation/http/route.js';
import { toHttpError } from '../../src/automation/http/envelope.js';

const Query = Type.Object({
  sourceRef: Type.Optional(Type.String()),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 50 })),
  expand: Type.Optional(Type.Array(Type.Union([Type.Literal('usage'), Type.Literal('steps')]))),
  flag: Type.Optional(Type.Boolean()),
});
const Body = Type.Object({ name: Type.String({ minLength: 1 }), count: Type.Optional(Type.Integer()) });

describe('route contract', () => {
  let server: HttpServerHandle;
  const base = () => `http://127.0.0.1:${server.port}`;

  before(async () => {
    const router = new Router();
    const echoQuery = route({
      method: 'GET',
      path: '/echo',
      operationId: 'echoQuery',
      summary: 'echo',
      tag: 'test',
      public: true,
      query: Query,
      responses: { 200: { description: 'ok' } },
      handle: ({ query }) => ({
        sourceRef: query.sourceRef ?? null,
        pageSize: query.page_size ?? null,
        expand: query.expand ?? null,
        flag: query.flag ?? null,
      }),
    });
    const create = route({
      method: 'POST',
      path: '/things',
      operationId: 'createThing',
      summary: 'create',
      tag: 'test',
      public: true,
      body: { schema: Body },
      responses: { 201: { description: 'created' } },
      handle: ({ body }) => ({ name: body.name, count: body.count ?? 0 }),
    });
    const optional = route({
      method: 'POST',
      path: '/maybe',
      operationId: 'maybe',
      summary: 'optional body',
      tag: 'test',
      public: true,
      body: { schema: Body },
      bodyOptional: true,
      responses: { 200: { description: 'ok' } },
      handle: ({ body }) => ({ got: body?.name ?? null }),
    });
    const mixed = route({
      method: 'POST',
      path: '/mixed',
      operationId: 'mixed',
      summary: 'JSON or text read by the handler',
      tag: 'test',
      public: true,
      body: { schema: Body, rawContentTypes: ['text/plain'] },
      bodyOptional: true,
      responses: { 200: { description: 'ok' } },
      handle: async ({ req, body }) =>
        body ? { json: body.name } : { text: (await req.body()).toString('utf8') },
    });
    for (const r of [echoQuery, create, optional, mixed]) {
      router.route(
        r.method,
        r.path,
        async (req, res) => {
          try {
            await r.handle(req, res);
          } catch (err) {
            throw toHttpError(err);
          }
        },
        { scope: false },
      );
    }
    server = await startHttpServer({
      name: 'route-test',
      host: '127.0.0.1',
      port: 0,
      router,
      errorBody: (e) => ({ error: { code: e.code, message: e.message } }),
    });
  });
  after(async () => {
    await server?.close(100);
  });

  it('folds snake_case and camelCase query names onto one declaration and converts types', async () => {
    const a = (await (await fetch(`${base()}/echo?source_ref=main&pageSize=5&flag=1`)).json()) as any;
    assert.deepEqual(a, { sourceRef: 'main', pageSize: 5, expand: null, flag: true });
    const b = (await (await fetch(`${base()}/echo?sourceRef=x&page_size=7&flag=false`)).json()) as any;
    assert.deepEqual(b, { sourceRef: 'x', pageSize: 7, expand: null, flag: false });
  });

  it('reads array parameters from repeated keys and from comma-separated values', async () => {
    const r = (await (await fetch(`${base()}/echo?expand=usage&expand=steps`)).json()) as any;
    assert.deepEqual(r.expand, ['usage', 'steps']);
    const c = (await (await fetch(`${base()}/echo?expand=steps,usage`)).json()) as any;
    assert.deepEqual(c.expand, ['steps', 'usage']);
  });

  it('refuses a query value outside its schema with 400 and the field named', async () => {
    const res = await fetch(`${base()}/echo?page_size=500`);
    assert.equal(res.status, 400);
    const body = (await res.json()) as any;
    assert.equal(body.error.code, 'invalid_query');
    assert.match(JSON.stringify(body), /page_size/);
    const bad = await fetch(`${base()}/echo?expand=bogus`);
    assert.equal(bad.status, 400);
    for (const v of ['1.5', '5x', '', '1e3'])
      assert.equal((await fetch(`${base()}/echo?page_size=${v}`)).status, 400, `page_size=${v}`);
  });

  it('validates a JSON body and sends the returned value with the first declared 2xx', async () => {
    const ok = await fetch(`${base()}/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'a', count: 2 }),
    });
    assert.equal(ok.status, 201);
    assert.deepEqual(await ok.json(), { name: 'a', count: 2 });
    const bad = await fetch(`${base()}/things`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: '' }),
    });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as any).error.code, 'invalid_body');
    const notJson = await fetch(`${base()}/things`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x',
    });
    assert.equal(notJson.status, 415);
  });

  it('leaves a raw content type to the handler and still validates JSON', async () => {
    const text = await fetch(`${base()}/mixed`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    assert.deepEqual(await text.json(), { text: 'hello' });
    const json = await fetch(`${base()}/mixed`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'j' }),
    });
    assert.deepEqual(await json.json(), { json: 'j' });
    const other = await fetch(`${base()}/mixed`, {
      method: 'POST',
      headers: { 'content-type': 'application/xml' },
      body: '<x/>',
    });
    assert.equal(other.status, 415);
  });

  it('hands undefined for an absent optional body and validates a present one', async () => {
    const none = await fetch(`${base()}/maybe`, { method: 'POST' });
    assert.equal(none.status, 200);
    assert.deepEqual(await none.json(), { got: null });
    const some = await fetch(`${base()}/maybe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'z' }),
    });
    assert.deepEqual(await some.json(), { got: 'z' });
    const bad = await fetch(`${base()}/maybe`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{',
    });
    assert.equal(bad.status, 400);
  });
});

describe('route contract: raw content types', () => {
  it('is declared in the route table with both kinds', () => {
    const r = route({
      method: 'POST',
      path: '/m',
      operationId: 'm',
      summary: 'm',
      tag: 't',
      body: { schema: Body, rawContentTypes: ['multipart/form-data'] },
      bodyOptional: true,
      responses: { 200: { description: 'ok' } },
      handle: () => undefined,
    });
    assert.deepEqual(r.body?.contentTypes, ['application/json', 'multipart/form-data']);
  });

  it('declares a schema per raw content type, and refuses one for a type it does not take', () => {
    const Form = Type.Object({ file: Type.String({ format: 'binary' }) });
    const spec = {
      method: 'POST' as const,
      path: '/m',
      operationId: 'm',
      summary: 'm',
      tag: 't',
      bodyOptional: true as const,
      responses: { 200: { description: 'ok' } },
      handle: () => undefined,
    };
    const r = route({
      ...spec,
      body: {
        schema: Body,
        rawContentTypes: ['multipart/form-data'],
        rawSchemas: { 'multipart/form-data': Form },
      },
    });
    assert.equal(r.body?.schemas?.['multipart/form-data'], Form);
    assert.throws(
      () =>
        route({
          ...spec,
          body: {
            schema: Body,
            rawContentTypes: ['text/plain'],
            rawSchemas: { 'multipart/form-data': Form },
          },
        }),
      /rawSchemas names multipart\/form-data/,
    );
  });
});

describe('contentDisposition', () => {
  it('quotes ASCII names and adds the RFC 8187 form for others', () => {
    assert.equal(contentDisposition('report.csv'), 'attachment; filename="report.csv"');
    assert.equal(
      contentDisposition('naïve "x".txt'),
      `attachment; filename="na_ve _x_.txt"; filename*=UTF-8''na%C3%AFve%20%22x%22.txt`,
    );
  });
});
