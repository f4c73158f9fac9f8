import { test } from 'node:test';
import { strict as assert } from 'node:assert';
import { murmur2, partitionForKey } from '../../src/streams/log/murmur2.js';

// Vectors from Apache Kafka's clients UtilsTest.testMurmur2 (the Java reference implementation).
const KAFKA_VECTORS: Array<[string, number]> = [
  ['21', -973932308],
  ['foobar', -790332482],
  ['a-little-bit-long-string', -985981536],
  ['a-little-bit-longer-string', -1486304829],
  ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
  ['abc', 479470107],
];

test('murmur2 matches the Kafka Java client vectors', () => {
  for (const [text, expected] of KAFKA_VECTORS) {
    assert.equal(murmur2(Buffer.from(text, 'utf8')), expected, text);
  }
});

test('murmur2 covers every tail length (0–3 leftover bytes)', () => {
  // Values from the Kafka implementation as quoted by Akka's Murmur2Spec.
  const cases: Array<[string, number]> = [
    ['1', -1993445489],
    ['12', 126087238],
    ['123', -267702483],
    ['1234', -1614185708],
    ['12345', -1188365604],
  ];
  for (const [text, expected] of cases) assert.equal(murmur2(Buffer.from(text)), expected, text);
});

test('partitionForKey masks the sign bit instead of taking an unsigned modulo', () => {
  assert.equal(partitionForKey('abc', 3), 0);
  assert.equal(partitionForKey('abc', 6), 3);
  assert.equal(partitionForKey('user-42', 3), 1);
  assert.equal(partitionForKey('user-42', 6), 4);
  // "user-42" with quotes hashes to a negative number: masked → 1, unsigned % 6 would give 3.
  assert.equal(partitionForKey('"user-42"', 6), 1);
  assert.equal(partitionForKey('"abc"', 6), 0);
});

test('partitionForKey hashes UTF-8 bytes, not UTF-16 code units', () => {
  const key = 'clé-✓';
  assert.equal(partitionForKey(key, 1000), (murmur2(Buffer.from(key, 'utf8')) & 0x7fffffff) % 1000);
  assert.notEqual(murmur2(Buffer.from(key, 'utf8')), murmur2(Buffer.from(key, 'utf16le')));
});
