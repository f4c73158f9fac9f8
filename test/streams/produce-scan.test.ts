// The one-pass produce body reader: whatever it accepts, JSON.parse + parseProduce accept too and
// give the same records (so it can never let through what the checks refuse, nor store other
// bytes); and it declines bodies it does not handle, which the usual path then reads or refuses.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { scanProduce } from '../../src/streams/http/produce-scan.js';
import { parseProduce, type ProduceDialect, type ProduceRecord } from '../../src/streams/http/validate.js';
import type { TopicInfo } from '../../src/streams/log/types.js';
import { produceBody } from '../../bench/fixtures/produce-body.js';
import { spaced, valueOf } from './json-values.js';

const topic: TopicInfo = {
  name: 't',
  id: 1,
  partitions: 4,
  createdAt: 0,
  configs: { retentionMs: -1, retentionBytes: -1 },
};
const limits = { maxRecordsPerBatch: 50, maxRecordBytes: 400 };
const NOW = 1_700_000_000_000;

/** A record of the plain form, with some optional fields, from a seed. */
function recordOf(seed: number): Record<string, unknown> {
  const value = valueOf(seed * 7 + 1);
  const record: Record<string, unknown> = {
    value: typeof value === 'object' && value !== null && !Array.isArray(value) ? value : { v: value },
  };
  if (seed % 3 === 0) record.key = ['k', 'ключ', 'a"b', 'tab\there', ''][seed % 5];
  if (seed % 5 === 1) record.key = null;
  if (seed % 4 === 1) record.partition = seed % 4;
  if (seed % 6 === 2) record.timestamp = seed * 1000;
  if (seed % 7 === 3) record.headers = [{ key: 'h', value: seed % 2 === 0 ? 'v' : null }];
  if (seed % 11 === 4) record.headers = null;
  return record;
}

/** The Confluent json format's reading (confluent/routes.ts): any value, the body's bytes kept. */
const CONFLUENT: ProduceDialect = { values: 'any', schemaFields: 'ignore', errorCode: 422 };

function slow(body: Buffer, dialect?: ProduceDialect): ProduceRecord[] | Error {
  try {
    return parseProduce(JSON.parse(body.toString('utf8')), topic, limits, NOW, dialect, body);
  } catch (error) {
    return error as Error;
  }
}

const comparable = (records: readonly ProduceRecord[]) =>
  records.map((r) => ({ ...r, valueJson: Buffer.from(r.valueJson).toString('utf8') }));

/**
 * Whenever the fast reader accepts (with its partitions inside the topic, which the route checks),
 * the usual path gives the same records.
 */
function agrees(body: Buffer, values: 'object' | 'any' = 'object'): boolean {
  const fast = scanProduce(body, limits, NOW, values);
  if (!fast || fast.maxPartition >= topic.partitions) return false;
  const usual = slow(body, values === 'any' ? CONFLUENT : undefined);
  assert.ok(
    Array.isArray(usual),
    `accepted what the usual path refuses: ${body.toString()} (${(usual as Error).message})`,
  );
  assert.deepEqual(comparable(fast.records), comparable(usual), body.toString());
  return true;
}

