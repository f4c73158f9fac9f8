// The automation service's one JSON Schema compiler (ajv): manifests' input and output schemas,
// run input and output validation and json-schema evaluators all compile here, so a schema means
// the same thing wherever a tenant uses it. The only module that imports ajv (eslint.config.js).
//
// Dialect, from the schema's `$schema`: draft 2020-12 when it names 2020-12 or names nothing,
// 2019-09 when it names 2019-09, draft-07 when it names draft-07. A schema without `$schema` that
// uses the draft-07 array form of `items` (2020-12 spells it `prefixItems` and refuses the array)
// is read as draft-07, so tuple schemas written for draft-07 keep working. Reasons in
// docs/automation.md ("JSON Schema").

import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

export type { ErrorObject, ValidateFunction };
export type JsonSchema = boolean | Record<string, unknown>;

type AnyAjv = Ajv | Ajv2019 | Ajv2020;

/** Entries the shared compiler keeps; tenants write schemas, so the cache must not grow with them. */
export const DEFAULT_MAX_ENTRIES = 256;

export class SchemaCompiler {
  // strict: false — user schemas often carry annotations (examples, x-*) ajv's strict mode rejects.
  private readonly d2020 = new Ajv2020({ allErrors: true, strict: false });
  private readonly d2019 = new Ajv2019({ allErrors: true, strict: false });
  private readonly draft7 = new Ajv({ allErrors: true, strict: false });
  // ajv compiles to generated code (milliseconds per schema); a Map keeps insertion order, so
  // re-inserting on a hit makes the first key the least recently used.
  private readonly cache = new Map<string, ValidateFunction>();
  readonly maxEntries: number;

  constructor(options: { maxEntries?: number } = {}) {
    this.maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_MAX_ENTRIES);
  }

  /** The validator for this schema; the same schema text twice gives the same function. Throws
   *  when the schema does not compile. */
  compile(schema: JsonSchema): ValidateFunction {
    const key = JSON.stringify(schema);
    const hit = this.cache.get(key);
    if (hit !== undefined) {
      this.cache.delete(key);
      this.cache.set(key, hit);
      return hit;
    }
    const validate = this.compileUncached(schema);
    this.cache.set(key, validate);
    if (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
    return validate;
  }

  /** Why the schema does not compile, or null. */
  problem(schema: JsonSchema): string | null {
    try {
      this.compile(schema);
      return null;
    } catch (err) {
      return err instanceof Error ? err.message : String(err);
    }
  }

  /** Compiled validators held now (at most maxEntries). */
  size(): number {
    return this.cache.size;
  }

  private compileUncached(schema: JsonSchema): ValidateFunction {
    const dialect =
      schema !== null && typeof schema === 'object' ? (schema as { $schema?: unknown }).$schema : undefined;
    if (typeof dialect === 'string') {
      if (dialect.includes('2019-09')) return compileWith(this.d2019, schema);
      if (dialect.includes('draft-07')) return compileWith(this.draft7, schema);
      return compileWith(this.d2020, schema);
    }
    return compileWith(usesArrayItems(schema) ? this.draft7 : this.d2020, schema);
  }
}

/** True when an `items` key anywhere in the schema holds an array (draft-07's tuple form). */
function usesArrayItems(schema: unknown): boolean {
  const stack: unknown[] = [schema];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (Array.isArray(node)) {
      stack.push(...(node as unknown[]));
      continue;
    }
    for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
      if (key === 'items' && Array.isArray(child)) return true;
      stack.push(child);
    }
  }
  return false;
}

/** Compiles without keeping the schema in ajv's registry, so schemas replaced over time do not
 *  accumulate there and two schemas with the same `$id` do not collide. */
function compileWith(ajv: AnyAjv, schema: JsonSchema): ValidateFunction {
  try {
    return ajv.compile(schema);
  } finally {
    // Boolean schemas are never registered.
    if (typeof schema !== 'boolean') ajv.removeSchema(schema);
  }
}

/** The compiler of this thread (the service thread, or an evaluator worker). */
export const schemaCompiler = new SchemaCompiler();

export const compileSchema = (schema: JsonSchema): ValidateFunction => schemaCompiler.compile(schema);

export const schemaProblem = (schema: JsonSchema): string | null => schemaCompiler.problem(schema);
