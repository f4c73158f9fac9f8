// The streams record table's logic without a browser: value previews, key and value filters,
// newest-first order and where a tail starts.

import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import {
  matchesFilter,
  newestFirst,
  tailOffset,
  valuePreview,
  type TableRecord,
} from '../../console/src/streams/record-filter.js';

const record = (
  offset: number,
  key: string | null,
  value: unknown,
  timestamp = 1000 + offset,
): TableRecord => ({
  partition: 0,
  offset,
  key,
  value,
  timestamp,
});

describe('console record table', () => {
  it('previews a value on one line, cut with an ellipsis', () => {
    assert.equal(valuePreview({ a: [1, 'x'] }), '{"a":[1,"x"]}');
    assert.equal(valuePreview('plain text'), 'plain text');
    assert.equal(valuePreview(null), 'null');
    const long = valuePreview({ s: 'x'.repeat(500) }, 20);
    assert.equal(long.length, 20);
    assert.ok(long.endsWith('…'));
  });

  it('filters on the key and on the value text, case-insensitively', () => {
    const r = record(1, 'User-42', { city: 'Lyon', n: 3 });
    assert.ok(matchesFilter(r, { key: 'user', value: '' }));
    assert.ok(matchesFilter(r, { key: '', value: 'lyon' }));
    assert.ok(matchesFilter(r, { key: ' 42 ', value: '"n":3' }));
    assert.ok(!matchesFilter(r, { key: 'other', value: '' }));
    assert.ok(!matchesFilter(r, { key: 'user', value: 'paris' }));
    assert.ok(
      !matchesFilter(record(2, null, {}), { key: 'u', value: '' }),
      'no key never matches a key filter',
    );
    assert.ok(matchesFilter(record(2, null, {}), { key: '', value: '' }));
  });

  it('orders newest first and starts a tail at most `count` before the end', () => {
    const ordered = newestFirst([record(1, 'a', 1), record(3, 'c', 3), record(2, 'b', 2, 1003)]);
    assert.deepEqual(
      ordered.map((r) => r.offset),
      [3, 2, 1],
    );
    assert.equal(tailOffset(0, 10, 3), 7);
    assert.equal(tailOffset(5, 7, 20), 5, 'not before the partition begins');
  });
});
