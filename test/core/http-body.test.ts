// Request bodies through the HTTP core: every body-reading mode at multiples of the chunk
// consumer's high-water mark and at the route's limit, with Content-Length and chunked framing;
// authentication before any body byte is read; refusals that close the connection.

import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { after, before, it } from 'node:test';
import type { Principal } from '../../src/core/auth/types.js';
import { BODY_HIGH_WATER_BYTES } from '../../src/core/http/body.js';
import { Router, startHttpServer, type HttpServerHandle } from '../../src/core/http/index.js';
import { RawConnection, rawRequest, type Framing } from '../helpers/raw-http.js';
import { describeEachTransport } from '../helpers/transports.js';

const HW = BODY_HIGH_WATER_BYTES;
const LIMIT = 4 * HW + 12_345;
const KEY = 'body-test-key';
const READER = 'read-only-key';

const errorBody = ({ status, code, message }: { status: number; code: string; message: string }) => ({
  error: { status, code, message },
});

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** `size` bytes of varied content, so a lost or reordered chunk changes the digest. */
function bytesOf(size: number): Buffer {
  const out = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + (i >> 12)) & 0xff;
  return out;
}

/** A JSON document of exactly `size` bytes: {"p":"xxx…"}. */
function jsonOf(size: number): Buffer {
  const shell = '{"p":""}';
  return Buffer.from(`{"p":"${'x'.repeat(size - shell.length)}"}`);
}

