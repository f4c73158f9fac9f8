import { strict as assert } from 'node:assert';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, it } from 'node:test';
import { staticAuthenticator } from '../../src/core/auth/index.js';
import { HttpError, Router, startHttpServer, type HttpServerHandle } from '../../src/core/http/index.js';
import { RawConnection } from '../helpers/raw-http.js';
import { describeEachTransport } from '../helpers/transports.js';

const errorBody = ({ status, code, message }: { status: number; code: string; message: string }) => ({
  error: { status, code, message },
});

/** Sends raw bytes and collects the whole response text (the socket closes or we stop at `until`). */
function raw(port: number, payload: string | Buffer[], until?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (d) => {
      text += d.toString();
      if (until?.test(text)) {
        socket.destroy();
        resolve(text);
      }
    });
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    if (typeof payload === 'string') socket.write(payload);
    else for (const chunk of payload) socket.write(chunk);
  });
}

/** A promise the test resolves when it chooses (`open`), to hold a handler at a known state. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describeEachTransport('HTTP core', (transport) => {
  let server: HttpServerHandle;
  let slowStarted: () => void;
  const slowStartedP = new Promise<void>((r) => (slowStarted = r));
  let releaseSlow!: () => void;

  before(async () => {
    const router = new Router();
    router.get('/hello/:name', (req, res) => res.json({ hello: req.params['name'], q: req.query.get('q') }));
    router.post('/echo', async (req, res) => res.json(await req.json(['application/json'])));
    router.post('/small', async (req, res) => res.json({ bytes: (await req.body()).length }), {
      maxBodyBytes: 16,
    });
    router.delete('/hello/:name', (_req, res) => res.send('', 204));
    router.get('/fail', () => {
      throw new HttpError(409, 'conflict', 'already there', { id: 1 }, { 'retry-after': '3' });
    });
    router.get('/crash', () => {
      throw new Error('boom');
    });
    router.get('/public', (_req, res) => res.json({ ok: true }), { scope: false });
    router.get('/needs-write', (_req, res) => res.json({ ok: true }), { scope: 'streams:write' });
    router.get('/files/*', (req, res) => res.json({ rest: req.params['*'] }));
    router.post(
      '/cb',
      (req, res) =>
        req.readBody((error, body) => {
          if (error) throw error;
          if (body.toString() === 'throw') throw new Error('callback failed');
          if (body.toString() === 'http') throw new HttpError(422, 'unprocessable', 'no');
          res.json({ bytes: body.length });
        }),
      { maxBodyBytes: 16 },
    );
    router.ws('/ws/:name', { upgrade: (req) => ({ name: req.params['name'] }) }, { scope: false });
    router.get('/big', async (_req, res) => {
      const writer = res.stream();
      res.header('content-type', 'application/x-ndjson');
      const line = JSON.stringify({ pad: 'x'.repeat(1000) }) + '\n';
      for (let i = 0; i < 20_000; i++) await writer.write(line); // ~20 MB, far past socket buffers
      writer.end();
    });
    server = await startHttpServer({
      transport,
      name: 'test',
      host: '127.0.0.1',
      port: 0,
      router,
      errorBody,
      maxBodyBytes: 1024,
      authenticator: staticAuthenticator('secret-token'),
      defaultScope: (method) => (method === 'GET' ? 'test:read' : 'test:write'),
    });
  });
  after(() => server.close(100));

  const auth = { authorization: 'Bearer secret-token' };

  it('serves on the transport it was asked for', () => {
    assert.equal(server.transport.transport, transport);
    if (transport === 'uws') assert.ok(server.transport.build && server.transport.version);
  });

  it('routes with path parameters and sends a request id', async () => {
    const res = await fetch(`${server.url}/hello/w%20orld?q=1`, { headers: auth });
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { hello: 'w orld', q: '1' });
    assert.ok(res.headers.get('x-request-id'));
    const tail = await fetch(`${server.url}/files/a/b/c.txt`, { headers: auth });
    assert.deepEqual(await tail.json(), { rest: 'a/b/c.txt' });
  });

  it('answers 404 and 405 with the JSON envelope and Allow', async () => {
    const missing = await fetch(`${server.url}/nope`, { headers: auth });
    assert.equal(missing.status, 404);
    assert.equal(((await missing.json()) as any).error.code, 'not_found');
    assert.ok(missing.headers.get('x-request-id'));
    const wrong = await fetch(`${server.url}/hello/x`, { method: 'PUT', headers: auth });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get('allow'), 'DELETE, GET, HEAD');
    assert.equal(((await wrong.json()) as any).error.code, 'method_not_allowed');
  });

  it('parses JSON and rejects bad JSON (400) and wrong content types (415)', async () => {
    const ok = await fetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json; charset=utf-8' },
      body: '{"a":1}',
    });
    assert.deepEqual(await ok.json(), { a: 1 });
    const bad = await fetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: '{"a":',
    });
    assert.equal(bad.status, 400);
    assert.equal(((await bad.json()) as any).error.code, 'invalid_json');
    const empty = await fetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
    });
    assert.equal(empty.status, 400);
    const type = await fetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'text/plain' },
      body: '{}',
    });
    assert.equal(type.status, 415);
    assert.match(((await type.json()) as any).error.message, /application\/json/);
  });

  it('answers 413 for a declared oversized body', async () => {
    const res = await fetch(`${server.url}/small`, { method: 'POST', headers: auth, body: 'x'.repeat(17) });
    assert.equal(res.status, 413);
    assert.equal(((await res.json()) as any).error.code, 'payload_too_large');
    const fits = await fetch(`${server.url}/small`, { method: 'POST', headers: auth, body: 'x'.repeat(16) });
    assert.deepEqual(await fits.json(), { bytes: 16 });
  });

  it('readBody calls back with the body; throws inside the callback become error answers', async () => {
    const post = (body: string) => fetch(`${server.url}/cb`, { method: 'POST', headers: auth, body });
    assert.deepEqual(await (await post('abc')).json(), { bytes: 3 });
    const thrown = await post('throw');
    assert.equal(thrown.status, 500);
    assert.equal(((await thrown.json()) as any).error.code, 'internal');
    assert.equal((await post('http')).status, 422);
    assert.equal((await post('x'.repeat(17))).status, 413);
    const chunked = `POST /cb HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret-token\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const text = await raw(
      port(),
      [
        Buffer.from(chunked),
        Buffer.from('a\r\n0123456789\r\n'),
        Buffer.from('a\r\n0123456789\r\n'),
        Buffer.from('0\r\n\r\n'),
      ],
      /payload_too_large[\s\S]*\}\}/,
    );
    assert.match(text, /^HTTP\/1\.1 413/);
    assert.equal((await fetch(`${server.url}/public`)).status, 200);
  });

  it('answers 413 for a chunked body that grows past the limit', async () => {
    const head = `POST /small HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret-token\r\nTransfer-Encoding: chunked\r\n\r\n`;
    const chunk = (s: string) => `${s.length.toString(16)}\r\n${s}\r\n`;
    const text = await raw(
      port(),
      [
        Buffer.from(head),
        Buffer.from(chunk('0123456789')),
        Buffer.from(chunk('0123456789')),
        Buffer.from('0\r\n\r\n'),
      ],
      /payload_too_large[\s\S]*\}\}/,
    );
    assert.match(text, /^HTTP\/1\.1 413/);
    assert.match(text, /payload_too_large/);
  });

  it('survives a client that aborts mid-body and keeps serving', async () => {
    await new Promise<void>((resolve) => {
      const socket = connect(port(), '127.0.0.1', () => {
        socket.write(
          `POST /echo HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret-token\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"a":`,
        );
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 20);
      });
    });
    const res = await fetch(`${server.url}/public`);
    assert.equal(res.status, 200);
  });

  it('maps HttpError to the envelope with its headers, and other throws to a 500', async () => {
    const res = await fetch(`${server.url}/fail`, { headers: auth });
    assert.equal(res.status, 409);
    assert.equal(res.headers.get('retry-after'), '3');
    assert.deepEqual(await res.json(), {
      error: { status: 409, code: 'conflict', message: 'already there' },
    });
    const crash = await fetch(`${server.url}/crash`, { headers: auth });
    assert.equal(crash.status, 500);
    assert.equal(((await crash.json()) as any).error.code, 'internal');
  });

  it('requires a bearer key (401) with the right scope (403); public routes are open', async () => {
    const none = await fetch(`${server.url}/hello/x`);
    assert.equal(none.status, 401);
    assert.equal(((await none.json()) as any).error.code, 'unauthorized');
    const wrong = await fetch(`${server.url}/hello/x`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(wrong.status, 401);
    assert.equal((await fetch(`${server.url}/public`)).status, 200);
    // The static authenticator's key is an admin key, so make a narrow one through a custom authenticator.
    const narrow = await startHttpServer({
      transport,
      name: 'narrow',
      host: '127.0.0.1',
      port: 0,
      router: new Router()
        .get('/w', (_q, s) => s.json({}), { scope: 'streams:write' })
        .get('/r', (_q, s) => s.json({}), { scope: 'streams:read' }),
      errorBody,
      authenticator: {
        authenticate: (t) =>
          t === 'reader' ? { keyId: 'k', tenant: 't', user: 'u', name: 'n', scopes: ['streams:read'] } : null,
        refusal: () => 'unknown',
      },
    });
    try {
      assert.equal(
        (await fetch(`${narrow.url}/r`, { headers: { authorization: 'Bearer reader' } })).status,
        200,
      );
      const denied = await fetch(`${narrow.url}/w`, { headers: { authorization: 'Bearer reader' } });
      assert.equal(denied.status, 403);
      assert.equal(((await denied.json()) as any).error.code, 'forbidden');
    } finally {
      await narrow.close();
    }
  });

  it('streams a large response to a slow reader without losing bytes', async () => {
    const total = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${server.url}/big`, { headers: auth }, (res) => {
        let bytes = 0;
        res.on('data', (d: Buffer) => {
          bytes += d.length;
          // Read slowly: pause after every chunk so the server sees backpressure.
          res.pause();
          setImmediate(() => res.resume());
        });
        res.on('end', () => resolve(bytes));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(total, 20_000 * (JSON.stringify({ pad: 'x'.repeat(1000) }).length + 1));
  });

  it('finishes an in-flight request during a graceful close and then stops listening', async () => {
    const router = new Router().get('/slow', async (_req, res) => {
      slowStarted();
      await new Promise<void>((r) => (releaseSlow = r));
      res.json({ finished: true });
    });
    const s = await serve('drain', router);
    const pending = fetch(`${s.url}/slow`).then(async (r) => ({ status: r.status, body: await r.json() }));
    await slowStartedP;
    const closing = s.close(5_000);
    // Listening stops at once; the in-flight request is still answered.
    await assert.rejects(fetch(`${s.url}/slow`));
    releaseSlow();
    const answered = await pending;
    await closing;
    assert.deepEqual(answered, { status: 200, body: { finished: true } });
  });

  it('never runs a handler for a request arriving during the drain: 503 on a kept-alive connection', async () => {
    let quickRuns = 0;
    const slowBegun = gate();
    const release = gate();
    const router = new Router()
      .get('/quick', (_req, res) => {
        quickRuns++;
        res.json({ ok: true });
      })
      .get('/slow', async (_req, res) => {
        slowBegun.open();
        await release.opened;
        res.json({ finished: true });
      });
    const s = await serve('drain', router);
    // A connection kept alive from before the close, idle when it begins.
    const kept = await RawConnection.open(s.port);
    assert.equal((await kept.request('/quick', { method: 'GET' })).status, 200);
    const slow = fetch(`${s.url}/slow`).then((r) => r.status);
    await slowBegun.opened;
    const closing = s.close(5_000);
    if (transport === 'uws') {
      // uWS keeps such a connection open until the end of the close: the request is refused.
      const refused = await kept.request('/quick', { method: 'GET' });
      assert.equal(refused.status, 503);
      assert.equal(refused.headers['connection'], 'close');
      assert.deepEqual(refused.json(), {
        error: { status: 503, code: 'shutting_down', message: 'the drain service is shutting down; retry' },
      });
    }
    // node:http closes idle connections as the close begins; uWS after its answer.
    await kept.closed;
    assert.equal(quickRuns, 1, 'no handler ran after the close began');
    release.open();
    assert.equal(await slow, 200);
    await closing;
  });

  it('a graceful close waits for a handler still working after its answer, and closes idle connections', async () => {
    const answered = gate();
    const release = gate();
    let closedBeforeWorkEnded: boolean | undefined;
    let closeDone = false;
    const router = new Router().post('/work', async (_req, res) => {
      res.json({ accepted: true });
      answered.open();
      await release.opened;
      closedBeforeWorkEnded = closeDone;
    });
    const s = await serve('work', router);
    const idle = await RawConnection.open(s.port);
    assert.equal((await idle.request('/work', { method: 'POST' })).status, 200);
    await answered.opened;
    const closing = s.close(5_000).then(() => (closeDone = true));
    // Without the wait, nothing of the close would be left for the next turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(closeDone, false, 'the close waits for the handler');
    release.open();
    await closing;
    assert.equal(closedBeforeWorkEnded, false, 'the close ended only after the handler');
    await idle.closed;
  });

  it('upgrades WebSockets and survives a malformed escape in the path', async () => {
    const upgrade = (path: string) =>
      raw(
        port(),
        `GET ${path} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        /\r\n\r\n/,
      );
    assert.match(await upgrade('/ws/ok'), /^HTTP\/1\.1 101/);
    assert.match(await upgrade('/ws/%E0%A4%A'), /^HTTP\/1\.1 101/);
    assert.equal((await fetch(`${server.url}/public`)).status, 200);
  });

  function serve(name: string, router: Router): Promise<HttpServerHandle> {
    return startHttpServer({ transport, name, host: '127.0.0.1', port: 0, router, errorBody });
  }

  function port(): number {
    return server.port;
  }
});
