// Durations in the Go style the rate limit spec uses (`10s`, `1m`, `1h30m`, `500ms`, `250us`, `100ns`),
// returned in milliseconds. A bare number is read as seconds, as the upstream service does for
// a few settings; `0` is zero.

const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

const PART = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d)/y;

export function parseDuration(text: string): number | undefined {
  const input = text.trim();
  if (input === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(input)) return Number(input) * 1000;
  let sign = 1;
  let pos = 0;
  if (input[0] === '-' || input[0] === '+') {
    sign = input[0] === '-' ? -1 : 1;
    pos = 1;
  }
  let total = 0;
  let parts = 0;
  while (pos < input.length) {
    PART.lastIndex = pos;
    const match = PART.exec(input);
    if (!match) return undefined;
    total += Number(match[1]) * (UNIT_MS[match[2]!] ?? NaN);
    pos = PART.lastIndex;
    parts++;
  }
  if (parts === 0 || !Number.isFinite(total) || sign < 0) return undefined;
  return total;
}
