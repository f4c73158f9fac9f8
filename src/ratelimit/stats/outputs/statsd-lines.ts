// The statsd line protocol as the upstream service writes it, in both flavours:
// - plain statsd (its stats library): tags folded into the name as `.__key=value`, keys sorted;
// - tagged (DogStatsD): `|#key:value,…` after the value, name and tags optionally rewritten by
//   mogrifiers (regex → name template + tag templates with `$0`, `$1`… groups).
// A timer observed N times in a flush interval is sent as one line carrying the mean with a
// sample rate of 1/N, which statsd servers and the statsd exporter count as N observations.

import type { Mogrifier } from '../../settings/index.js';
import type { Sample } from './samples.js';

export type Tags = readonly (readonly [string, string])[];

/** What the upstream stats library does to tag values so they cannot break the name. */
function tagValue(value: string): string {
  return value.replace(/[.:|]/g, '_');
}

export function plainName(name: string, tags: Tags): string {
  if (tags.length === 0) return name;
  const sorted = [...tags].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return name + sorted.map(([k, v]) => `.__${k}=${tagValue(v)}`).join('');
}

const GROUP = /\$(\d+)/g;

/** Replaces `$n` with group n; an out-of-range reference stays as written (upstream behaviour). */
export function expandGroups(template: string, groups: RegExpExecArray): string {
  return template.replace(GROUP, (whole, digits: string) => {
    const i = Number(digits);
    return i < groups.length && groups[i] !== undefined ? groups[i] : whole;
  });
}

/** The first mogrifier whose pattern matches rewrites the name and adds its tags. */
export function mogrify(
  name: string,
  mogrifiers: readonly Mogrifier[],
): { name: string; tags: [string, string][] } {
  for (const m of mogrifiers) {
    const groups = m.pattern.exec(name);
    if (!groups) continue;
    return {
      name: expandGroups(m.metricName, groups),
      tags: m.tags.map(([k, v]) => [k, expandGroups(v, groups)]),
    };
  }
  return { name, tags: [] };
}

function formatNumber(n: number): string {
  // statsd servers parse plain decimals; avoid exponent notation for tiny rates.
  if (Number.isInteger(n)) return String(n);
  const fixed = n.toFixed(6).replace(/0+$/, '').replace(/\.$/, '');
  return fixed === '0' || fixed === '-0' ? n.toPrecision(6) : fixed;
}

/** The body of a line without tags: `name:value|c` or `name:mean|ms[|@rate]`. */
export function lineBody(name: string, sample: Sample): string {
  if (sample.kind === 'counter') return `${name}:${formatNumber(sample.value)}|c`;
  const mean = sample.sumMs / sample.count;
  const rate = sample.count > 1 ? `|@${formatNumber(1 / sample.count)}` : '';
  return `${name}:${formatNumber(mean)}|ms${rate}`;
}

export interface LineFormat {
  tagged: boolean;
  mogrifiers: readonly Mogrifier[];
  extraTags: Tags;
}

/** One full statsd line (no newline). */
export function statsdLine(sample: Sample, format: LineFormat): string {
  if (!format.tagged) return lineBody(plainName(sample.name, format.extraTags), sample);
  const { name, tags } = mogrify(sample.name, format.mogrifiers);
  const all = [...format.extraTags, ...tags];
  const body = lineBody(name, sample);
  return all.length === 0 ? body : `${body}|#${all.map(([k, v]) => `${k}:${v}`).join(',')}`;
}
