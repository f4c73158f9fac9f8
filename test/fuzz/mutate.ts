// Mutators: structured (a JSON value with one node changed) and byte-level (truncated,
// invalid UTF-8, binary, deep nesting, huge numbers), plus odd path segments and query strings.
// Each returns what it did, for the failure report.

import type { Prng } from './prng.js';

/** Values of every wrong type and edge, used to replace one node of a seed. */
const ODD_VALUES: readonly unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  Number.MAX_SAFE_INTEGER + 2,
  -Number.MAX_VALUE,
  '',
  ' ',
  'x'.repeat(10_000),
  '\u0000',
  '\ud800',
  '🙂'.repeat(50),
  '../../etc/passwd',
  '%2F..%2F',
  [],
  [[[]]],
  {},
  { __proto__: { polluted: true } },
  { constructor: { prototype: { polluted: true } } },
  Array.from({ length: 1000 }, (_, i) => i),
];

/** Number literals JSON.stringify cannot produce. */
const HUGE_NUMBERS = [
  '1e400',
  '-1e400',
  '123456789012345678901234567890',
  '1E+999999',
  '-0',
  '0.0000000000000000000001',
  '9007199254740993',
];

export function mutateValue(value: unknown, rng: Prng): { value: unknown; note: string } {
  const paths: (string | number)[][] = [];
  const walk = (v: unknown, at: (string | number)[]) => {
    paths.push(at);
    if (at.length > 6) return;
    if (Array.isArray(v)) v.forEach((x, i) => walk(x, [...at, i]));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
  };
  walk(value, []);
  const at = rng.pick(paths);
  const copy = structuredClone(value);
  const op = rng.int(0, 3);
  const replacement = rng.pick(ODD_VALUES);
  if (at.length === 0) return { value: replacement, note: `whole body → ${describe(replacement)}` };
  const parent = at.slice(0, -1).reduce<any>((v, k) => v[k], copy);
  const key = at[at.length - 1]!;
  if (op === 0 && !Array.isArray(parent)) {
    delete parent[key];
    return { value: copy, note: `removed ${at.join('.')}` };
  }
  if (op === 1 && !Array.isArray(parent)) {
    const extra = rng.pick(['unknown_field', '__proto__', 'constructor', '', 'x'.repeat(300)]);
    Object.defineProperty(parent, extra, {
      value: replacement,
      enumerable: true,
      configurable: true,
      writable: true,
    });
    return { value: copy, note: `added ${JSON.stringify(extra.slice(0, 20))} = ${describe(replacement)}` };
  }
  parent[key] = replacement;
  return { value: copy, note: `${at.join('.')} → ${describe(replacement)}` };
}

function describe(v: unknown): string {
  const text = JSON.stringify(v) ?? String(v);
  return text.length > 40 ? text.slice(0, 40) + '…' : text;
}

