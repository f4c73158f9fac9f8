// Automation request bodies through the HTTP core: a JSON route (create a dataset example, read
// whole with req.json()) and the upload route (POST /files, read as a chunk stream), at 1×/2×/4×
// the chunk high-water mark, at the route's limit and one byte over, with Content-Length and
// chunked framing; and a 100 MB upload without a key, refused before a body byte is buffered.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { BODY_HIGH_WATER_BYTES } from '../../src/core/http/body.js';
import { RawConnection, rawRequest, type Framing } from '../helpers/raw-http.js';
import { startHarness, type Harness } from './harness.js';

const HW = BODY_HIGH_WATER_BYTES;
const JSON_LIMIT = 4 * HW + 1000; // AUTOMATION_MAX_JSON_BYTES, raised past 4× the high-water mark
const UPLOAD_BYTES = 100 * 1024 * 1024; // AUTOMATION_MAX_UPLOAD_BYTES default
const UPLOAD_LIMIT = UPLOAD_BYTES + 64 * 1024; // POST /files body limit: the file plus its form
const BOUNDARY = 'sluice-body-size-boundary';
const EXAMPLES = '/api/v1/automations/workflows.text-report/examples';

/** A create-example body, padded with trailing spaces to exactly `size` bytes. */
function exampleBody(size: number, pad: number): Buffer {
  const json = JSON.stringify({ name: `pad-${size}`, input: { text: 'x'.repeat(pad) } });
  return Buffer.from(json + ' '.repeat(size - json.length));
}

/**
 * A multipart upload of `fileBytes` bytes, exactly `size` bytes long: what the file part leaves
 * over goes into the preamble before the first boundary, which multipart parsers skip (RFC 2046 §5.1.1).
 */
function uploadBody(size: number, fileBytes: number): { body: Buffer; file: Buffer } {
  const head = Buffer.from(
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="big.bin"\r\n` +
      'content-type: application/octet-stream\r\n\r\n',
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  const file = Buffer.alloc(fileBytes, 'z');
  // The preamble ends in CRLF: that CRLF belongs to the first boundary's delimiter.
  const preamble = size - head.length - file.length - tail.length - 2;
  assert.ok(preamble >= 0);
  const parts = [Buffer.alloc(preamble, ' '), Buffer.from('\r\n'), head, file, tail];
  return { body: Buffer.concat(parts), file };
}

function heapAndBuffers(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describe('automation request bodies at their limits', () => {
  let h: Harness;
  let port: number;
  const json = () => ({ authorization: `Bearer ${h.token}`, 'content-type': 'application/json' });
  const multipart = () => ({
    authorization: `Bearer ${h.token}`,
    'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
  });

  before(async () => {
    h = await startHarness({ AUTOMATION_MAX_JSON_BYTES: String(JSON_LIMIT) });
    port = Number(new URL(h.url).port);
  });
  after(() => h.close());

  async function assertTooLarge(
    path: string,
    headers: Record<string, string>,
    body: Buffer,
    framing: Framing,
  ) {
    const conn = await RawConnection.open(port);
    try {
      const res = await conn.request(path, { headers, body, framing, headOnly: framing === 'length' });
      assert.equal(res.status, 413, res.text);
      assert.match(res.headers['content-type'] ?? '', /json/);
      assert.ok(res.json().requestId);
      assert.equal(res.headers['connection'], 'close');
      await conn.closed;
    } finally {
      conn.close();
    }
  }

  for (const framing of ['length', 'chunked'] as Framing[]) {
    it(`JSON route (${framing}): 201 at 1×/2×/4× the high-water mark and at the limit, 413 past it`, async () => {
      for (const [label, size] of [
        ['1× high-water', HW],
        ['2× high-water', 2 * HW],
        ['4× high-water', 4 * HW],
        ['the limit', JSON_LIMIT],
      ] as const) {
        const pad = size - 200;
        const res = await rawRequest(port, EXAMPLES, {
          headers: json(),
          body: exampleBody(size, pad),
          framing,
        });
        assert.equal(res.status, 201, `${label}: ${res.text.slice(0, 300)}`);
        assert.equal(res.json().input.text.length, pad, label);
      }
      await assertTooLarge(EXAMPLES, json(), exampleBody(JSON_LIMIT + 1, 1000), framing);
    });

    it(`files upload (${framing}): 200 at 1×/2×/4× the high-water mark and at the limit, 413 past it`, async () => {
      for (const [label, size, fileBytes] of [
        ['1× high-water', HW, HW - 300],
        ['2× high-water', 2 * HW, 2 * HW - 300],
        ['4× high-water', 4 * HW, 4 * HW - 300],
        ['the limit', UPLOAD_LIMIT, UPLOAD_BYTES],
      ] as const) {
        const { body, file } = uploadBody(size, fileBytes);
        const res = await rawRequest(port, '/api/v1/files', {
          headers: multipart(),
          body,
          framing,
          piece: 1 << 20,
        });
        assert.equal(res.status, 200, `${label}: ${res.text.slice(0, 300)}`);
        assert.equal(res.json().size, file.length, label);
        assert.equal((await h.api('DELETE', `/files/${res.json().id}`)).status, 200);
      }
      await assertTooLarge(
        '/api/v1/files',
        multipart(),
        uploadBody(UPLOAD_LIMIT + 1, UPLOAD_BYTES).body,
        framing,
      );
    });

    it(`refuses a 100 MB upload without a key (${framing}): 401, connection closed, body not buffered`, async () => {
      const piece = Buffer.alloc(1024 * 1024, 'z');
      const total = 100 * 1024 * 1024;
      const conn = await RawConnection.open(port);
      try {
        const baseline = heapAndBuffers();
        let peak = baseline;
        const answer = conn.response();
        const framed = framing === 'chunked' ? 'transfer-encoding: chunked' : `content-length: ${total}`;
        const head = `POST /api/v1/files HTTP/1.1\r\nhost: test\r\ncontent-type: multipart/form-data; boundary=${BOUNDARY}\r\n${framed}\r\n\r\n`;
        let open = await conn.writeRaw(Buffer.from(head));
        const size = Buffer.from(piece.length.toString(16) + '\r\n');
        for (let sent = 0; open && sent < total; sent += piece.length) {
          if (framing === 'chunked')
            open =
              (await conn.writeRaw(size)) &&
              (await conn.writeRaw(piece)) &&
              (await conn.writeRaw(Buffer.from('\r\n')));
          else open = await conn.writeRaw(piece);
          peak = Math.max(peak, heapAndBuffers());
        }
        const res = await answer;
        peak = Math.max(peak, heapAndBuffers());
        assert.equal(res.status, 401);
        assert.ok(res.json().requestId);
        assert.ok(peak - baseline < 50 * 1024 * 1024, `memory grew by ${peak - baseline} bytes`);
        assert.equal(res.headers['connection'], 'close');
        await conn.closed;
      } finally {
        conn.close();
      }
    });
  }

  it('serves a request with a key on a kept-alive connection after a body', async () => {
    const conn = await RawConnection.open(port);
    try {
      const created = await conn.request(EXAMPLES, { headers: json(), body: exampleBody(2000, 100) });
      assert.equal(created.status, 201);
      // Kept: uWS sends no Connection header then, node:http `keep-alive`.
      assert.notEqual(created.headers['connection'], 'close');
      const read = await conn.request(`${EXAMPLES}/${created.json().id}`, {
        method: 'GET',
        headers: { authorization: `Bearer ${h.token}` },
      });
      assert.equal(read.status, 200);
      assert.ok(conn.isOpen);
    } finally {
      conn.close();
    }
  });
});
