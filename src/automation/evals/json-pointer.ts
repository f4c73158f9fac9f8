// RFC 6901 JSON Pointers: how evaluators address a part of the run output or expected output.

/** Why the pointer is invalid, or null when it is valid. */
export function pointerProblem(pointer: string): string | null {
  if (pointer === '') return null;
  if (!pointer.startsWith('/')) return 'a JSON Pointer is empty or starts with "/"';
  if (/~(?![01])/.test(pointer)) return 'in a JSON Pointer "~" must be followed by 0 or 1';
  return null;
}

export function pointerSegments(pointer: string): string[] {
  if (pointer === '') return [];
  return pointer
    .slice(1)
    .split('/')
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** The value at the pointer, or undefined when any segment is missing. */
export function resolvePointer(root: unknown, pointer: string): unknown {
  let current: unknown = root;
  for (const segment of pointerSegments(pointer)) {
    if (Array.isArray(current)) {
      // RFC 6901 array indexes are decimal without leading zeros; "-" (past the end) never resolves.
      if (!/^(0|[1-9][0-9]*)$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else if (current !== null && typeof current === 'object') {
      // Own properties only, so "/constructor" or "/__proto__" never reach the prototype.
      if (!Object.hasOwn(current, segment)) return undefined;
      current = (current as Record<string, unknown>)[segment];
    } else {
      return undefined;
    }
  }
  return current;
}
