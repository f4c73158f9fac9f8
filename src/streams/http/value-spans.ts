// Where each record's value is in a produce body, so that a record's value is stored as the bytes
// the client sent instead of being serialised again from the parsed body (JSON.stringify of every
// value was the largest cost per record after JSON.parse). The body has already been parsed by
// JSON.parse, so it is valid JSON: the scanner only tracks strings, nesting and member names.
//
// What is stored is the value's text as sent, less the white space outside strings (RFC 8259 §2:
// insignificant), so numbers keep their digits (`1.0`, `1e3`, integers above 2^53) and strings
// their escapes; a JSON reader sees the same value as in the parsed body. Where the body's names
// are written with escapes (`"val\u0075e"`), the scanner cannot be sure which member JSON.parse
// took, and the caller serialises that record's parsed value instead.

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const COMMA = 0x2c;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;

/** JSON's white space (RFC 8259 §2). */
export const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** A value's place in the body; `spaced` when white space outside strings must be dropped. */
export interface ValueSpan {
  readonly start: number;
  readonly end: number;
  readonly spaced: boolean;
}

/** Per element of the top-level `records` array: its value's span, or undefined to serialise. */
export type ValueSpans = (ValueSpan | undefined)[];

/** What a member name is, read from its bytes without making a string of it. */
const enum Name {
  Other,
  Records,
  Value,
  /** Written with escapes: JSON.parse may read it as any name. */
  Escaped,
}

const RECORDS = Buffer.from('records');
const VALUE = Buffer.from('value');

/** A byte loop (no string made, no call into C++ per token: most tokens are a few bytes long). */
class Cursor {
  pos = 0;
  spaced = false;
  escaped = false;
  constructor(readonly body: Buffer) {}

  skipSpace(): void {
    const b = this.body;
    let i = this.pos;
    while (i < b.length && isSpace(b[i]!)) i++;
    this.pos = i;
  }

  /** Past the string that starts at pos; `escaped` says whether it held a backslash. */
  skipString(): void {
    const b = this.body;
    let i = this.pos + 1;
    let escaped = false;
    for (;;) {
      if (i >= b.length) throw new SyntaxError('unterminated string');
      const c = b[i]!;
      if (c === QUOTE) break;
      if (c === BACKSLASH) {
        escaped = true;
        i += 2;
      } else i++;
    }
    this.pos = i + 1;
    this.escaped = escaped;
  }

  name(): Name {
    const start = this.pos + 1;
    this.skipString();
    if (this.escaped) return Name.Escaped;
    const length = this.pos - 1 - start;
    if (length === RECORDS.length && this.same(start, RECORDS)) return Name.Records;
    if (length === VALUE.length && this.same(start, VALUE)) return Name.Value;
    return Name.Other;
  }

  private same(at: number, word: Buffer): boolean {
    for (let k = 0; k < word.length; k++) if (this.body[at + k] !== word[k]) return false;
    return true;
  }

  /** Past one value of any kind; notes white space met outside strings. */
  skipValue(): void {
    const b = this.body;
    const c = b[this.pos]!;
    if (c === QUOTE) {
      this.skipString();
      return;
    }
    let i = this.pos;
    if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
      while (i < b.length) {
        const x = b[i]!;
        if (x === COMMA || x === CLOSE_OBJECT || x === CLOSE_ARRAY || isSpace(x)) break;
        i++;
      }
      this.pos = i;
      return;
    }
    let depth = 0;
    while (i < b.length) {
      const x = b[i]!;
      if (x === QUOTE) {
        this.pos = i;
        this.skipString();
        i = this.pos;
        continue;
      }
      if (x === OPEN_OBJECT || x === OPEN_ARRAY) depth++;
      else if (x === CLOSE_OBJECT || x === CLOSE_ARRAY) {
        if (--depth === 0) {
          this.pos = i + 1;
          return;
        }
      } else if (isSpace(x)) this.spaced = true;
      i++;
    }
    throw new SyntaxError('unterminated value');
  }

  /** Past white space and `byte`. */
  expect(byte: number): void {
    this.skipSpace();
    if (this.body[this.pos] !== byte) throw new SyntaxError(`expected ${String.fromCharCode(byte)}`);
    this.pos++;
  }

  /** Past white space and a `,` (true) or the `close` byte (false). */
  more(close: number): boolean {
    this.skipSpace();
    const next = this.body[this.pos++];
    if (next === COMMA) return true;
    if (next === close) return false;
    throw new SyntaxError('expected , or a closing bracket');
  }

  /** Past `open` and white space; false when the object or array is empty (and past it). */
  enter(open: number, close: number): boolean {
    this.expect(open);
    this.skipSpace();
    if (this.body[this.pos] !== close) return true;
    this.pos++;
    return false;
  }

  /** Past white space, the next member's name and its colon, at the start of its value. */
  member(): Name {
    this.skipSpace();
    const name = this.name();
    this.expect(COLON);
    this.skipSpace();
    return name;
  }
}

