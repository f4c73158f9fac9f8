// The one way a dataset example is made or changed: the create and update routes, archive import
// and promotion of a run all check the example's values here. `input` is what a run of the
// example starts with, so it is a JSON object (absent or null means `{}`); `expected` is the
// output it is scored against, a JSON object or null (none).

import type { AutomationType } from '../registry/manifest.js';
import { ApiError, type Issue } from '../errors.js';
import type { ExampleFileRef, ExampleFolder, ExampleRecord } from './types.js';

const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

const kind = (v: unknown) => (Array.isArray(v) ? 'an array' : v === null ? 'null' : `a ${typeof v}`);

/**
 * Problems of an example's `input` / `expected`, each with its field path (`prefix.input`);
 * undefined values are not looked at (a PATCH that leaves them out keeps them).
 */
export function exampleValueIssues(values: { input?: unknown; expected?: unknown }, prefix = ''): Issue[] {
  const at = (name: string) => (prefix ? `${prefix}.${name}` : name);
  const issues: Issue[] = [];
  const { input, expected } = values;
  if (input !== undefined && input !== null && !isObject(input))
    issues.push({
      field: at('input'),
      message: `input must be a JSON object (or null for {}), got ${kind(input)}`,
      code: 'invalid_value',
    });
  if (expected !== undefined && expected !== null && !isObject(expected))
    issues.push({
      field: at('expected'),
      message: `expected must be a JSON object or null, got ${kind(expected)}`,
      code: 'invalid_value',
    });
  return issues;
}

/** Throws a 400 listing every problem of the values. */
export function checkExampleValues(values: { input?: unknown; expected?: unknown }, prefix = ''): void {
  const issues = exampleValueIssues(values, prefix);
  if (issues.length > 0) throw new ApiError(400, 'invalid_value', issues[0]!.message, issues);
}

export interface ExampleFields {
  id: string;
  name?: string | undefined;
  input?: unknown;
  expected?: unknown;
  metadata?: Record<string, unknown> | null | undefined;
  annotation?: string | null | undefined;
  rowOrder: number;
  overrides?: Record<string, unknown> | null | undefined;
  latestRunId?: string | null | undefined;
  createdAt?: string | undefined;
  updatedAt?: string | undefined;
  files?: Record<ExampleFolder, Record<string, ExampleFileRef>> | undefined;
}

/** A checked example record; `prefix` names where the values came from in error field paths. */
export function createExample(
  tenant: string,
  automation: { id: string; type: AutomationType },
  fields: ExampleFields,
  prefix = '',
): ExampleRecord {
  checkExampleValues(fields, prefix);
  const now = new Date().toISOString();
  return {
    id: fields.id,
    tenant,
    automationId: automation.id,
    automationType: automation.type,
    name: fields.name ?? fields.id,
    input: fields.input ?? {},
    expected: fields.expected ?? null,
    metadata: fields.metadata ?? null,
    annotation: fields.annotation ?? null,
    rowOrder: fields.rowOrder,
    overrides: fields.overrides ?? null,
    latestRunId: fields.latestRunId ?? null,
    createdAt: fields.createdAt ?? now,
    updatedAt: fields.updatedAt ?? now,
    files: fields.files ?? { input: {}, expected: {} },
  };
}
