// The /streams produce body read in one pass over its bytes, without JSON.parse: for a batch of
// 1000 records, JSON.parse built 2000 objects and their strings per request only for the checks to
// look at them and drop them, and while the request waited for JetStream they were promoted to
// the old generation (the garbage collector was a third of the server's CPU under load).
//
// This reader checks the whole body against the JSON grammar (RFC 8259) and takes only the body
// shape a client normally sends: {"records":[{key, value, partition, timestamp, headers}, …]},
// member names without escapes, keys as strings or null, partitions and timestamps as plain
// digits, each record within the limits. Anything else — a syntax error, a field or value the
// checks refuse, a form it does not handle — makes it answer undefined, and the caller reads the
// body the usual way (JSON.parse and parseProduce), which gives the same records or the exact
// error. So it never decides an error itself; it only has to be right about what it accepts.

import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  compactRange,
  isSpace,
} from './value-spans.js';
import { CodedError } from '../../core/errors.js';
import { parseHeaders, type ProduceLimits, type ProduceRecord } from './validate.js';
import type { RecordHeader } from '../log/types.js';

const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

const isDigit = (c: number): boolean => c >= ZERO && c <= NINE;
const isHex = (c: number): boolean =>
  (c >= ZERO && c <= NINE) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

/**
 * Why the fast read gave up: one shared value, never shown (the caller reads the body the usual
 * way), so giving up allocates nothing.
 */
const NOT_FAST = new CodedError('not_fast', 'not on the fast path');

/** A record member name, read from its bytes. */
const enum Field {
  Key,
  Value,
  Partition,
  Timestamp,
  Headers,
  Other,
}

const FIELDS: ReadonlyArray<readonly [Buffer, Field]> = [
  [Buffer.from('key'), Field.Key],
  [Buffer.from('value'), Field.Value],
  [Buffer.from('partition'), Field.Partition],
  [Buffer.from('timestamp'), Field.Timestamp],
  [Buffer.from('headers'), Field.Headers],
];
const RECORDS = Buffer.from('"records"');
const TRUE = Buffer.from('true');
const FALSE = Buffer.from('false');
const NULL = Buffer.from('null');

/** The records read, and the highest explicit partition (-1 when none), which the caller checks. */
export interface ScannedProduce {
  readonly records: ProduceRecord[];
  readonly maxPartition: number;
}

class Scanner {
  pos = 0;
  /** The last string skipped held a backslash. */
  escaped = false;
  /** White space was met inside the last value skipped. */
  spaced = false;
  constructor(readonly b: Buffer) {}

  /** Past white space; true when there was some. */
  space(): boolean {
    const b = this.b;
    const start = this.pos;
    let i = start;
    while (i < b.length && isSpace(b[i]!)) i++;
    this.pos = i;
    return i > start;
  }

  expect(byte: number): void {
    this.space();
    if (this.b[this.pos] !== byte) throw NOT_FAST;
    this.pos++;
  }

  /** Past a `,` (true) or `close` (false) after white space. */
  more(close: number): boolean {
    this.space();
    const c = this.b[this.pos++];
    if (c === COMMA) return true;
    if (c === close) return false;
    throw NOT_FAST;
  }

  /** Past the string at pos: no raw control characters, only JSON's escapes. */
  string(): void {
    const b = this.b;
    let i = this.pos + 1;
    let escaped = false;
    for (;;) {
      if (i >= b.length) throw NOT_FAST;
      const c = b[i]!;
      if (c === QUOTE) break;
      if (c < 0x20) throw NOT_FAST;
      if (c === BACKSLASH) {
        escaped = true;
        const e = b[i + 1];
        if (e === 0x75 /* u */) {
          for (let k = 2; k < 6; k++) if (!isHex(b[i + k] ?? 0)) throw NOT_FAST;
          i += 6;
        } else if (
          e === QUOTE ||
          e === BACKSLASH ||
          e === 0x2f /* / */ ||
          e === 0x62 /* b */ ||
          e === 0x66 /* f */ ||
          e === 0x6e /* n */ ||
          e === 0x72 /* r */ ||
          e === 0x74 /* t */
        )
          i += 2;
        else throw NOT_FAST;
      } else i++;
    }
    this.pos = i + 1;
    this.escaped = escaped;
  }

