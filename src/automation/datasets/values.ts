// The checks every dataset example's values pass, wherever they come from (the create and update
// routes, archive import, promotion of a run). `input` is what a run of the example starts with,
// so it is a JSON object (absent or null means `{}`); `expected` is the output it is scored
// against, a JSON object or null (none). `$file` references inside either name a file of the
// example as `input/<path>` or `expected/<path>`. Pure functions: the archive worker uses them too.

import type { Issue } from '../errors.js';
import { ApiError } from '../errors.js';
import { collectFileRefs, splitFileRef } from './paths.js';

export const MAX_NAME_CHARS = 256;
export const MAX_ANNOTATION_CHARS = 65536;

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const kind = (v: unknown) => (Array.isArray(v) ? 'an array' : v === null ? 'null' : `a ${typeof v}`);

export interface ExampleValues {
  name?: unknown;
  input?: unknown;
  expected?: unknown;
  annotation?: unknown;
}

/**
 * Problems of an example's values, each with its field path (`prefix.input`); undefined values
 * are not looked at (an update that leaves them out keeps them).
 */
export function exampleValueIssues(values: ExampleValues, prefix = ''): Issue[] {
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const issues: Issue[] = [];
  const issue = (field: string, message: string) =>
    issues.push({ field: at(field), message, code: 'invalid_value', severity: 'error' });
  const { name, input, expected, annotation } = values;
  if (typeof name === 'string' && (name.length === 0 || name.length > MAX_NAME_CHARS))
    issue('name', `name must have 1 to ${MAX_NAME_CHARS} characters`);
  if (typeof annotation === 'string' && annotation.length > MAX_ANNOTATION_CHARS)
    issue('annotation', `annotation must have at most ${MAX_ANNOTATION_CHARS} characters`);
  if (input !== undefined && input !== null && !isObject(input))
    issue('input', `input must be a JSON object (or null for {}), got ${kind(input)}`);
  if (expected !== undefined && expected !== null && !isObject(expected))
    issue('expected', `expected must be a JSON object or null, got ${kind(expected)}`);
  for (const key of ['input', 'expected'] as const) {
    if (values[key] === undefined) continue;
    for (const { at: where, ref } of collectFileRefs(values[key]))
      if (!splitFileRef(ref))
        issue(
          where ? `${key}.${where}` : key,
          `$file must name a file as input/<path> or expected/<path>, got ${JSON.stringify(ref)}`,
        );
  }
  return issues;
}

/** Throws a 400 listing every problem of the values. */
export function checkExampleValues(values: ExampleValues, prefix = ''): void {
  const issues = exampleValueIssues(values, prefix);
  if (issues.length > 0) throw new ApiError(400, 'invalid_value', issues[0]!.message, issues);
}
