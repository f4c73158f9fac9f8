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

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** A value's place in the body; `spaced` when white space outside strings must be dropped. */
export interface ValueSpan {
  readonly start: number;
  readonly end: number;
  readonly spaced: boolean;
}

/** Per element of the top-level `records` array: its value's span, or undefined to serialise. */
export type ValueSpans = (ValueSpan | undefined)[];

class Cursor {
  pos = 0;
  spaced = false;
  constructor(readonly body: Buffer) {}

  skipSpace(): void {
    const b = this.body;
    while (this.pos < b.length && isSpace(b[this.pos]!)) this.pos++;
  }

  /** Past the string that starts at pos. */
  skipString(): void {
    const b = this.body;
    let at = this.pos + 1;
    for (;;) {
      const quote = b.indexOf(QUOTE, at);
      if (quote < 0) throw new SyntaxError('unterminated string');
      let backslashes = 0;
      for (let j = quote - 1; b[j] === BACKSLASH; j--) backslashes++;
      at = quote + 1;
      if (backslashes % 2 === 0) break;
    }
    this.pos = at;
  }

  /** The member name at pos (a string) when written without escapes; undefined otherwise. */
  name(): string | undefined {
    const start = this.pos;
    this.skipString();
    const text = this.body.subarray(start + 1, this.pos - 1);
    return text.includes(BACKSLASH) ? undefined : text.toString('latin1');
  }

  /** Past one value of any kind; notes white space met outside strings. */
  skipValue(): void {
    const b = this.body;
    const c = b[this.pos]!;
    if (c === QUOTE) {
      this.skipString();
      return;
    }
    if (c !== OPEN_OBJECT && c !== OPEN_ARRAY) {
      while (this.pos < b.length) {
        const x = b[this.pos]!;
        if (x === COMMA || x === CLOSE_OBJECT || x === CLOSE_ARRAY || isSpace(x)) break;
        this.pos++;
      }
      return;
    }
    let depth = 0;
    while (this.pos < b.length) {
      const x = b[this.pos]!;
      if (x === QUOTE) {
        this.skipString();
        continue;
      }
      if (x === OPEN_OBJECT || x === OPEN_ARRAY) depth++;
      else if (x === CLOSE_OBJECT || x === CLOSE_ARRAY) {
        depth--;
        if (depth === 0) {
          this.pos++;
          return;
        }
      } else if (isSpace(x)) this.spaced = true;
      this.pos++;
    }
    throw new SyntaxError('unterminated value');
  }

  expect(byte: number): void {
    this.skipSpace();
    if (this.body[this.pos] !== byte) throw new SyntaxError(`expected ${String.fromCharCode(byte)}`);
    this.pos++;
  }

  /**
   * Walks the members of the object at pos, calling `member` with each name (undefined when
   * written with escapes) with pos at its value; `member` must leave pos past the value.
   */
  members(member: (name: string | undefined) => void): void {
    this.expect(OPEN_OBJECT);
    this.skipSpace();
    if (this.body[this.pos] === CLOSE_OBJECT) {
      this.pos++;
      return;
    }
    for (;;) {
      this.skipSpace();
      const name = this.name();
      this.expect(COLON);
      this.skipSpace();
      member(name);
      this.skipSpace();
      const next = this.body[this.pos++];
      if (next === CLOSE_OBJECT) return;
      if (next !== COMMA) throw new SyntaxError('expected , or }');
    }
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
  let unsure = false;
  try {
    cursor.skipSpace();
    if (body[cursor.pos] !== OPEN_OBJECT) return undefined;
    cursor.members((name) => {
      if (name === undefined) unsure = true;
      if (name !== 'records' || body[cursor.pos] !== OPEN_ARRAY) {
        // A later `records` that is not an array replaces an earlier one, as in JSON.parse.
        if (name === 'records') spans = undefined;
        cursor.skipValue();
        return;
      }
      spans = recordSpans(cursor);
    });
  } catch {
    return undefined;
  }
  return unsure ? undefined : spans;
}

function recordSpans(cursor: Cursor): ValueSpans {
  const body = cursor.body;
  const spans: ValueSpans = [];
  cursor.pos++; // [
  cursor.skipSpace();
  if (body[cursor.pos] === CLOSE_ARRAY) {
    cursor.pos++;
    return spans;
  }
  for (;;) {
    cursor.skipSpace();
    if (body[cursor.pos] !== OPEN_OBJECT) {
      // Not an object: validation refuses it; nothing to store.
      cursor.skipValue();
      spans.push(undefined);
    } else {
      let span: ValueSpan | undefined;
      let unsure = false;
      cursor.members((name) => {
        if (name === undefined) unsure = true;
        if (name !== 'value') {
          cursor.skipValue();
          return;
        }
        const start = cursor.pos;
        cursor.spaced = false;
        cursor.skipValue();
        // The last `value` wins, as in JSON.parse.
        span = { start, end: cursor.pos, spaced: cursor.spaced };
      });
      spans.push(unsure ? undefined : span);
    }
    cursor.skipSpace();
    const next = body[cursor.pos++];
    if (next === CLOSE_ARRAY) return spans;
    if (next !== COMMA) throw new SyntaxError('expected , or ]');
  }
}

/** The span's bytes without the white space outside strings (a view when there is none). */
export function compactValue(body: Buffer, span: ValueSpan): Buffer {
  const text = body.subarray(span.start, span.end);
  if (!span.spaced) return text;
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
