// A multipart upload whose body breaks off (here: an invalid chunked encoding, which uWS answers
// by dropping the connection) must not take the service down. Found by the fuzz suite
// (docs/fuzz.md): one such request ended the whole `sluice serve` process.

import { strict as assert } from 'node:assert';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { startHarness, type Harness } from './harness.js';

describe('automation multipart upload cut off', () => {
  let h: Harness;
  before(async () => {
    h = await startHarness();
  });
  after(() => h?.close());

  it('keeps serving after a broken chunked multipart body', async () => {
    const port = Number(new URL(h.url).port);
    await new Promise<void>((resolve) => {
      const socket = connect(port, '127.0.0.1', () =>
        socket.end(
          'POST /api/v1/files HTTP/1.1\r\nhost: x\r\nconnection: close\r\ntransfer-encoding: chunked\r\n' +
            `authorization: Bearer ${h.token}\r\ncontent-type: multipart/form-data; boundary=b\r\n\r\n` +
            'zz\r\nabc\r\n0\r\n\r\n',
        ),
      );
      socket.on('error', () => undefined);
      socket.on('close', () => resolve());
      socket.resume();
    });
    // The busboy error comes a tick after the abort; a later request proves the thread survived.
    for (let i = 0; i < 5; i++) {
      const check = await h.api('GET', '/auth/check');
      assert.equal(check.status, 200);
      await new Promise((r) => setTimeout(r, 20));
    }
    const upload = new FormData();
    upload.append('file', new Blob(['still here']), 'a.txt');
    assert.equal((await h.api('POST', '/files', { raw: upload })).status, 200);
  });

  it('answers 400 for a complete body whose form ends inside a file part, and keeps serving', async () => {
    const port = Number(new URL(h.url).port);
    const form =
      '--b\r\nContent-Disposition: form-data; name="file"; filename="f.txt"\r\n' +
      'Content-Type: text/plain\r\n\r\nfuzz\r\n';
    const answer = await new Promise<string>((resolve) => {
      let text = '';
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(
          'POST /api/v1/files HTTP/1.1\r\nhost: x\r\nconnection: close\r\n' +
            `authorization: Bearer ${h.token}\r\ncontent-type: multipart/form-data; boundary=b\r\n` +
            `content-length: ${Buffer.byteLength(form)}\r\n\r\n${form}`,
        ),
      );
      socket.on('data', (d: Buffer) => (text += d.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => resolve(text));
    });
    assert.match(answer, /^HTTP\/1\.1 400/);
    assert.match(answer, /invalid_multipart/);
    assert.equal((await h.api('GET', '/auth/check')).status, 200);
  });
});
