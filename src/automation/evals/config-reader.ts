// Field-by-field reading of the parsed YAML with error collection: every problem is recorded
// with its field path (`evaluators[2].config.paths[0]`) and, when the field can be found in
// the document, its line — then reading goes on, so one PUT reports all problems at once.
import type { Document, LineCounter } from 'yaml';
import type { ConfigIssue } from './types.js';

export type FieldPath = readonly (string | number)[];

export function formatFieldPath(path: FieldPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? part : `.${part}`;
  }
  return out === '' ? '<root>' : out;
}

export type Mapping = Record<string, unknown>;

export function isMapping(v: unknown): v is Mapping {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

export class ConfigReader {
  readonly issues: ConfigIssue[] = [];

  constructor(
    private readonly doc: Document | null,
    private readonly lines: LineCounter | null,
  ) {}

  lineOf(path: FieldPath): number | undefined {
    if (this.doc === null || this.lines === null) return undefined;
    // Walk up to the nearest ancestor present in the document (an absent field has none itself).
    for (let n = path.length; n >= 0; n -= 1) {
      const node = this.doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node?.range !== undefined) return this.lines.linePos(node.range[0]).line;
    }
    return undefined;
  }

  error(path: FieldPath, message: string): void {
    const line = this.lineOf(path);
    this.issues.push(
      line === undefined
        ? { path: formatFieldPath(path), message }
        : { path: formatFieldPath(path), message, line },
    );
  }

  /** Reports fields outside `allowed`; true when there were none. */
  onlyKeys(path: FieldPath, m: Mapping, allowed: readonly string[]): boolean {
    let ok = true;
    for (const key of Object.keys(m)) {
      if (!allowed.includes(key)) {
        ok = false;
        const hint = allowed.length === 0 ? 'no fields are accepted here' : `accepted: ${allowed.join(', ')}`;
        this.error([...path, key], `unknown field "${key}" (${hint})`);
      }
    }
    return ok;
  }

  mapping(path: FieldPath, v: unknown): Mapping | undefined {
    if (isMapping(v)) return v;
    this.error(path, `must be a mapping, got ${describe(v)}`);
    return undefined;
  }

  string(
    path: FieldPath,
    v: unknown,
    opts: { minLength?: number; maxLength?: number } = {},
  ): string | undefined {
    if (typeof v !== 'string') {
      this.error(path, `must be a string, got ${describe(v)}`);
      return undefined;
    }
    if (opts.minLength !== undefined && v.length < opts.minLength) {
      this.error(
        path,
        opts.minLength === 1 ? 'must not be empty' : `must be at least ${opts.minLength} characters long`,
      );
      return undefined;
    }
    if (opts.maxLength !== undefined && v.length > opts.maxLength) {
      this.error(path, `must be at most ${opts.maxLength} characters long`);
      return undefined;
    }
    return v;
  }

  boolean(path: FieldPath, v: unknown, def: boolean): boolean {
    if (v === undefined) return def;
    if (typeof v === 'boolean') return v;
    this.error(path, `must be true or false, got ${describe(v)}`);
    return def;
  }

  number(
    path: FieldPath,
    v: unknown,
    opts: { min?: number; max?: number; integer?: boolean; what?: string },
  ): number | undefined {
    if (typeof v !== 'number' || !Number.isFinite(v)) {
      this.error(path, `must be a finite number, got ${describe(v)}`);
      return undefined;
    }
    if (opts.integer === true && !Number.isInteger(v)) {
      this.error(path, `must be a whole number, got ${v}`);
      return undefined;
    }
    const { min, max } = opts;
    if ((min !== undefined && v < min) || (max !== undefined && v > max)) {
      const range = max === undefined ? `≥ ${min}` : min === undefined ? `≤ ${max}` : `in [${min}, ${max}]`;
      this.error(path, `${opts.what ?? 'must be'} ${range}, got ${v}`);
      return undefined;
    }
    return v;
  }

  threshold(path: FieldPath, v: unknown): number | undefined {
    return this.number(path, v, { min: 0, max: 1, what: 'is a threshold and must lie' });
  }

  oneOf<T extends string>(path: FieldPath, v: unknown, values: readonly T[], def: T): T {
    if (v === undefined) return def;
    if (typeof v === 'string' && (values as readonly string[]).includes(v)) return v as T;
    this.error(path, `must be one of ${values.join(', ')}, got ${describe(v)}`);
    return def;
  }
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (v === undefined) return 'nothing';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  if (typeof v === 'string') return `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  return typeof v === 'number' || typeof v === 'boolean' ? `${typeof v} ${v}` : typeof v;
}