  /** Past a number: -?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)? */
  number(): void {
    const b = this.b;
    let i = this.pos;
    if (b[i] === MINUS) i++;
    if (b[i] === ZERO) i++;
    else if (isDigit(b[i] ?? 0)) while (isDigit(b[i] ?? 0)) i++;
    else throw NOT_FAST;
    if (b[i] === DOT) {
      i++;
      if (!isDigit(b[i] ?? 0)) throw NOT_FAST;
      while (isDigit(b[i] ?? 0)) i++;
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      i++;
      if (b[i] === PLUS || b[i] === MINUS) i++;
      if (!isDigit(b[i] ?? 0)) throw NOT_FAST;
      while (isDigit(b[i] ?? 0)) i++;
    }
    this.pos = i;
  }

  is(word: Buffer): boolean {
    const b = this.b;
    const at = this.pos;
    if (at + word.length > b.length) return false;
    for (let k = 0; k < word.length; k++) if (b[at + k] !== word[k]) return false;
    return true;
  }

  /** Past one scalar (string, number, literal). */
  scalar(): void {
    const c = this.b[this.pos];
    if (c === QUOTE) return this.string();
    if (c === MINUS || isDigit(c ?? 0)) return this.number();
    const word = c === 0x74 ? TRUE : c === 0x66 ? FALSE : c === 0x6e ? NULL : undefined;
    if (!word || !this.is(word)) throw NOT_FAST;
    this.pos += word.length;
  }

  /**
   * Past one JSON value of any kind, checked against the grammar without recursion (JSON.parse
   * takes any depth); `spaced` says whether white space was met inside it.
   */
  value(): void {
    const b = this.b;
    this.spaced = false;
    // Open containers: true for an object, false for an array.
    const open: boolean[] = [];
    for (;;) {
      const c = b[this.pos];
      if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        const object = c === OPEN_OBJECT;
        this.pos++;
        if (this.space()) this.spaced = true;
        if (b[this.pos] === (object ? CLOSE_OBJECT : CLOSE_ARRAY)) {
          this.pos++;
        } else {
          open.push(object);
          if (object) this.memberName();
          continue;
        }
      } else this.scalar();
      // After a value: close containers or go on to the next element.
      for (;;) {
        if (open.length === 0) return;
        if (this.space()) this.spaced = true;
        const next = b[this.pos++];
        const object = open[open.length - 1]!;
        if (next === COMMA) {
          if (this.space()) this.spaced = true;
          if (object) this.memberName();
          break;
        }
        if (next !== (object ? CLOSE_OBJECT : CLOSE_ARRAY)) throw NOT_FAST;
        open.pop();
      }
    }
  }

  /** Past `"name" :` and white space inside a value being skipped. */
  private memberName(): void {
    if (this.b[this.pos] !== QUOTE) throw NOT_FAST;
    this.string();
    if (this.space()) this.spaced = true;
    if (this.b[this.pos++] !== COLON) throw NOT_FAST;
    if (this.space()) this.spaced = true;
  }

  /** A record member name at pos (after white space), its colon and the white space after it. */
  field(): Field {
    this.space();
    if (this.b[this.pos] !== QUOTE) throw NOT_FAST;
    const start = this.pos + 1;
    this.string();
    if (this.escaped) throw NOT_FAST;
    const length = this.pos - 1 - start;
    let field = Field.Other;
    for (const [name, which] of FIELDS) {
      if (name.length !== length) continue;
      let same = true;
      for (let k = 0; k < length; k++) {
        if (this.b[start + k] !== name[k]) {
          same = false;
          break;
        }
      }
      if (same) {
        field = which;
        break;
      }
    }
    this.expect(COLON);
    this.space();
    return field;
  }

  /** A non-negative integer written as plain digits (up to 15 of them: always safe), or null. */
  plainInteger(): number | null {
    const b = this.b;
    if (this.is(NULL)) {
      this.pos += NULL.length;
      return null;
    }
    const start = this.pos;
    let n = 0;
    let i = start;
    while (i < b.length && isDigit(b[i]!)) n = n * 10 + (b[i++]! - ZERO);
    const digits = i - start;
    if (digits === 0 || digits > 15 || (digits > 1 && b[start] === ZERO)) throw NOT_FAST;
    this.pos = i;
    return n;
  }
}

