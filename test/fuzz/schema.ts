// A valid-ish value from a JSON Schema (the OpenAPI document's): required properties always,
// optional ones half of the time, numbers near their minimum (so a `wait_for_completion` stays
// short), strings from the seed pools when the property name has one (a real automation id for
// `target`). Good enough to get past the first validation layer; the mutators do the rest.

import type { Prng } from './prng.js';
import type { Json } from './routes.js';

export interface SampleContext {
  readonly components: Record<string, Json>;
  /** Property name → real values (automation ids, run ids …). */
  readonly strings: ReadonlyMap<string, readonly string[]>;
}

export function sample(
  schema: Json | undefined,
  rng: Prng,
  ctx: SampleContext,
  name = '',
  depth = 0,
): unknown {
  if (!schema || depth > 8) return null;
  const ref = schema['$ref'];
  if (typeof ref === 'string')
    return sample(ctx.components[ref.split('/').pop()!], rng, ctx, name, depth + 1);
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum'])) return rng.pick(schema['enum'] as unknown[]);
  for (const key of ['anyOf', 'oneOf'] as const) {
    const options = schema[key];
    if (Array.isArray(options) && options.length > 0)
      return sample(rng.pick(options as Json[]), rng, ctx, name, depth + 1);
  }
  if (Array.isArray(schema['allOf']))
    return sample((schema['allOf'] as Json[])[0], rng, ctx, name, depth + 1);
  const types = schema['type'];
  const type = Array.isArray(types) ? rng.pick(types as string[]) : (types as string | undefined);
  const pool = ctx.strings.get(name);
  switch (type) {
    case 'object': {
      const out: Record<string, unknown> = {};
      const required = new Set((schema['required'] as string[] | undefined) ?? []);
      const props = (schema['properties'] as Record<string, Json> | undefined) ?? {};
      for (const [key, sub] of Object.entries(props))
        if (required.has(key) || rng.chance(0.5)) out[key] = sample(sub, rng, ctx, key, depth + 1);
      return out;
    }
    case 'array': {
      const min = (schema['minItems'] as number | undefined) ?? 0;
      const n = min + rng.int(0, 2);
      return Array.from({ length: n }, () =>
        sample(schema['items'] as Json | undefined, rng, ctx, name, depth + 1),
      );
    }
    case 'string':
      if (pool && pool.length > 0) return rng.pick(pool);
      if (schema['format'] === 'date-time')
        return new Date(Date.UTC(2026, 0, 1 + rng.int(0, 300))).toISOString();
      return 'fuzz'.padEnd((schema['minLength'] as number | undefined) ?? 0, 'z');
    case 'integer':
    case 'number': {
      const min = (schema['minimum'] as number | undefined) ?? 0;
      const max = (schema['maximum'] as number | undefined) ?? min + 3;
      return Math.min(max, min + rng.int(0, 3));
    }
    case 'boolean':
      return rng.chance(0.5);
    case 'null':
      return null;
    default:
      if (pool && pool.length > 0) return rng.pick(pool);
      return rng.pick([{}, 'fuzz', 1, { text: 'fuzz' }]);
  }
}
