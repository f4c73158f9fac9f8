// HEAD answers carry the status and headers of the GET answer and no body (RFC 9110, 9.3.2), so the next
// answer on a keep-alive connection starts right after them; with `Connection: close` the
// server closes after the headers.

import { strict as assert } from 'node:assert';
import { connect } from 'node:net';
import { after, before, it } from 'node:test';
import { Router, startHttpServer, type HttpServerHandle } from '../../src/core/http/index.js';
import { describeEachTransport } from '../helpers/transports.js';

const errorBody = (e: { code: string; message: string }) => ({ error: e.code, message: e.message });
const PAYLOAD = JSON.stringify({ hello: 'world', padding: 'x'.repeat(300) });

/**
 * Writes `request` on a fresh connection (no half-close: uWS closes on FIN) and collects every
 * byte until the server closes; the last request asks for `Connection: close`. */
function exchange(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
  });
}

describeEachTransport('HTTP core: HEAD', (transport) => {
  let server: HttpServerHandle;
  before(async () => {
    const router = new Router();
    router.get('/doc', (_req, res) => res.json(JSON.parse(PAYLOAD)));
    router.get('/streamed', async (_req, res) => {
      const out = res.stream(200);
      await out.write('first chunk,');
      out.end('last chunk');
    });
    server = await startHttpServer({
      transport,
      name: 'head-test',
      host: '127.0.0.1',
      port: 0,
      router,
      errorBody,
    });
  });
  after(async () => {
    await server?.close(100);
  });

  it('answers HEAD with the GET headers and no body, and keeps the connection usable', async () => {
    const raw = await exchange(
      server.port,
      'HEAD /doc HTTP/1.1\r\nHost: x\r\n\r\nGET /doc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n',
    );
    const [headHead, rest] = splitOnce(raw, '\r\n\r\n');
    assert.match(headHead, /^HTTP\/1\.1 200/);
    // No Content-Length (RFC 9110 allows leaving it out on HEAD), and never a wrong one.
    const length = /content-length: (\d+)/i.exec(headHead);
    if (length) assert.equal(Number(length[1]), Buffer.byteLength(PAYLOAD));
    // The very next bytes are the GET's answer: nothing of a body followed the HEAD headers.
    assert.match(rest, /^HTTP\/1\.1 200/);
    assert.ok(rest.endsWith(PAYLOAD), rest);
  });

  it('sends no body for a HEAD of an unknown path or a streamed answer', async () => {
    for (const path of ['/nope', '/streamed']) {
      const raw = await exchange(
        server.port,
        `HEAD ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`,
      );
      const [head, rest] = splitOnce(raw, '\r\n\r\n');
      assert.match(head, /^HTTP\/1\.1 (200|404)/, path);
      assert.equal(rest, '', `${path}: ${JSON.stringify(rest)}`);
    }
  });
});

function splitOnce(text: string, separator: string): [string, string] {
  const at = text.indexOf(separator);
  assert.ok(at >= 0, `no ${JSON.stringify(separator)} in ${JSON.stringify(text)}`);
  return [text.slice(0, at), text.slice(at + separator.length)];
}
