// `triggers.cron` of a manifest: a cron expression, or an object naming the expression, its
// time zone, the input of each scheduled run and what a tick does while the previous scheduled
// run still runs (docs/automation.md, "Triggers").

import type { ManifestIssue } from '../../registry/manifest.js';
import { CronExpression } from './expression.js';

export type Overlap = 'skip' | 'allow';

export interface CronTrigger {
  schedule: string;
  /** IANA name; null: UTC. */
  timezone: string | null;
  /** The input of every scheduled run (checked against the input schema at sync). */
  input: Record<string, unknown>;
  overlap: Overlap;
}

const KEYS = new Set(['schedule', 'timezone', 'input', 'overlap']);

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** The trigger, or null (absent, or invalid: each problem is added to `issues`). */
export function parseCronTrigger(value: unknown, issues: ManifestIssue[]): CronTrigger | null {
  if (value === undefined || value === null) return null;
  const field = 'triggers.cron';
  const fail = (where: string, message: string) => {
    issues.push({ field: where, message });
    return null;
  };
  if (typeof value === 'string')
    return checked({ schedule: value, timezone: null, input: {}, overlap: 'skip' }, field, issues);
  if (!isObject(value))
    return fail(field, 'must be a cron expression or {"schedule", "timezone", "input", "overlap"}');
  const unknown = Object.keys(value).filter((k) => !KEYS.has(k));
  if (unknown.length > 0) return fail(`${field}.${unknown[0]}`, 'is not a field of a cron trigger');
  const { schedule, timezone, input, overlap } = value;
  if (typeof schedule !== 'string') return fail(`${field}.schedule`, 'must be a cron expression string');
  if (timezone !== undefined && timezone !== null && typeof timezone !== 'string')
    return fail(`${field}.timezone`, 'must be an IANA time zone name');
  if (input !== undefined && !isObject(input)) return fail(`${field}.input`, 'must be an object');
  if (overlap !== undefined && overlap !== 'skip' && overlap !== 'allow')
    return fail(`${field}.overlap`, 'must be "skip" or "allow"');
  return checked(
    {
      schedule,
      timezone: timezone ?? null,
      input: input ?? {},
      overlap: overlap ?? 'skip',
    },
    `${field}.schedule`,
    issues,
  );
}

function checked(t: CronTrigger, field: string, issues: ManifestIssue[]): CronTrigger | null {
  const parsed = CronExpression.parse(t.schedule, t.timezone);
  if (typeof parsed === 'string') {
    issues.push({
      field: parsed.startsWith('unknown time zone') ? 'triggers.cron.timezone' : field,
      message: parsed,
    });
    return null;
  }
  return t;
}

/** The expression of a trigger that parsed at sync (so it parses again). */
export function expressionOf(t: CronTrigger): CronExpression {
  const parsed = CronExpression.parse(t.schedule, t.timezone);
  if (typeof parsed === 'string') throw new Error(`cron trigger no longer parses: ${parsed}`);
  return parsed;
}
