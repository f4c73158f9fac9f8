// HTTP Basic carrying an API key: the parser's rules, then a real server answering over the wire
// (a malformed header is a 401 with a challenge, never a 5xx).

import { strict as assert } from 'node:assert';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { parseAuthorization, type Authenticator } from '../../src/core/auth/index.js';
import { Router, startHttpServer, type HttpServerHandle } from '../../src/core/http/index.js';
import { describeEachTransport } from '../helpers/transports.js';

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

describe('parseAuthorization', () => {
  it('reads Bearer keys as before (with or without the colon the spec prints)', () => {
    assert.deepEqual(parseAuthorization('Bearer sk_a_b'), { kind: 'key', scheme: 'bearer', key: 'sk_a_b' });
    assert.deepEqual(parseAuthorization('bearer: sk_a_b'), { kind: 'key', scheme: 'bearer', key: 'sk_a_b' });
    assert.deepEqual(parseAuthorization(undefined), { kind: 'missing' });
    assert.deepEqual(parseAuthorization('Bearer'), { kind: 'missing' });
    assert.deepEqual(parseAuthorization('Digest x'), { kind: 'missing' });
  });

  it('takes the key from the Basic password and ignores the user name', () => {
    assert.deepEqual(parseAuthorization(`Basic ${b64('anyone:sk_a_b')}`), {
      kind: 'key',
      scheme: 'basic',
      key: 'sk_a_b',
    });
    assert.deepEqual(parseAuthorization(`basic   ${b64(':sk_a_b')}`), {
      kind: 'key',
      scheme: 'basic',
      key: 'sk_a_b',
    });
    // Everything after the first colon is the password (RFC 7617 §2).
    assert.deepEqual(parseAuthorization(`Basic ${b64('u:k:with:colons')}`), {
      kind: 'key',
      scheme: 'basic',
      key: 'k:with:colons',
    });
  });

  it('takes the user name as the key when the password is empty (curl -u <key>:)', () => {
    assert.deepEqual(parseAuthorization(`Basic ${b64('sk_a_b:')}`), {
      kind: 'key',
      scheme: 'basic',
      key: 'sk_a_b',
    });
  });

  it('calls broken Basic headers malformed, with a reason', () => {
    for (const header of [
      'Basic',
      'Basic    ',
      'Basic !!!notbase64',
      'Basic a',
      `Basic ${b64('no-colon-here')}`,
      `Basic ${b64(':')}`,
      `Basic ${b64('user:has space')}`,
      `Basic ${b64('user:\u0001ctl')}`,
      `Basic ${'A'.repeat(4096)}`,
    ]) {
      const parsed = parseAuthorization(header);
      assert.equal(parsed.kind, 'malformed', header);
      assert.ok(parsed.kind === 'malformed' && parsed.reason.length > 0);
    }
  });
});

describeEachTransport('HTTP core with Basic credentials', (transport) => {
  let server: HttpServerHandle;
  const auth: Authenticator = {
    authenticate: (t) =>
      t === 'sk_good_key'
        ? { keyId: 'k', tenant: 't', user: 'u', name: 'n', scopes: ['streams:read'] }
        : null,
    refusal: () => 'unknown',
  };

  before(async () => {
    server = await startHttpServer({
      transport,
      name: 'basic',
      host: '127.0.0.1',
      port: 0,
      router: new Router()
        .get('/r', (req, res) => res.json({ key: req.principal?.keyId }), { scope: 'streams:read' })
        .get('/w', (_req, res) => res.json({}), { scope: 'streams:write' }),
      errorBody: ({ status, code, message }) => ({ status, code, message }),
      authenticator: auth,
    });
  });
  after(async () => {
    await server.close();
  });

  const get = (path: string, authorization?: string) =>
    fetch(server.url + path, { headers: authorization === undefined ? {} : { authorization } });

  it('accepts the key as the Basic password, and still checks the scope', async () => {
    const ok = await get('/r', `Basic ${b64('whoever:sk_good_key')}`);
    assert.equal(ok.status, 200);
    assert.deepEqual(await ok.json(), { key: 'k' });
    const denied = await get('/w', `Basic ${b64('whoever:sk_good_key')}`);
    assert.equal(denied.status, 403);
  });

  it('answers 401 with a challenge for unknown keys and malformed headers', async () => {
    const unknown = await get('/r', `Basic ${b64('u:sk_wrong')}`);
    assert.equal(unknown.status, 401);
    assert.match(unknown.headers.get('www-authenticate') ?? '', /^Basic realm="sluice"/);
    assert.equal(((await unknown.json()) as { message: string }).message, 'invalid or revoked API key');

    for (const header of ['Basic', 'Basic %%%', `Basic ${b64('nocolon')}`]) {
      const reply = await get('/r', header);
      assert.equal(reply.status, 401, header);
      assert.match(reply.headers.get('www-authenticate') ?? '', /Basic realm="sluice"/, header);
      const body = (await reply.json()) as { code: string; message: string };
      assert.equal(body.code, 'unauthorized');
    }

    const none = await get('/r');
    assert.equal(none.status, 401);
    const challenge = none.headers.get('www-authenticate') ?? '';
    assert.match(challenge, /Bearer/);
    assert.match(challenge, /Basic realm="sluice"/);
  });

  it('survives raw bytes a fetch client would not send (non-UTF-8 after Basic)', async () => {
    const port = new URL(server.url).port;
    const text = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1');
      let out = '';
      socket.on('data', (d) => {
        out += d.toString('latin1');
        if (out.includes('\r\n\r\n')) socket.destroy();
      });
      socket.on('close', () => resolve(out));
      socket.on('error', reject);
      socket.write(
        Buffer.concat([
          Buffer.from('GET /r HTTP/1.1\r\nHost: x\r\nAuthorization: Basic '),
          Buffer.from([0xff, 0xfe, 0x80]),
          Buffer.from('\r\nConnection: close\r\n\r\n'),
        ]),
      );
    });
    assert.match(text, /^HTTP\/1\.1 401/);
  });
});
