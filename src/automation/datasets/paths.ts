// Slash-delimited file paths inside an example folder. Shared by uploads and archive import, so
// a path that could escape its folder (`..`, absolute, backslash, NUL) is refused everywhere.

import { invalid } from '../errors.js';

const SEGMENT = /^[^/\\\0]{1,255}$/;

export function checkRelativePath(path: string): string | undefined {
  if (path.length === 0 || path.length > 1024) return 'path must have 1 to 1024 characters';
  if (path.startsWith('/')) return 'path must be relative';
  if (/^[A-Za-z]:/.test(path)) return 'path must not name a drive';
  for (const seg of path.split('/')) {
    if (!SEGMENT.test(seg)) return `invalid path segment ${JSON.stringify(seg)}`;
    if (seg === '.' || seg === '..') return 'path must not contain . or .. segments';
  }
  return undefined;
}

export function cleanPath(path: string, field: string): string {
  const problem = checkRelativePath(path);
  if (problem) throw invalid(field, `${problem}: ${JSON.stringify(path)}`);
  return path;
}

export const EXAMPLE_ID = /^[A-Za-z0-9_-]{1,128}$/;

/** `$file` references in example JSON name a file as `input/<path>` or `expected/<path>`. */
export function collectFileRefs(value: unknown, at = '', out: { at: string; ref: string }[] = []) {
  if (Array.isArray(value)) value.forEach((v, i) => collectFileRefs(v, `${at}.${i}`, out));
  else if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    if (typeof obj['$file'] === 'string' && Object.keys(obj).length === 1)
      out.push({ at, ref: obj['$file'] });
    else for (const [k, v] of Object.entries(obj)) collectFileRefs(v, at ? `${at}.${k}` : k, out);
  }
  return out;
}

export function splitFileRef(ref: string): { folder: 'input' | 'expected'; path: string } | undefined {
  const m = /^(input|expected)\/(.+)$/.exec(ref);
  if (!m || checkRelativePath(m[2]!)) return undefined;
  return { folder: m[1] as 'input' | 'expected', path: m[2]! };
}