/**
 * The records of a produce body, or undefined when the body is not of the plain form this reader
 * takes or a check would refuse it; then the caller reads it with JSON.parse and parseProduce.
 * `values`: `object` for /streams (a value must be a JSON object), `any` for Confluent's json
 * format (any JSON value; a record without one is left to the usual path, which stores null).
 */
export function scanProduce(
  body: Buffer,
  limits: ProduceLimits,
  now: number,
  values: 'object' | 'any' = 'object',
): ScannedProduce | undefined {
  try {
    return scan(body, limits, now, values === 'any');
  } catch (error) {
    if (error === NOT_FAST) return undefined;
    throw error;
  }
}

function scan(body: Buffer, limits: ProduceLimits, now: number, anyValue: boolean): ScannedProduce {
  const s = new Scanner(body);
  s.expect(OPEN_OBJECT);
  s.space();
  // Exactly one member, "records", holding a non-empty array.
  if (!s.is(RECORDS)) throw NOT_FAST;
  s.pos += RECORDS.length;
  s.expect(COLON);
  s.expect(OPEN_ARRAY);
  const records: ProduceRecord[] = [];
  let maxPartition = -1;
  do {
    if (records.length >= limits.maxRecordsPerBatch) throw NOT_FAST;
    const index = records.length;
    s.expect(OPEN_OBJECT);
    let key: string | null = null;
    let valueStart = -1;
    let valueEnd = -1;
    let spaced = false;
    let partition: number | undefined;
    let timestamp = now;
    let headers: RecordHeader[] | null = null;
    let headersJson = '';
    s.space();
    if (body[s.pos] === CLOSE_OBJECT) throw NOT_FAST; // no value
    do {
      const field = s.field();
      switch (field) {
        case Field.Key:
          if (s.is(NULL)) {
            s.pos += NULL.length;
            key = null;
          } else {
            if (body[s.pos] !== QUOTE) throw NOT_FAST;
            const start = s.pos;
            s.string();
            key = s.escaped
              ? (JSON.parse(body.toString('utf8', start, s.pos)) as string)
              : body.toString('utf8', start + 1, s.pos - 1);
          }
          break;
        case Field.Value:
          if (!anyValue && body[s.pos] !== OPEN_OBJECT) throw NOT_FAST;
          valueStart = s.pos;
          s.value();
          valueEnd = s.pos;
          spaced = s.spaced;
          break;
        case Field.Partition: {
          const n = s.plainInteger();
          partition = n ?? undefined;
          break;
        }
        case Field.Timestamp:
          timestamp = s.plainInteger() ?? now;
          break;
        case Field.Headers: {
          const start = s.pos;
          s.value();
          const raw = JSON.parse(body.toString('utf8', start, s.pos)) as unknown;
          headers = null;
          headersJson = '';
          if (raw !== null) {
            headers = parseHeaders(raw, index, () => NOT_FAST);
            headersJson = headers ? JSON.stringify(headers) : '';
          }
          break;
        }
        default:
          throw NOT_FAST;
      }
    } while (s.more(CLOSE_OBJECT));
    if (valueStart < 0) throw NOT_FAST;
    if (partition !== undefined && partition > maxPartition) maxPartition = partition;
    const valueJson = compactRange(body, valueStart, valueEnd, spaced);
    // The size check of parseProduce; a record over the limit is left to it (413).
    const units = valueJson.length + (key === null ? 0 : key.length) + headersJson.length;
    if (units * 3 > limits.maxRecordBytes) {
      const size =
        valueJson.length + (key === null ? 0 : Buffer.byteLength(key)) + Buffer.byteLength(headersJson);
      if (size > limits.maxRecordBytes) throw NOT_FAST;
    }
    records.push({ key, valueJson, partition, timestamp, headers });
  } while (s.more(CLOSE_ARRAY));
  s.expect(CLOSE_OBJECT);
  s.space();
  if (s.pos !== body.length) throw NOT_FAST;
  return { records, maxPartition };
}
