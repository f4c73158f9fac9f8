// A strict reader of the Prometheus text exposition format (version 0.0.4), for tests: every
// line is a comment (# HELP / # TYPE), blank, or one sample `name{labels} value`. Throws on a
// line that is none of these, so "parses as Prometheus text" is checked, not assumed.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)(\s+-?\d+)?$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(,|$)/y;

export function parseProm(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const m = /^# (HELP|TYPE) ([a-zA-Z_:][a-zA-Z0-9_:]*) ?(.*)$/.exec(line);
      if (!m) throw new Error(`bad comment line: ${line}`);
      if (m[1] === 'TYPE') {
        if (!['counter', 'gauge', 'histogram', 'summary', 'untyped'].includes(m[3]!))
          throw new Error(`bad type: ${line}`);
        types.set(m[2]!, m[3]!);
      }
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`bad sample line: ${line}`);
    const labels: Record<string, string> = {};
    const body = m[3] ?? '';
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < body.length) {
      const at = LABEL.lastIndex;
      const l = LABEL.exec(body);
      if (!l || l.index !== at) throw new Error(`bad labels: ${line}`);
      labels[l[1]!] = l[2]!;
    }
    // Prometheus reads values as Go's ParseFloat does: NaN and Inf in any letter case.
    const raw = m[4]!.toLowerCase();
    const value = /^[+]?inf$/.test(raw)
      ? Infinity
      : raw === '-inf'
        ? -Infinity
        : raw === 'nan'
          ? NaN
          : Number(raw);
    if (Number.isNaN(value) && raw !== 'nan') throw new Error(`bad value: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  return { samples, types };
}

/** The metric families present (a histogram's _bucket/_sum/_count count as its own name). */
export function familyNames(exposition: Exposition): Set<string> {
  return new Set(exposition.types.keys());
}

export function sampleValue(
  exposition: Exposition,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = exposition.samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return found?.value;
}
