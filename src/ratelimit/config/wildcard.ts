// `*` in a configured value matches zero or more characters, any number of times, segments in
// order. Matching runs on the composite `key_value` text, as the upstream service does, so a
// pattern can never match a different key.

export type WildcardMatcher = (candidate: string) => boolean;

export function compileWildcard(pattern: string): WildcardMatcher {
  const segments = pattern.split('*');
  if (segments.length === 1) return (candidate) => candidate === pattern;
  const first = segments[0]!;
  const last = segments[segments.length - 1]!;
  const middle = segments.slice(1, -1).filter((s) => s !== '');
  const minLength = segments.reduce((n, s) => n + s.length, 0);
  if (middle.length === 0) {
    return (candidate) =>
      candidate.length >= minLength && candidate.startsWith(first) && candidate.endsWith(last);
  }
  return (candidate) => {
    if (candidate.length < minLength || !candidate.startsWith(first) || !candidate.endsWith(last))
      return false;
    let pos = first.length;
    const end = candidate.length - last.length;
    for (const segment of middle) {
      const at = candidate.indexOf(segment, pos);
      if (at < 0 || at + segment.length > end) return false;
      pos = at + segment.length;
    }
    return true;
  };
}
