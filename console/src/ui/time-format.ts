// The console's one way of showing time (the formats; time.tsx has the elements): a point in time as a relative phrase ("3 min ago") with
// the full UTC timestamp (milliseconds) on hover and in the <time> element's datetime; event and
// step times as a clock with milliseconds, so steps a few ms apart do not look simultaneous;
// durations in human units ("2.4 s", "3 min 12 s", "21 d 1 h").

export type Instant = string | number | Date | null | undefined;

export function toDate(at: Instant): Date | undefined {
  if (at === null || at === undefined || at === '') return undefined;
  const d = at instanceof Date ? at : new Date(at);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

/** `2026-11-27 00:20:21.123 UTC`; the text itself when it is not a time; `—` when absent. */
export function fmtFull(at: Instant): string {
  const d = toDate(at);
  if (!d) return at === null || at === undefined || at === '' ? '—' : String(at);
  return `${d.toISOString().replace('T', ' ').replace('Z', '')} UTC`;
}

/** `00:20:21.123` (UTC), for events and steps of one run. */
export function fmtClock(at: Instant): string {
  const d = toDate(at);
  return d ? d.toISOString().slice(11, 23) : fmtFull(at);
}

const UNITS: [number, string][] = [
  [86_400_000, 'd'],
  [3_600_000, 'h'],
  [60_000, 'min'],
  [1000, 's'],
];

/** `850 ms`, `2.4 s`, `3 min 12 s`, `5 h 4 min`, `21 d 3 h`; `—` when absent. */
export function fmtDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '—';
  const abs = Math.abs(ms);
  const sign = ms < 0 ? '-' : '';
  if (abs < 1000) return `${sign}${Math.round(abs)} ms`;
  if (abs < 60_000) return `${sign}${(abs / 1000).toFixed(abs < 10_000 ? 2 : 1).replace(/\.?0+$/, '')} s`;
  const i = UNITS.findIndex(([size]) => abs >= size);
  const [big, bigName] = UNITS[i]!;
  const [small, smallName] = UNITS[i + 1]!;
  const whole = Math.floor(abs / big);
  const rest = Math.floor((abs - whole * big) / small);
  return `${sign}${whole} ${bigName}${rest > 0 ? ` ${rest} ${smallName}` : ''}`;
}

/** A protobuf JSON duration (`"1813113s"`, `"0.5s"`) in human units; the text itself otherwise. */
export function fmtProtoDuration(text: string | null | undefined): string {
  if (text === null || text === undefined) return '—';
  const m = /^(-?\d+(?:\.\d+)?)s$/.exec(text);
  return m ? fmtDuration(Number(m[1]) * 1000) : text;
}

/** `just now`, `42 s ago`, `3 min ago`, `in 2 h`, `5 d ago` relative to `now`. */
export function fmtRelative(at: Instant, now = Date.now()): string {
  const d = toDate(at);
  if (!d) return fmtFull(at);
  const diff = d.getTime() - now;
  const abs = Math.abs(diff);
  if (abs < 5000) return 'just now';
  const [size, name] = UNITS.find(([s]) => abs >= s) ?? UNITS[UNITS.length - 1]!;
  const n = Math.floor(abs / size);
  return diff < 0 ? `${n} ${name} ago` : `in ${n} ${name}`;
}
