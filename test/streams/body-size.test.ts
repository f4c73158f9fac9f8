// Produce bodies past the HTTP core's chunk high-water mark, up to STREAMS_MAX_BODY_BYTES
// (16 MiB by default) and one byte over, framed with Content-Length and chunked.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import { BODY_HIGH_WATER_BYTES } from '../../src/core/http/body.js';
import { RawConnection, rawRequest, type Framing } from '../helpers/raw-http.js';
import { createTopic, startHarness, VND, type Harness } from './harness.js';

const LIMIT = 16 * 1024 * 1024; // STREAMS_MAX_BODY_BYTES default
const HW = BODY_HIGH_WATER_BYTES;

/** A produce body of `count` records, padded with trailing spaces to exactly `size` bytes. */
function produceBody(count: number, size: number): Buffer {
  const shell = '{"value":{"p":""}}';
  const per = Math.floor((size - '{"records":[]}'.length - (count - 1)) / count) - shell.length;
  assert.ok(per >= 0, 'size too small for the record count');
  const record = `{"value":{"p":"${'x'.repeat(per)}"}}`;
  const json = `{"records":[${Array(count).fill(record).join(',')}]}`;
  assert.ok(json.length <= size);
  return Buffer.from(json + ' '.repeat(size - json.length));
}

describe('streams produce bodies up to the body limit', () => {
  let h: Harness;
  let port: number;
  const headers = () => ({ authorization: `Bearer ${h.token}`, 'content-type': VND });

  before(async () => {
    h = await startHarness();
    port = Number(new URL(h.url).port);
    await createTopic(h, 'big');
  });
  after(() => h.close());

  for (const framing of ['length', 'chunked'] as Framing[]) {
    it(`answers produce requests of 1×/2×/4× the high-water mark, 12 MB and the limit (${framing})`, async () => {
      const cases: [string, number, number][] = [
        ['1× high-water', 2_000, HW],
        ['2× high-water', 5_000, 2 * HW],
        ['12 MB, 10,000 records of ~1.2 KB', 10_000, 12_000_000],
        ['4× high-water = the limit', 10_000, LIMIT],
      ];
      for (const [label, count, size] of cases) {
        const res = await rawRequest(port, '/streams/topic/big', {
          headers: headers(),
          body: produceBody(count, size),
          framing,
        });
        assert.equal(res.status, 200, `${label}: ${res.text.slice(0, 300)}`);
        const offsets = res.json().offsets as { partition: number; offset: number }[];
        assert.equal(offsets.length, count, label);
        for (let i = 1; i < offsets.length; i++) assert.equal(offsets[i]!.offset, offsets[i - 1]!.offset + 1);
      }
    });

    it(`refuses a 17 MB produce request with a JSON 413 and closes the connection (${framing})`, async () => {
      for (const size of [LIMIT + 1, 17_000_000]) {
        const conn = await RawConnection.open(port);
        try {
          const res = await conn.request('/streams/topic/big', {
            headers: headers(),
            body: produceBody(10_000, size),
            framing,
            // A declared length over the limit is refused before a body byte is read.
            headOnly: framing === 'length',
          });
          assert.equal(res.status, 413, res.text);
          assert.match(res.headers['content-type'] ?? '', /json/);
          assert.equal(res.json().error_code, 413);
          assert.equal(res.headers['connection'], 'close');
          await conn.closed;
        } finally {
          conn.close();
        }
      }
    });
  }
});