/**
 * The value span of each element of `records` in a body JSON.parse accepted; undefined when
 * the scanner cannot tell which `records` JSON.parse took (an escaped top-level name), or when
 * there is no `records` array.
 */
export function valueSpans(body: Buffer): ValueSpans | undefined {
  const cursor = new Cursor(body);
  let spans: ValueSpans | undefined;
  try {
    cursor.skipSpace();
    if (body[cursor.pos] !== OPEN_OBJECT) return undefined;
    if (!cursor.enter(OPEN_OBJECT, CLOSE_OBJECT)) return undefined;
    do {
      const name = cursor.member();
      if (name === Name.Escaped) return undefined;
      if (name === Name.Records && body[cursor.pos] === OPEN_ARRAY) spans = recordSpans(cursor);
      else {
        // A later `records` that is not an array replaces an earlier one, as in JSON.parse.
        if (name === Name.Records) spans = undefined;
        cursor.skipValue();
      }
    } while (cursor.more(CLOSE_OBJECT));
  } catch {
    return undefined;
  }
  return spans;
}

function recordSpans(cursor: Cursor): ValueSpans {
  const body = cursor.body;
  const spans: ValueSpans = [];
  if (!cursor.enter(OPEN_ARRAY, CLOSE_ARRAY)) return spans;
  do {
    cursor.skipSpace();
    if (body[cursor.pos] !== OPEN_OBJECT) {
      // Not an object: validation refuses it; nothing to store.
      cursor.skipValue();
      spans.push(undefined);
      continue;
    }
    let span: ValueSpan | undefined;
    let unsure = false;
    if (cursor.enter(OPEN_OBJECT, CLOSE_OBJECT)) {
      do {
        const name = cursor.member();
        if (name === Name.Escaped) unsure = true;
        if (name !== Name.Value) {
          cursor.skipValue();
          continue;
        }
        const start = cursor.pos;
        cursor.spaced = false;
        cursor.skipValue();
        // The last `value` wins, as in JSON.parse.
        span = { start, end: cursor.pos, spaced: cursor.spaced };
      } while (cursor.more(CLOSE_OBJECT));
    }
    spans.push(unsure ? undefined : span);
  } while (cursor.more(CLOSE_ARRAY));
  return spans;
}

/** The span's bytes without the white space outside strings (a view when there is none). */
export function compactValue(body: Buffer, span: ValueSpan): Buffer {
  return compactRange(body, span.start, span.end, span.spaced);
}

/** compactValue of the bytes from `start` to `end`, without a span object. */
export function compactRange(body: Buffer, start: number, end: number, spaced: boolean): Buffer {
  const text = body.subarray(start, end);
  if (!spaced) return text;
  const out = Buffer.allocUnsafe(text.length);
  let n = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      out[n++] = c;
      if (c === BACKSLASH) out[n++] = text[++i]!;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
      out[n++] = c;
    } else if (!isSpace(c)) out[n++] = c;
  }
  return out.subarray(0, n);
}
