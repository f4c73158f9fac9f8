// Wilson score interval for a binomial proportion (95% by default): unlike the normal
// approximation it stays inside [0,1] and behaves for small samples and p near 0 or 1.

export function wilson(
  successes: number,
  n: number,
  z = 1.959963984540054,
): { lower: number; upper: number } | null {
  if (n <= 0) return null;
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  return { lower: Math.max(0, centre - half), upper: Math.min(1, centre + half) };
}
