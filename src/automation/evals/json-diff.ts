// Structural comparison of two JSON values with a list of differences. exact-diff scores by
// the share of compared leaves that match; equals only asks whether the list is empty.
import { formatLocation, type PathStep } from './field-path.js';

export type DiffKind = 'changed' | 'missing' | 'extra' | 'type';

export interface DiffEntry {
  readonly path: string;
  readonly kind: DiffKind;
  readonly expected?: unknown;
  readonly actual?: unknown;
}

export interface DiffOptions {
  /** Absolute tolerance for numbers. */
  readonly numericTolerance: number;
  /** When false, object fields in the output that the expected value lacks are differences. */
  readonly allowExtraFields: boolean;
  /** Entries kept in the report; counting goes on past it. */
  readonly maxEntries?: number;
}

export interface DiffReport {
  /** Leaf comparisons made (an extra or missing subtree counts once). */
  readonly compared: number;
  readonly differing: number;
  readonly entries: readonly DiffEntry[];
  readonly truncated: boolean;
}

type Loc = readonly (string | number)[];

function kindOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

/** Keeps reports small: a large value is replaced by the start of its JSON text. */
export function preview(value: unknown, limit = 200): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  if (text === undefined || text.length <= limit) return value;
  return `${text.slice(0, limit)}… (${text.length} chars)`;
}

class Collector {
  compared = 0;
  differing = 0;
  truncated = false;
  readonly entries: DiffEntry[] = [];

  constructor(readonly opts: DiffOptions) {}

  match(): void {
    this.compared += 1;
  }

  differ(loc: Loc, kind: DiffKind, actual: unknown, expected: unknown): void {
    this.compared += 1;
    this.differing += 1;
    if (this.entries.length >= (this.opts.maxEntries ?? 100)) {
      this.truncated = true;
      return;
    }
    const entry: { path: string; kind: DiffKind; expected?: unknown; actual?: unknown } = {
      path: formatLocation(loc),
      kind,
    };
    if (expected !== undefined) entry.expected = preview(expected);
    if (actual !== undefined) entry.actual = preview(actual);
    this.entries.push(entry);
  }

  report(): DiffReport {
    return {
      compared: this.compared,
      differing: this.differing,
      entries: this.entries,
      truncated: this.truncated,
    };
  }
}

function compare(c: Collector, actual: unknown, expected: unknown, loc: Loc): void {
  if (expected === undefined && actual === undefined) return c.match();
  if (expected === undefined) return c.differ(loc, 'extra', actual, undefined);
  if (actual === undefined) return c.differ(loc, 'missing', undefined, expected);
  const ka = kindOf(actual);
  const ke = kindOf(expected);
  if (ka !== ke) return c.differ(loc, 'type', actual, expected);
  if (ke === 'array') {
    const a = actual as unknown[];
    const e = expected as unknown[];
    if (a.length === 0 && e.length === 0) return c.match();
    const n = Math.max(a.length, e.length);
    for (let i = 0; i < n; i += 1) compare(c, a[i], e[i], [...loc, i]);
    return;
  }
  if (ke === 'object') {
    const a = actual as Record<string, unknown>;
    const e = expected as Record<string, unknown>;
    const expectedKeys = Object.keys(e);
    const extraKeys = Object.keys(a).filter((k) => !Object.hasOwn(e, k));
    if (expectedKeys.length === 0 && (extraKeys.length === 0 || c.opts.allowExtraFields)) return c.match();
    for (const key of expectedKeys)
      compare(c, Object.hasOwn(a, key) ? a[key] : undefined, e[key], [...loc, key]);
    if (!c.opts.allowExtraFields)
      for (const key of extraKeys) c.differ([...loc, key], 'extra', a[key], undefined);
    return;
  }
  if (ke === 'number') {
    const same = Math.abs((actual as number) - (expected as number)) <= c.opts.numericTolerance;
    return same ? c.match() : c.differ(loc, 'changed', actual, expected);
  }
  return actual === expected ? c.match() : c.differ(loc, 'changed', actual, expected);
}

function child(value: unknown, step: PathStep): unknown {
  if (step.kind === 'index') return Array.isArray(value) ? value[step.index] : undefined;
  if (step.kind !== 'field') return undefined;
  if (Array.isArray(value)) return /^(0|[1-9][0-9]*)$/.test(step.name) ? value[Number(step.name)] : undefined;
  if (value !== null && typeof value === 'object' && Object.hasOwn(value, step.name)) {
    return (value as Record<string, unknown>)[step.name];
  }
  return undefined;
}

function walk(
  c: Collector,
  steps: readonly PathStep[],
  at: number,
  actual: unknown,
  expected: unknown,
  loc: Loc,
): void {
  const step = steps[at];
  if (step === undefined) return compare(c, actual, expected, loc);
  if (step.kind === 'each') {
    if (!Array.isArray(expected) || !Array.isArray(actual)) return compare(c, actual, expected, loc);
    const n = Math.max(actual.length, expected.length);
    if (n === 0) return c.match();
    for (let i = 0; i < n; i += 1) walk(c, steps, at + 1, actual[i], expected[i], [...loc, i]);
    return;
  }
  const key =
    step.kind === 'index'
      ? step.index
      : Array.isArray(expected) && /^\d+$/.test(step.name)
        ? Number(step.name)
        : step.name;
  walk(c, steps, at + 1, child(actual, step), child(expected, step), [...loc, key]);
}

/** Diffs the whole values, or only the parts the given paths select. */
export function diffJson(
  actual: unknown,
  expected: unknown,
  opts: DiffOptions,
  paths: readonly (readonly PathStep[])[] = [],
): DiffReport {
  const c = new Collector(opts);
  if (paths.length === 0) compare(c, actual, expected, []);
  else for (const steps of paths) walk(c, steps, 0, actual, expected, []);
  return c.report();
}
