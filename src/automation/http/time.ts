// Time filters accept an ISO date or time, epoch milliseconds, `now`, or a relative time such as
// `-7d`, `now-30d`, `24h` (all relative forms mean "that long ago").

import { parseDuration } from '../../core/settings/index.js';

export function parseTime(text: string, now = Date.now()): number | undefined {
  const t = text.trim();
  if (t === '') return undefined;
  if (t === 'now') return now;
  if (/^\d{10,}$/.test(t)) return Number(t);
  const rel = /^(?:now)?-?(\d+(?:\.\d+)?)\s*([smhdw]|ms)$/i.exec(t.replace(/^now\s*-\s*/i, '-'));
  if (rel) {
    const unit = rel[2]!.toLowerCase();
    const n = Number(rel[1]);
    const ms =
      unit === 'd' ? n * 86_400_000 : unit === 'w' ? n * 7 * 86_400_000 : parseDuration(`${rel[1]}${unit}`);
    if (ms !== undefined) return now - ms;
  }
  if (/^\d{4}-\d{2}-\d{2}/.test(t)) {
    const ms = Date.parse(t);
    if (Number.isFinite(ms)) return ms;
  }
  return undefined;
}

/** An end bound given as a bare date covers the whole day (inclusive). */
export function parseEndTime(text: string, now = Date.now()): number | undefined {
  const ms = parseTime(text, now);
  if (ms !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(text.trim())) return ms + 86_400_000 - 1;
  return ms;
}
