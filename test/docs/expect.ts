// Compares a shell block's standard output with the expected output a page shows.
//
// JSON (an expected block fenced as ```json): the output is read as one or more JSON values
// (several curl answers in a row, with or without newlines between them) and compared
// structurally with the expected values:
// - the string "..." (or "…") matches any value; so does a string written as "<something>";
// - inside any other expected string, "..." (or "…") or "<something>" matches any run of
//   characters ("exec_...", "2026-...Z", "<n>s");
// - an array whose last expected element is "..." matches any further elements;
// - an object with the key "..." may have keys the expected object does not list; otherwise
//   the keys must be the same.
// Text (any other fence): compared line by line after trimming trailing blanks; "...", "…" or
// "<something>" matches any run of characters, within a line or across lines.

const ANY = new Set(['...', '…']);

/** The JSON values of `text` in order: concatenated, separated by white space or not. */
export function jsonValues(text: string): unknown[] {
  const values: unknown[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    while (i < n && /\s/.test(text[i] as string)) i++;
    if (i >= n) break;
    const start = i;
    const first = text[i] as string;
    if (first === '{' || first === '[') {
      let depth = 0;
      let inString = false;
      for (; i < n; i++) {
        const c = text[i] as string;
        if (inString) {
          if (c === '\\') i++;
          else if (c === '"') inString = false;
        } else if (c === '"') inString = true;
        else if (c === '{' || c === '[') depth++;
        else if (c === '}' || c === ']') {
          depth--;
          if (depth === 0) {
            i++;
            break;
          }
        }
      }
    } else if (first === '"') {
      for (i++; i < n; i++) {
        const c = text[i] as string;
        if (c === '\\') i++;
        else if (c === '"') {
          i++;
          break;
        }
      }
    } else {
      while (i < n && !/[\s{["]/.test(text[i] as string)) i++;
    }
    const piece = text.slice(start, i);
    try {
      values.push(JSON.parse(piece));
    } catch {
      throw new Error(`not JSON at character ${start}: ${piece.slice(0, 120)}`);
    }
  }
  return values;
}

/** Marks a part of an expected string that matches any run of characters. */
const HOLE = /\.\.\.|…|<[^<>\s][^<>]*>/;

function wildcard(pattern: string): RegExp {
  const parts = pattern
    .split(new RegExp(HOLE.source, 'g'))
    .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[\\s\\S]*?')}$`);
}

function isAny(expected: unknown): boolean {
  return typeof expected === 'string' && (ANY.has(expected) || /^<[^<>]+>$/.test(expected));
}

/** The first difference between `actual` and the `expected` pattern, or undefined when they match. */
export function jsonDifference(expected: unknown, actual: unknown, path = '$'): string | undefined {
  if (isAny(expected)) return undefined;
  const show = (v: unknown) => JSON.stringify(v);
  if (typeof expected === 'string') {
    if (typeof actual !== 'string') return `${path}: expected ${show(expected)}, got ${show(actual)}`;
    if (HOLE.test(expected) ? wildcard(expected).test(actual) : expected === actual) return undefined;
    return `${path}: expected ${show(expected)}, got ${show(actual)}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array, got ${show(actual)}`;
    const open = expected.length > 0 && ANY.has(expected[expected.length - 1] as string);
    const items = open ? expected.slice(0, -1) : expected;
    if (open ? actual.length < items.length : actual.length !== items.length) {
      return `${path}: expected ${open ? 'at least ' : ''}${items.length} element(s), got ${actual.length}: ${show(actual)}`;
    }
    for (let k = 0; k < items.length; k++) {
      const d = jsonDifference(items[k], actual[k], `${path}[${k}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
      return `${path}: expected an object, got ${show(actual)}`;
    }
    const exp = expected as Record<string, unknown>;
    const act = actual as Record<string, unknown>;
    const open = Object.keys(exp).some((k) => ANY.has(k));
    for (const key of Object.keys(exp)) {
      if (ANY.has(key)) continue;
      if (!(key in act)) return `${path}: missing key ${show(key)} in ${show(actual)}`;
      const d = jsonDifference(exp[key], act[key], `${path}.${key}`);
      if (d) return d;
    }
    if (!open) {
      const extra = Object.keys(act).filter((k) => !(k in exp));
      if (extra.length > 0)
        return `${path}: unexpected key(s) ${extra.map(show).join(', ')} in ${show(actual)}`;
    }
    return undefined;
  }
  return Object.is(expected, actual) ? undefined : `${path}: expected ${show(expected)}, got ${show(actual)}`;
}

/** Why `actual` (a block's standard output) does not match the expected block, or undefined. */
export function outputDifference(lang: string, expectedText: string, actual: string): string | undefined {
  if (lang === 'json') {
    const expected = jsonValues(expectedText);
    let got: unknown[];
    try {
      got = jsonValues(actual);
    } catch (error) {
      return `the output is not JSON (${(error as Error).message})`;
    }
    if (got.length !== expected.length) {
      return `expected ${expected.length} JSON value(s), got ${got.length}: ${JSON.stringify(got)}`;
    }
    for (let k = 0; k < expected.length; k++) {
      const d = jsonDifference(expected[k], got[k], expected.length > 1 ? `value ${k + 1}` : '$');
      if (d) return d;
    }
    return undefined;
  }
  const norm = (s: string) =>
    s
      .split('\n')
      .map((l) => l.trimEnd())
      .join('\n')
      .trim();
  return wildcard(norm(expectedText)).test(norm(actual))
    ? undefined
    : 'the output differs from the expected text';
}
