// Edit distance for the `similar` evaluator, over code points so an emoji or an accented
// letter costs one edit, not two.

/** Above this many DP cells the comparison is refused rather than stalling a thread. */
export const MAX_LEVENSHTEIN_CELLS = 20_000_000;

export function levenshtein(a: readonly number[], b: readonly number[]): number {
  // Strip the common prefix and suffix first: typical near-matches shrink to a tiny core.
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA -= 1;
    endB -= 1;
  }
  const n = endA - start;
  const m = endB - start;
  if (n === 0) return m;
  if (m === 0) return n;
  if (n * m > MAX_LEVENSHTEIN_CELLS) {
    throw new RangeError(
      `strings too long to compare (${n}×${m} edit-distance cells, limit ${MAX_LEVENSHTEIN_CELLS})`,
    );
  }
  let prev = new Uint32Array(m + 1);
  let cur = new Uint32Array(m + 1);
  for (let j = 0; j <= m; j += 1) prev[j] = j;
  for (let i = 1; i <= n; i += 1) {
    cur[0] = i;
    const ca = a[start + i - 1];
    for (let j = 1; j <= m; j += 1) {
      const cost = ca === b[start + j - 1] ? 0 : 1;
      const del = prev[j]! + 1;
      const ins = cur[j - 1]! + 1;
      const sub = prev[j - 1]! + cost;
      cur[j] = del < ins ? (del < sub ? del : sub) : ins < sub ? ins : sub;
    }
    [prev, cur] = [cur, prev];
  }
  return prev[m]!;
}

/** 1 − distance / longer length; two empty strings are identical (1). */
export function similarity(a: string, b: string): { similarity: number; distance: number } {
  const ca = Array.from(a, (ch) => ch.codePointAt(0)!);
  const cb = Array.from(b, (ch) => ch.codePointAt(0)!);
  const longer = Math.max(ca.length, cb.length);
  if (longer === 0) return { similarity: 1, distance: 0 };
  const distance = levenshtein(ca, cb);
  return { similarity: 1 - distance / longer, distance };
}
