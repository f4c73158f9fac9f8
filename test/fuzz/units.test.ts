// The fuzzer's own parts: its verdicts, its determinism and the route listing it relies on.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { Router } from '../../src/core/http/index.js';
import { makeCase, type CaseContext } from './cases.js';
import { judge } from './oracle.js';
import { Prng } from './prng.js';
import { streamsRoutes } from './routes.js';
import { emptySeeds } from './seeds.js';
import { parseRaw } from './send.js';

const json = (status: number, body: string, type = 'application/json') => ({
  kind: 'response' as const,
  status,
  headers: { 'content-type': type },
  body: Buffer.from(body),
});

describe('fuzz oracle', () => {
  it('fails 5xx, drops, timeouts, bare 4xx and HEAD bodies; passes JSON 4xx and parser closes', () => {
    assert.equal(judge('GET', json(500, '{}'), false).ok, false);
    assert.equal(judge('GET', { kind: 'dropped', error: 'ECONNRESET' }, false).ok, false);
    assert.equal(judge('GET', { kind: 'timeout' }, false).ok, false);
    assert.equal(judge('GET', json(404, 'not found', 'text/plain'), false).ok, false);
    assert.equal(judge('GET', json(400, 'not json'), false).ok, false);
    assert.equal(judge('GET', json(400, '"a string"'), false).ok, false);
    assert.equal(judge('HEAD', json(404, '{"a":1}'), false).ok, false);
    assert.deepEqual(judge('GET', json(404, '{"error_code":404}'), false), { ok: true, bucket: '4xx' });
    assert.equal(judge('GET', json(422, '{}', 'application/vnd.streams.json.v2+json'), false).ok, true);
    assert.equal(judge('HEAD', json(404, ''), false).ok, true);
    assert.deepEqual(judge('GET', { kind: 'dropped' }, true), { ok: true, bucket: 'closed-by-parser' });
    assert.deepEqual(judge('POST', { kind: 'dropped', error: 'EPIPE' }, false, true), {
      ok: true,
      bucket: 'reset-after-413',
    });
    assert.equal(judge('POST', { kind: 'dropped', error: 'EPIPE' }, false, false).ok, false);
    assert.equal(judge('POST', { kind: 'timeout' }, false, true).ok, false);
    assert.equal(judge('GET', json(503, '{}'), true).ok, false);
  });

  it('reads an answer from raw bytes, waiting for its whole body when asked', () => {
    const raw = Buffer.from(
      'HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/json\r\ncontent-length: 9\r\n\r\n{"a":1}',
    );
    assert.equal(parseRaw(raw)?.status, 413);
    assert.equal(parseRaw(raw, true), undefined);
    assert.equal(parseRaw(Buffer.concat([raw, Buffer.from('  ')]), true)?.status, 413);
    assert.equal(parseRaw(Buffer.from('HTTP/1.1 200 OK\r\n')), undefined);
  });
});

describe('fuzz cases', () => {
  it('are a function of (seed, index): the same bytes every time', () => {
    const ctx = (): CaseContext => ({
      seed: 7,
      token: 't',
      endpoints: { streams: { host: '127.0.0.1', port: 1 } },
      routes: streamsRoutes(),
      components: {},
      seeds: emptySeeds(),
      bigBodies: { left: 0, used: 0 },
    });
    const a = ctx();
    const b = ctx();
    for (let i = 0; i < 200; i++) assert.deepEqual(makeCase(a, i), makeCase(b, i));
    assert.notDeepEqual(makeCase(a, 1), makeCase(a, 2));
    assert.equal(new Prng(1).next(), new Prng(1).next());
  });

  it('Router.routes lists every route, params and tails included', () => {
    const noop = () => undefined;
    const router = new Router()
      .get('/a', noop)
      .post('/a/:id', noop, { scope: false })
      .get('/a/:id/files/*', noop)
      .delete('/b/c', noop);
    assert.deepEqual(
      router.routes().map((r) => `${r.method} ${r.pattern}`),
      ['GET /a', 'POST /a/:id', 'GET /a/:id/files/*', 'DELETE /b/c'],
    );
    assert.equal(router.routes()[1]!.options.scope, false);
  });
});