describe('produce body one-pass reader', () => {
  it('plain bodies, compact and spaced: the same records as JSON.parse + parseProduce', () => {
    for (let seed = 1; seed < 500; seed++) {
      const records = Array.from({ length: 1 + (seed % 6) }, (_, k) => recordOf(seed * 13 + k));
      const compact = Buffer.from(JSON.stringify({ records }));
      assert.ok(agrees(compact), compact.toString());
      const loose = Buffer.from(` \n${spaced({ records })}\t `);
      assert.ok(agrees(loose), loose.toString());
    }
  });

  it("the benches' body (bench/fixtures/produce-body.ts), keyed and unkeyed, is read on the fast path", () => {
    for (const keyed of [true, false]) assert.ok(agrees(produceBody(50, 100, keyed)), `keyed ${keyed}`);
  });

  it('any values (the Confluent json format): the same records as the usual path', () => {
    for (const value of ['1', '-2.5e3', '"s\u0041"', 'null', 'true', '[1, {"a": [ ]}]', '{"a":1}', ' 7 ']) {
      assert.ok(agrees(Buffer.from(`{"records":[{"key":"k","value":${value}},{"value":{}}]}`), 'any'), value);
    }
    for (let seed = 1; seed < 200; seed++) {
      const records = [{ value: valueOf(seed) }, recordOf(seed)];
      assert.ok(agrees(Buffer.from(spaced({ records })), 'any'));
    }
    // No value: the usual path stores null there; not read on the fast path.
    assert.equal(scanProduce(Buffer.from('{"records":[{"key":"k"}]}'), limits, NOW, 'any'), undefined);
    // An object value is still required on /streams.
    assert.equal(scanProduce(Buffer.from('{"records":[{"value":1}]}'), limits, NOW), undefined);
  });

  it('numbers keep their digits, strings their escapes; escaped keys are decoded', () => {
    const body = Buffer.from(
      '{"records":[{"key":"a\\u00e9\\n","value":{"a":1.0,"b":-1e+3,"c":12345678901234567890,"d":"\\u0041\\/"}}]}',
    );
    assert.ok(agrees(body));
    const fast = scanProduce(body, limits, NOW)!;
    assert.equal(fast.records[0]!.key, 'aé\n');
    assert.equal(
      Buffer.from(fast.records[0]!.valueJson).toString(),
      '{"a":1.0,"b":-1e+3,"c":12345678901234567890,"d":"\\u0041\\/"}',
    );
  });

  it('the last of repeated fields wins, as in JSON.parse', () => {
    assert.ok(agrees(Buffer.from('{"records":[{"value":{"a":1},"key":"x","value":{"b":2},"key":null}]}')));
    assert.ok(agrees(Buffer.from('{"records":[{"value":{},"timestamp":5,"timestamp":null,"partition":1}]}')));
  });

  it('declines what the checks refuse, and forms it does not handle', () => {
    for (const text of [
      '',
      ' ',
      'null',
      '[]',
      '{}',
      '{"records":[]}',
      '{"records":{}}',
      '{"records":[{"value":1}]}',
      '{"records":[{"value":[]}]}',
      '{"records":[{"value":null}]}',
      '{"records":[{"key":"k"}]}',
      '{"records":[{}]}',
      '{"records":[7]}',
      '{"records":[{"value":{},"extra":1}]}',
      '{"records":[{"value":{},"key":7}]}',
      '{"records":[{"value":{},"partition":-1}]}',
      '{"records":[{"value":{},"partition":1.0}]}',
      '{"records":[{"value":{},"partition":01}]}',
      '{"records":[{"value":{},"timestamp":1e3}]}',
      '{"records":[{"value":{},"timestamp":12345678901234567}]}',
      '{"records":[{"value":{},"headers":[{"key":1}]}]}',
      '{"records":[{"value":{},"headers":{}}]}',
      '{"records":[{"val\\u0075e":{}}]}',
      '{"rec\\u006frds":[{"value":{}}]}',
      '{"records":[{"value":{}}],"value_schema":"x"}',
      '{"records":[{"value":{}}],"records":[{"value":{}}]}',
      '{"records":[{"value":{}}]} x',
      '{"records":[{"value":{}}]}}',
      '{"records":[{"value":{"a":01}}]}',
      '{"records":[{"value":{"a":1.}}]}',
      '{"records":[{"value":{"a":.5}}]}',
      '{"records":[{"value":{"a":-}}]}',
      '{"records":[{"value":{"a":1e}}]}',
      '{"records":[{"value":{"a":tru}}]}',
      '{"records":[{"value":{"a":nul}}]}',
      '{"records":[{"value":{"a":"\\x"}}]}',
      '{"records":[{"value":{"a":"\\u12g4"}}]}',
      '{"records":[{"value":{"a":"tab\there"}}]}',
      '{"records":[{"value":{"a":[1,]}}]}',
      '{"records":[{"value":{"a":1,}}]}',
      '{"records":[{"value":{"a" 1}}]}',
      '{"records":[{"value":{1:1}}]}',
      '{"records":[{"value":{"a":[1 2]}}]}',
      '{"records":[{"value":{"a":{"b":[}}}]}',
      '{"records":[{"value":{"a":"unterminated}}]}',
      '\ufeff{"records":[{"value":{}}]}',
      `{"records":[{"value":{"pad":"${'x'.repeat(500)}"}}]}`,
      JSON.stringify({ records: Array.from({ length: 51 }, () => ({ value: {} })) }),
    ]) {
      assert.equal(scanProduce(Buffer.from(text), limits, NOW), undefined, text);
    }
  });

  it('a partition beyond the topic is left to the caller (maxPartition)', () => {
    const fast = scanProduce(
      Buffer.from('{"records":[{"value":{},"partition":9},{"value":{}}]}'),
      limits,
      NOW,
    );
    assert.equal(fast?.maxPartition, 9);
  });

  it('byte-level damage: it accepts only what the usual path accepts, with the same records', () => {
    let accepted = 0;
    const bytes = [
      0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x0a, 0x30, 0x39, 0x2d, 0x2e, 0x65, 0x75, 0x00,
      0xff,
    ];
    for (let seed = 1; seed < 1500; seed++) {
      const records = Array.from({ length: 1 + (seed % 3) }, (_, k) => recordOf(seed * 17 + k));
      const body = Buffer.from(seed % 2 ? JSON.stringify({ records }) : spaced({ records }));
      // Overwrite, insert or delete one byte somewhere.
      const at = (seed * 2654435761) % body.length;
      const byte = bytes[seed % bytes.length]!;
      const damaged =
        seed % 3 === 0
          ? Buffer.concat([body.subarray(0, at), Buffer.from([byte]), body.subarray(at)])
          : seed % 3 === 1
            ? Buffer.concat([body.subarray(0, at), body.subarray(at + 1)])
            : Buffer.from(body).fill(byte, at, at + 1);
      // Declined bodies are the usual path's to read or refuse.
      if (agrees(damaged)) accepted++;
    }
    // Many damaged bodies are still valid (a digit, a space, a letter in a string).
    assert.ok(accepted > 100, `accepted ${accepted}`);
  });
});
