// JSON Schema compilation for the json-schema evaluator (ajv). The dialect follows the
// schema's `$schema`: 2020-12 and 2019-09 when named, draft-07 otherwise.
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';

type AnyAjv = Ajv | Ajv2019 | Ajv2020;
let instances: { draft7: Ajv; d2019: Ajv2019; d2020: Ajv2020 } | undefined;

function ajvFor(schema: unknown): AnyAjv {
  // strict: false — user schemas often carry annotations (examples, x-*) ajv's strict mode rejects.
  instances ??= {
    draft7: new Ajv({ allErrors: true, strict: false }),
    d2019: new Ajv2019({ allErrors: true, strict: false }),
    d2020: new Ajv2020({ allErrors: true, strict: false }),
  };
  const dialect =
    schema !== null && typeof schema === 'object' ? (schema as { $schema?: unknown }).$schema : undefined;
  if (typeof dialect === 'string' && dialect.includes('2020-12')) return instances.d2020;
  if (typeof dialect === 'string' && dialect.includes('2019-09')) return instances.d2019;
  return instances.draft7;
}

/** Compiles without keeping the schema in ajv's registry, so configs replaced over time do
 *  not accumulate and two schemas with the same `$id` do not collide. */
export function compileSchema(schema: boolean | Record<string, unknown>): ValidateFunction {
  const ajv = ajvFor(schema);
  try {
    return ajv.compile(schema);
  } finally {
    // Boolean schemas are never registered.
    if (typeof schema !== 'boolean') ajv.removeSchema(schema);
  }
}

// ajv compiles to generated code (milliseconds per schema); validating a config on PUT and
// scoring its runs afterwards should pay that once. Bounded, least recently used out first.
const CACHE_SIZE = 64;
const cache = new Map<string, ValidateFunction>();

export function cachedCompile(schema: boolean | Record<string, unknown>): ValidateFunction {
  const key = JSON.stringify(schema);
  const hit = cache.get(key);
  if (hit !== undefined) {
    cache.delete(key);
    cache.set(key, hit);
    return hit;
  }
  const validate = compileSchema(schema);
  cache.set(key, validate);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return validate;
}

/** Why the schema does not compile, or null. */
export function schemaProblem(schema: boolean | Record<string, unknown>): string | null {
  try {
    cachedCompile(schema);
    return null;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