/** Byte-level damage to a serialised body. */
export function mutateBytes(text: string, rng: Prng): { body: Buffer; note: string } {
  const bytes = Buffer.from(text, 'utf8');
  switch (rng.int(0, 6)) {
    case 0: {
      const cut = rng.int(0, Math.max(0, bytes.length - 1));
      return { body: bytes.subarray(0, cut), note: `truncated at ${cut} of ${bytes.length}` };
    }
    case 1: {
      const bad = rng.pick([
        [0xff],
        [0xfe, 0xff],
        [0xc0, 0x80],
        [0xed, 0xa0, 0x80],
        [0xf4, 0x90, 0x80, 0x80],
        [0xe2, 0x82],
        [0x80],
      ]);
      const at = quoteInside(text, rng);
      return {
        body: Buffer.concat([bytes.subarray(0, at), Buffer.from(bad), bytes.subarray(at)]),
        note: `invalid UTF-8 ${Buffer.from(bad).toString('hex')} at ${at}`,
      };
    }
    case 2: {
      const copy = Buffer.from(bytes);
      const n = rng.int(1, 4);
      for (let i = 0; i < n && copy.length > 0; i++) copy[rng.int(0, copy.length - 1)] = rng.int(0, 255);
      return { body: copy, note: `${n} random bytes flipped` };
    }
    case 3: {
      const numbers = [...text.matchAll(/-?\d+(?:\.\d+)?/g)];
      const huge = rng.pick(HUGE_NUMBERS);
      if (numbers.length === 0) return { body: Buffer.from(`{"n":${huge}}`), note: `number ${huge}` };
      const m = rng.pick(numbers);
      return {
        body: Buffer.from(text.slice(0, m.index) + huge + text.slice(m.index + m[0].length)),
        note: `number ${m[0]} → ${huge}`,
      };
    }
    case 4:
      return {
        body: Buffer.from(text + rng.pick([',', '}', ']', '\u0000', ' garbage', '{}'])),
        note: 'trailing garbage',
      };
    case 5:
      return { body: Buffer.from(text.replace(/"/g, "'")), note: 'single quotes' };
    default: {
      // The same key twice: JSON.parse keeps the last one.
      const dup = text.replace(/^\{/, '{"__proto__":{"x":1},');
      return { body: Buffer.from(dup), note: 'duplicate/prototype key' };
    }
  }
}

function quoteInside(text: string, rng: Prng): number {
  const quotes = [...text.matchAll(/"/g)].map((m) => m.index + 1);
  return quotes.length > 0 ? Buffer.byteLength(text.slice(0, rng.pick(quotes))) : 0;
}

/** Bodies with no relation to a seed. */
const MIB = 1024 * 1024;
const BIG_SIZES = [65 * 1024, 5 * MIB, 11 * MIB, MIB + 1, 17 * MIB, 4 * MIB + 1];

/**
 * A JSON body around the default limits (rate limit 64 KiB, automation JSON 10 MiB, streams
 * 16 MiB), the sizes taken in turn so that a budget of 6 sends each once.
 */
export function bigBody(budget: { left: number; used: number }): { body: Buffer; note: string } {
  const size = BIG_SIZES[budget.used++ % BIG_SIZES.length]!;
  budget.left--;
  return { body: Buffer.from('{"a":"' + 'x'.repeat(size) + '"}'), note: `${size + 8} bytes of JSON` };
}

export function randomBody(rng: Prng): { body: Buffer; note: string } {
  switch (rng.int(0, 9)) {
    case 0:
      return { body: rng.bytes(rng.int(1, 2048)), note: 'binary' };
    case 1: {
      const n = rng.pick([64, 1000, 10_000, 100_000]);
      const open = rng.pick(['[', '{"a":']);
      const close = open === '[' ? ']' : '}';
      return { body: Buffer.from(open.repeat(n) + '1' + close.repeat(n)), note: `nesting ${n} deep` };
    }
    case 2:
      return {
        body: Buffer.from(rng.pick(['', ' ', 'null', '[]', '""', '0', 'true', '"x"', '{}', '\ufeff{}'])),
        note: 'scalar/empty',
      };
    case 3:
      return { body: Buffer.from(rng.pick(HUGE_NUMBERS)), note: 'bare huge number' };
    case 4:
      return {
        body: Buffer.from('{"a":"' + '\\u0000\\ud800\\udfff'.repeat(rng.int(1, 100)) + '"}'),
        note: 'escaped NUL and lone surrogates',
      };
    case 5:
      return { body: Buffer.from('{"a":"' + 'x'.repeat(20_000) + '"}'), note: '20 kB of JSON' };
    case 6:
      return {
        body: Buffer.from(
          '--b\r\nContent-Disposition: form-data; name="file"; filename="../../x.txt"\r\n\r\nabc\r\n--b',
        ),
        note: 'truncated multipart',
      };
    case 7:
      return { body: Buffer.from('a=1&b=%ZZ&' + 'c'.repeat(100)), note: 'form-encoded' };
    case 8:
      return { body: Buffer.from('key: [unclosed\n  - : :\n\t{'), note: 'broken YAML' };
    default:
      return {
        body: Buffer.from(JSON.stringify(Array.from({ length: rng.int(1, 5000) }, () => ({ k: 'v' })))),
        note: 'long array',
      };
  }
}

/** A path segment that is not a real id (already percent-encoded where needed). */
export function oddSegment(rng: Prng): string {
  return rng.pick([
    '',
    '.',
    '..',
    '%2e%2e',
    '%2F',
    'a%2Fb',
    '..%2F..%2Fetc%2Fpasswd',
    '%00',
    '%ZZ',
    '%',
    '%C3%28',
    '%ED%A0%80',
    '%F0%9F%99%82',
    'x'.repeat(rng.pick([256, 1025, 5000, 70_000])),
    encodeURIComponent('ü'.repeat(200)),
    '-1',
    '0',
    '99999999999999999999',
    '1e9',
    'NaN',
    'null',
    'undefined',
    '__proto__',
    'constructor',
    'toString',
    'aut_' + '0'.repeat(20),
    'workflows.text-report@9.9.9',
    'workflows.text-report@',
    '@latest',
    '%20',
    'a b'.replace(' ', '%20'),
    '*',
    ';',
    ':id',
    '{id}',
  ]);
}

export function oddQuery(rng: Prng): string {
  return rng.pick([
    '%',
    'a=%ZZ',
    '=x',
    '&&&',
    'a[]=1&a[]=2',
    'limit=-1',
    'limit=1e9',
    'limit=NaN',
    'offset=99999999999999999999',
    'timeout=-5',
    'max_bytes=0',
    'count=1.5',
    'wait_for_completion=601',
    'expand=' + 'x,'.repeat(1000),
    'cursor=' + 'A'.repeat(5000),
    'q=' + 'x'.repeat(rng.pick([100, 10_000, 60_000])),
    'a=1&a=2&a=3',
    'sort=__proto__',
    'from=not-a-date&to=9999-99-99',
    'zip=maybe',
    'format=xml',
  ]);
}