function heapAndBuffers(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describeEachTransport('HTTP core request bodies', (transport) => {
  let server: HttpServerHandle;
  const auth = { authorization: `Bearer ${KEY}` };

  before(async () => {
    const router = new Router();
    router.post('/whole', async (req, res) => res.json({ sha: sha(await req.body()) }), {
      maxBodyBytes: LIMIT,
    });
    router.post(
      '/json',
      async (req, res) => {
        const doc = await req.json<{ p: string }>();
        res.json({ length: doc.p.length });
      },
      { maxBodyBytes: LIMIT },
    );
    router.post(
      '/callback',
      (req, res) =>
        req.readBody((error, body) => {
          if (error) throw error;
          res.json({ sha: sha(body) });
        }),
      { maxBodyBytes: LIMIT },
    );
    router.post(
      '/stream',
      async (req, res) => {
        const hash = createHash('sha256');
        for await (const chunk of req.bodyStream()) {
          hash.update(chunk);
          // A slow consumer, so the queue can pass the high-water mark and the socket pauses.
          await new Promise((resolve) => setImmediate(resolve));
        }
        res.json({ sha: hash.digest('hex') });
      },
      { maxBodyBytes: LIMIT },
    );
    router.post('/upload', async (req, res) => res.json({ bytes: (await req.body()).length }), {
      maxBodyBytes: 200 * 1024 * 1024,
    });
    router.post('/write', async (req, res) => res.json({ bytes: (await req.body()).length }), {
      scope: 'test:write',
    });
    router.post('/early', (_req, res) => res.json({ early: true }), { maxBodyBytes: LIMIT });
    router.post(
      '/stream-early',
      async (req, res) => {
        for await (const chunk of req.bodyStream()) {
          void chunk;
          break; // answers after the first chunk, with the rest of the body still coming
        }
        res.json({ early: true });
      },
      { maxBodyBytes: LIMIT },
    );
    router.get('/ping', (req, res) => res.json({ id: req.requestId }), { scope: false });
    server = await startHttpServer({
      transport,
      name: 'body-test',
      host: '127.0.0.1',
      port: 0,
      router,
      errorBody,
      authenticator: {
        authenticate: (token): Principal | null =>
          token === KEY || token === READER
            ? {
                keyId: token,
                tenant: 't',
                user: 'u',
                name: 'n',
                scopes: token === KEY ? ['admin'] : ['test:read'],
              }
            : null,
        refusal: () => 'unknown',
      },
      defaultScope: 'test:write',
    });
  });
  after(() => server.close(100));

  const sizes: [string, number][] = [
    ['1× the high-water mark', HW],
    ['2× the high-water mark', 2 * HW],
    ['4× the high-water mark', 4 * HW],
    ['exactly the limit', LIMIT],
  ];

  for (const framing of ['length', 'chunked'] as Framing[]) {
    for (const [mode, path] of [
      ['whole (req.body())', '/whole'],
      ['complete callback (req.readBody())', '/callback'],
      ['chunk stream (req.bodyStream())', '/stream'],
    ]) {
      it(`${mode} with ${framing} framing: answers at 1×/2×/4× the high-water mark and at the limit, 413 past it`, async () => {
        for (const [label, size] of sizes) {
          const body = bytesOf(size);
          const res = await rawRequest(server.port, path!, { headers: auth, body, framing });
          assert.equal(res.status, 200, `${label}: ${res.text}`);
          assert.deepEqual(res.json(), { sha: sha(body) }, label);
        }
        await assertTooLarge(path!, framing);
      });
    }

    it(`req.json() with ${framing} framing: parses at 1×/2×/4× the high-water mark and at the limit, 413 past it`, async () => {
      for (const [label, size] of sizes) {
        const res = await rawRequest(server.port, '/json', { headers: auth, body: jsonOf(size), framing });
        assert.equal(res.status, 200, `${label}: ${res.text}`);
        assert.deepEqual(res.json(), { length: size - 8 }, label);
      }
      await assertTooLarge('/json', framing);
    });
  }

  /** One byte over the limit: a JSON 413 and a closed connection. */
  async function assertTooLarge(path: string, framing: Framing): Promise<void> {
    const conn = await RawConnection.open(server.port);
    try {
      const body = path === '/json' ? jsonOf(LIMIT + 1) : bytesOf(LIMIT + 1);
      // A declared length is refused before any body byte is read, so none is sent.
      const res = await conn.request(path, { headers: auth, body, framing, headOnly: framing === 'length' });
      assert.equal(res.status, 413, res.text);
      assert.match(res.headers['content-type'] ?? '', /application\/json/);
      assert.equal(res.json().error.code, 'payload_too_large');
      assert.equal(res.headers['connection'], 'close');
      await conn.closed;
    } finally {
      conn.close();
    }
  }

  for (const framing of ['length', 'chunked'] as Framing[]) {
    it(`refuses a 100 MB upload without a key (${framing}) before reading it: 401, connection closed, no buffering`, async () => {
      const size = 100 * 1024 * 1024;
      const piece = bytesOf(1024 * 1024);
      // One 1 MiB buffer sent again and again, so the client side allocates nothing.
      const conn = await RawConnection.open(server.port);
      try {
        const baseline = heapAndBuffers();
        let peak = baseline;
        const answer = conn.response();
        await sendRepeated(conn, '/upload', piece, size, framing, () => {
          peak = Math.max(peak, heapAndBuffers());
        });
        const res = await answer;
        peak = Math.max(peak, heapAndBuffers());
        assert.equal(res.status, 401);
        assert.equal(res.json().error.code, 'unauthorized');
        assert.ok(peak - baseline < 50 * 1024 * 1024, `memory grew by ${peak - baseline} bytes`);
        assert.equal(res.headers['connection'], 'close');
        await conn.closed;
      } finally {
        conn.close();
      }
    });
  }

  it('refuses a body with a key that lacks the scope (403) and closes the connection', async () => {
    const conn = await RawConnection.open(server.port);
    try {
      const res = await conn.request('/write', {
        headers: { authorization: `Bearer ${READER}` },
        body: Buffer.from('{}'),
      });
      assert.equal(res.status, 403);
      assert.equal(res.json().error.code, 'forbidden');
      assert.equal(res.headers['connection'], 'close');
      await conn.closed;
    } finally {
      conn.close();
    }
  });

  it('keeps the connection open for requests with a key, and for a 401 without a body', async () => {
    const conn = await RawConnection.open(server.port);
    try {
      for (const framing of ['length', 'chunked'] as Framing[]) {
        const res = await conn.request('/whole', { headers: auth, body: bytesOf(1000), framing });
        assert.equal(res.status, 200);
        // uWS sends no Connection header on a kept connection, node:http `keep-alive`.
        assert.notEqual(res.headers['connection'], 'close');
      }
      const refused = await conn.request('/whole', { method: 'POST', headers: {} });
      assert.equal(refused.status, 401);
      assert.notEqual(refused.headers['connection'], 'close');
      const after401 = await conn.request('/ping', { method: 'GET' });
      assert.equal(after401.status, 200);
      assert.ok(conn.isOpen);
    } finally {
      conn.close();
    }
  });

  it('drops the unread rest of a body answered early and serves the next request on the connection', async () => {
    const conn = await RawConnection.open(server.port);
    try {
      for (const path of ['/early', '/stream-early']) {
        for (const framing of ['length', 'chunked'] as Framing[]) {
          const res = await conn.request(path, { headers: auth, body: bytesOf(3 * HW), framing });
          assert.equal(res.status, 200, `${path} ${framing}: ${res.text}`);
          assert.deepEqual(res.json(), { early: true });
          const next = await conn.request('/whole', { headers: auth, body: bytesOf(1000) });
          assert.equal(next.status, 200, `after ${path} ${framing}: ${next.text}`);
        }
      }
    } finally {
      conn.close();
    }
  });

  it('keeps a safe X-Request-Id and replaces an unsafe or overlong one', async () => {
    const idOf = async (id: string) => {
      const res = await rawRequest(server.port, '/ping', { method: 'GET', headers: { 'x-request-id': id } });
      assert.equal(res.headers['x-request-id'], res.json().id);
      return res.json().id as string;
    };
    const safe = 'Abc-123_x.y:z';
    assert.equal(await idOf(safe), safe);
    const longest = 'a'.repeat(128);
    assert.equal(await idOf(longest), longest);
    for (const bad of ['a'.repeat(129), 'has space', 'quote"d', 'semi;colon', 'slash/ed', 'ünï']) {
      const id = await idOf(bad);
      assert.notEqual(id, bad);
      assert.match(id, /^[A-Za-z0-9._:-]{1,128}$/);
    }
  });
});

/** Sends `total` bytes made of `piece` repeated, piece by piece, until done or the server closes. */
async function sendRepeated(
  conn: RawConnection,
  path: string,
  piece: Buffer,
  total: number,
  framing: Framing,
  onPiece: () => void,
): Promise<void> {
  const headers: Record<string, string> =
    framing === 'length' ? { 'content-length': String(total) } : { 'transfer-encoding': 'chunked' };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  if (!(await conn.writeRaw(Buffer.from(`POST ${path} HTTP/1.1\r\nhost: test\r\n${head}\r\n`)))) return;
  const frameHead = Buffer.from(piece.length.toString(16) + '\r\n');
  const crlf = Buffer.from('\r\n');
  for (let sent = 0; sent < total; sent += piece.length) {
    const parts = framing === 'chunked' ? [frameHead, piece, crlf] : [piece];
    for (const part of parts) if (!(await conn.writeRaw(part))) return;
    onPiece();
  }
  if (framing === 'chunked') await conn.writeRaw(Buffer.from('0\r\n\r\n'));
}
