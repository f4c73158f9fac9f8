// JSON values of every kind for the produce body scanner tests (value-spans, produce-scan).

/** Deterministic values of every JSON kind, with strings that need escapes. */
export function valueOf(seed: number, depth = 0): unknown {
  const kind = seed % (depth > 2 ? 5 : 7);
  const next = (k: number) => (seed * 1103515245 + 12345 + k) >>> 8;
  switch (kind) {
    case 0:
      return null;
    case 1:
      return seed % 2 === 0;
    case 2:
      return ((seed % 2000) - 1000) / 8;
    case 3:
      return ['', 'plain', 'quote " and \\ backslash', 'line\nbreak\ttab', 'é ✓ 😀', '\u2028', '}]{['][
        seed % 7
      ];
    case 4:
      return seed;
    case 5:
      return Array.from({ length: seed % 4 }, (_, k) => valueOf(next(k), depth + 1));
    default:
      return Object.fromEntries(
        Array.from({ length: seed % 4 }, (_, k) => [
          `k${k}${k === 1 ? ' "q"' : ''}`,
          valueOf(next(k), depth + 1),
        ]),
      );
  }
}

/** JSON text with white space put between every token (outside strings). */
export function spaced(value: unknown): string {
  const text = JSON.stringify(value, null, 2);
  return text.replace(/([,:[{])/g, '$1 \t').replace(/([\]}])/g, '\n$1');
}
