// The produce body scanner: for every body JSON.parse accepts, each record's stored value text is
// a JSON text of the same value JSON.parse gave, byte for byte the client's text less the white
// space outside strings; and where it cannot be sure (escaped names), it says so.
import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { compactValue, valueSpans } from '../../src/streams/http/value-spans.js';
import { spaced, valueOf } from './json-values.js';

function storedValues(text: string): (string | undefined)[] | undefined {
  const body = Buffer.from(text);
  JSON.parse(text); // the scanner is only run on bodies JSON.parse accepted
  const spans = valueSpans(body);
  if (!spans) return undefined;
  return spans.map((span) => (span ? compactValue(body, span).toString('utf8') : undefined));
}

describe('produce body value spans', () => {
  it('a compact body: each value is exactly JSON.stringify of the parsed value', () => {
    for (let seed = 1; seed < 400; seed++) {
      const records = Array.from({ length: 1 + (seed % 5) }, (_, k) => ({
        key: `k${k}`,
        value: valueOf(seed * 31 + k),
        partition: 0,
      }));
      const text = JSON.stringify({ records });
      const stored = storedValues(text);
      assert.ok(stored, text);
      assert.deepEqual(
        stored,
        records.map((r) => JSON.stringify(r.value)),
        text,
      );
    }
  });

  it('white space outside strings is dropped; inside strings it stays', () => {
    for (let seed = 1; seed < 300; seed++) {
      const value = valueOf(seed);
      const text = `{ "records" : [ {"key":null,\n "value" :  ${spaced(value)} \n} ] }`;
      const stored = storedValues(text);
      assert.ok(stored, text);
      assert.equal(stored.length, 1);
      assert.equal(stored[0], JSON.stringify(value), text);
    }
  });

  it('numbers keep their digits, strings their escapes', () => {
    const text = '{"records":[{"value":{"a":1.0,"b":1e3,"c":12345678901234567890,"d":"\\u0041\\/"}}]}';
    assert.deepEqual(storedValues(text), ['{"a":1.0,"b":1e3,"c":12345678901234567890,"d":"\\u0041\\/"}']);
  });

  it('the last of repeated names wins, as in JSON.parse', () => {
    assert.deepEqual(storedValues('{"records":[{"value":1,"value":{"x":2}}]}'), ['{"x":2}']);
    assert.deepEqual(storedValues('{"records":[{"value":1}],"records":[{"value":2},{"value":3}]}'), [
      '2',
      '3',
    ]);
    assert.equal(storedValues('{"records":[{"value":1}],"records":7}'), undefined);
  });

  it('records without a value, and elements that are not objects, have no span', () => {
    assert.deepEqual(storedValues('{"records":[{"key":"k"},7,"s",[1],{"value":null}]}'), [
      undefined,
      undefined,
      undefined,
      undefined,
      'null',
    ]);
    assert.deepEqual(storedValues('{"records":[]}'), []);
  });

  it('escaped names make it unsure: the record (or the whole body) is serialised instead', () => {
    assert.deepEqual(storedValues('{"records":[{"value":2,"val\\u0075e":1},{"value":3}]}'), [undefined, '3']);
    assert.equal(storedValues('{"rec\\u006frds":[{"value":1}]}'), undefined);
    assert.equal(storedValues('{"x\\"":1,"records":[{"value":1}]}'), undefined);
  });

  it('bodies without a records array have no spans', () => {
    for (const text of [
      '[]',
      '{}',
      '"records"',
      '{"records":{"value":1}}',
      'null',
      '{"other":[{"value":1}]}',
    ])
      assert.equal(storedValues(text), undefined, text);
  });

  it('string values ending in backslashes and holding brackets are skipped whole', () => {
    const value = { a: 'x\\', b: '\\\\"', c: '[{]}', d: ['\\'] };
    const text = JSON.stringify({ records: [{ value }, { value: 'after' }] });
    assert.deepEqual(storedValues(text), [JSON.stringify(value), '"after"']);
  });
});
