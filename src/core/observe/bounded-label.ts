// A label whose values come from outside (topic names, consumer group names) kept to a bounded
// set: the first `limit` distinct values are kept as they are, every later one is reported as
// OTHER_LABEL. The set is never emptied, so a value keeps its label for the process's life.

export const OTHER_LABEL = '_other';

export function boundedLabel(limit: number): (value: string) => string {
  const kept = new Set<string>();
  return (value) => {
    if (kept.has(value)) return value;
    if (kept.size >= limit) return OTHER_LABEL;
    kept.add(value);
    return value;
  };
}
