// Page logic of the run views that needs no browser: the one-line preview of a run's input or
// output in the run list, the usage summary of a row, and the geometry of the step waterfall
// (each step's start and length on the run's time axis, from GET /runs/{id}/steps), and the
// query of the review queue.

import type { RunUsage } from './wire.js';

/** Compact JSON on one line, cut to `max` characters with an ellipsis; `—` when absent. */
export function previewJson(value: unknown, max = 60): string {
  if (value === undefined || value === null) return '—';
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '—');
  } catch {
    // A value JSON cannot write (a cycle, a BigInt) is not something the API sends.
    text = '(not JSON)';
  }
  text = text.replace(/\s+/g, ' ');
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Input plus output tokens, or null when the run recorded no token counts. */
export function totalTokens(usage: RunUsage | null | undefined): number | null {
  if (!usage) return null;
  const { input, output } = usage.tokens;
  if (input === null && output === null) return null;
  return (input ?? 0) + (output ?? 0);
}

export interface StepLike {
  name?: unknown;
  status?: unknown;
  startedAt?: unknown;
  completedAt?: unknown;
  durationMs?: unknown;
}

export interface WaterfallBar {
  name: string;
  status: string;
  /** Milliseconds from the axis origin to the step's start. */
  offsetMs: number;
  durationMs: number;
  /** Start and length as fractions of the axis (0–1). */
  x: number;
  width: number;
}

export interface Waterfall {
  /** The axis length in milliseconds (at least 1, so a run of instant steps still draws). */
  totalMs: number;
  bars: WaterfallBar[];
  /** Steps without a readable start time (listed, not drawn). */
  undated: string[];
}

const ms = (v: unknown): number | undefined => {
  if (typeof v !== 'string' && typeof v !== 'number') return undefined;
  const t = new Date(v).getTime();
  return Number.isNaN(t) ? undefined : t;
};

/**
 * Bars of the steps on one axis. The origin is the run's start (or the first step's start when
 * that is earlier or the run has none); the axis ends at the run's end or the last step's end,
 * whichever is later. A step's length is its completedAt − startedAt, else its durationMs.
 */
export function waterfall(
  steps: StepLike[],
  runStartedAt?: string | null,
  runCompletedAt?: string | null,
): Waterfall {
  const dated: { name: string; status: string; start: number; end: number }[] = [];
  const undated: string[] = [];
  steps.forEach((s, i) => {
    const name = typeof s.name === 'string' ? s.name : `step ${i}`;
    const start = ms(s.startedAt);
    if (start === undefined) {
      undated.push(name);
      return;
    }
    const end = ms(s.completedAt) ?? start + (typeof s.durationMs === 'number' ? s.durationMs : 0);
    dated.push({
      name,
      status: typeof s.status === 'string' ? s.status : 'unknown',
      start,
      end: Math.max(start, end),
    });
  });
  const starts = dated.map((d) => d.start);
  const ends = dated.map((d) => d.end);
  const runStart = ms(runStartedAt ?? undefined);
  const runEnd = ms(runCompletedAt ?? undefined);
  if (runStart !== undefined) starts.push(runStart);
  if (runEnd !== undefined) ends.push(runEnd);
  const origin = starts.length ? Math.min(...starts) : 0;
  const last = ends.length ? Math.max(...ends) : origin;
  const totalMs = Math.max(1, last - origin);
  return {
    totalMs,
    undated,
    bars: dated.map((d) => ({
      name: d.name,
      status: d.status,
      offsetMs: d.start - origin,
      durationMs: d.end - d.start,
      x: (d.start - origin) / totalMs,
      width: (d.end - d.start) / totalMs,
    })),
  };
}

/** The GET /runs query of one page of the automation's unreviewed finished runs, oldest first. */
export function queueQuery(automationId: string, sampleRate: string, cursor: string | null): string {
  const q = new URLSearchParams({
    source: automationId,
    status: 'completed,failed',
    noReview: 'true',
    experiments: 'false',
    order: 'asc',
    limit: '25',
  });
  if (sampleRate !== '1') q.set('sampleRate', sampleRate);
  if (cursor) q.set('cursor', cursor);
  return q.toString();
}
