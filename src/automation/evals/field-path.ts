// The path grammar of exact-diff `paths` (Eigenpal's dot form): `invoice.total`,
// `lines[].sku` (every element), `lines[0].sku` (one element). A path that starts with "/"
// is read as a JSON Pointer instead, so both notations work in one list.
import { pointerProblem, pointerSegments } from './json-pointer.js';

export type PathStep =
  | { readonly kind: 'field'; readonly name: string }
  | { readonly kind: 'each' }
  | { readonly kind: 'index'; readonly index: number };

export function parseFieldPath(path: string): { steps: PathStep[] } | { error: string } {
  if (path.startsWith('/')) {
    const problem = pointerProblem(path);
    if (problem !== null) return { error: problem };
    return { steps: pointerSegments(path).map((name) => ({ kind: 'field', name })) };
  }
  if (path === '') return { error: 'a path is not empty' };
  const steps: PathStep[] = [];
  let i = 0;
  let expectName = true;
  while (i < path.length) {
    const ch = path[i];
    if (ch === '[') {
      const close = path.indexOf(']', i);
      if (close < 0) return { error: `unclosed "[" at offset ${i}` };
      const inner = path.slice(i + 1, close);
      if (inner === '') steps.push({ kind: 'each' });
      else if (/^(0|[1-9][0-9]{0,8})$/.test(inner)) steps.push({ kind: 'index', index: Number(inner) });
      else return { error: `"[${inner}]" is neither "[]" nor an array index` };
      i = close + 1;
      expectName = false;
    } else if (ch === '.') {
      if (expectName) return { error: `empty field name at offset ${i}` };
      i += 1;
      expectName = true;
      if (i === path.length) return { error: 'the path ends with "."' };
    } else {
      if (!expectName) return { error: `expected "." or "[" at offset ${i}` };
      let end = i;
      while (end < path.length && path[end] !== '.' && path[end] !== '[') end += 1;
      const name = path.slice(i, end);
      if (name.includes(']')) return { error: `unexpected "]" in "${name}"` };
      steps.push({ kind: 'field', name });
      i = end;
      expectName = false;
    }
  }
  return { steps };
}

/** Renders a concrete location for diff reports, e.g. `lines[1].sku`. */
export function formatLocation(parts: readonly (string | number)[]): string {
  let out = '';
  for (const part of parts) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(part)) out += out === '' ? part : `.${part}`;
    else out += `[${JSON.stringify(part)}]`;
  }
  return out === '' ? '<root>' : out;
}
