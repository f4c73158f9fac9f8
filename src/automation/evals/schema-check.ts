// Validation of a value against a JSON Schema that a tenant wrote (json-schema evaluators,
// automation input and output schemas). ajv turns `pattern` and `patternProperties` into
// ordinary JavaScript RegExps, which backtrack: `^(a+)+$` against thirty a's and a "!" runs
// for minutes. A schema that holds either keyword is therefore validated in the evaluator
// worker pool under a time limit; one without them cannot run a user regex and is validated
// inline, which costs no thread hop.
import type { ScriptPool } from './sandbox.js';
import {
  compileSchema,
  type ErrorObject,
  type JsonSchema,
  type ValidateFunction,
} from '../schemas/compiler.js';

export type { JsonSchema } from '../schemas/compiler.js';

export interface SchemaIssue {
  /** JSON Pointer of the failing value ('' = the value itself). */
  readonly instancePath: string;
  readonly keyword: string;
  readonly message: string;
  /** For `required`: the property that is missing. */
  readonly missingProperty?: string;
}

export type SchemaOutcome =
  | { readonly ok: true; readonly valid: boolean; readonly issues: readonly SchemaIssue[] }
  | { readonly ok: false; readonly message: string };

/** A response listing more failures than this is no more useful, only bigger. */
export const MAX_SCHEMA_ISSUES = 100;

const PATTERN_KEYWORDS = new Set(['pattern', 'patternProperties']);

/** True when a `pattern`/`patternProperties` key appears anywhere in the schema. A property
 *  that merely happens to be named "pattern" counts too: a false positive only costs a hop. */
export function usesPatterns(schema: unknown): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
      if (PATTERN_KEYWORDS.has(key)) return true;
      stack.push(child);
    }
  }
  return false;
}

export function issuesOf(errors: readonly ErrorObject[] | null | undefined): SchemaIssue[] {
  return (errors ?? []).slice(0, MAX_SCHEMA_ISSUES).map((e) => {
    const missing =
      e.keyword === 'required' ? (e.params as { missingProperty?: unknown }).missingProperty : undefined;
    return {
      instancePath: e.instancePath,
      keyword: e.keyword,
      message: e.message ?? e.keyword,
      ...(typeof missing === 'string' ? { missingProperty: missing } : {}),
    };
  });
}

function compiled(schema: JsonSchema): ValidateFunction | string {
  try {
    return compileSchema(schema);
  } catch (err) {
    return `the schema does not compile: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** Validates inline; only for schemas without patterns, or trusted ones. */
export function checkSchemaInline(schema: JsonSchema, value: unknown): SchemaOutcome {
  const validate = compiled(schema);
  if (typeof validate === 'string') return { ok: false, message: validate };
  const valid = validate(value);
  return { ok: true, valid, issues: valid ? [] : issuesOf(validate.errors) };
}

/** With a pool, a schema with patterns is validated in a worker under the pool's pattern time
 *  limit; without one everything runs inline (library use with trusted schemas). Never throws. */
export async function checkSchema(
  schema: JsonSchema,
  value: unknown,
  pool: ScriptPool | undefined,
  signal?: AbortSignal,
): Promise<SchemaOutcome> {
  if (pool === undefined || !usesPatterns(schema)) return checkSchemaInline(schema, value);
  const outcome = await pool.validateSchema({ schema, value, ...(signal === undefined ? {} : { signal }) });
  if (!outcome.ok) return { ok: false, message: outcome.message };
  return outcome;
}
