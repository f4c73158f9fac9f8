// A small JSON Schema checker for the review editor's corrected output. The page checks what a
// reviewer types against the automation's outputSchema as they type, without a round trip; the
// server's own validator (ajv, draft 2020-12, src/automation/schemas/compiler.ts) stays the
// authority for a run's schemaValid. This one knows the keywords output schemas use in practice
// (type, enum, const, properties, required, additionalProperties, items, prefixItems, sizes and
// bounds, pattern, allOf/anyOf/oneOf/not, local $ref) and, as ajv's non-strict mode does, ignores
// keywords it does not know — so it can accept a value the server would refuse, never the other
// way round for the keywords it knows. docs/console.md lists the keywords.

export interface SchemaProblem {
  /** JSON Pointer of the offending value ('' for the whole document). */
  path: string;
  message: string;
}

type Schema = Record<string, unknown> | boolean;

const MAX_PROBLEMS = 50;

export function checkAgainstSchema(value: unknown, schema: unknown): SchemaProblem[] {
  if (!isSchema(schema)) return [];
  const problems: SchemaProblem[] = [];
  walk(value, schema, '', schema, problems, 0);
  return problems.slice(0, MAX_PROBLEMS);
}

function isSchema(s: unknown): s is Schema {
  return typeof s === 'boolean' || (typeof s === 'object' && s !== null && !Array.isArray(s));
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function hasType(v: unknown, t: string): boolean {
  const actual = typeOf(v);
  return actual === t || (t === 'number' && actual === 'integer');
}

function pointer(base: string, key: string | number): string {
  return `${base}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

function resolveRef(root: Schema, ref: string): Schema | undefined {
  if (typeof root === 'boolean' || !ref.startsWith('#')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return isSchema(node) ? node : undefined;
}

function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => equal((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

function matches(value: unknown, schema: Schema, root: Schema, depth: number): boolean {
  const scratch: SchemaProblem[] = [];
  walk(value, schema, '', root, scratch, depth);
  return scratch.length === 0;
}

function walk(
  value: unknown,
  schema: Schema,
  path: string,
  root: Schema,
  out: SchemaProblem[],
  depth: number,
): void {
  if (out.length >= MAX_PROBLEMS || depth > 64) return;
  if (schema === true) return;
  if (schema === false) {
    out.push({ path, message: 'no value is allowed here' });
    return;
  }
  const s = schema;
  const add = (message: string, at = path) => out.push({ path: at, message });

  if (typeof s.$ref === 'string') {
    const target = resolveRef(root, s.$ref);
    if (target !== undefined) walk(value, target, path, root, out, depth + 1);
  }
  if (s.type !== undefined) {
    const types = (Array.isArray(s.type) ? s.type : [s.type]).filter(
      (t): t is string => typeof t === 'string',
    );
    if (types.length > 0 && !types.some((t) => hasType(value, t))) {
      add(`must be ${types.join(' or ')}, is ${typeOf(value)}`);
      return;
    }
  }
  if (Array.isArray(s.enum) && !s.enum.some((e) => equal(e, value))) {
    add(`must be one of ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  }
  if ('const' in s && !equal(s.const, value)) add(`must be ${JSON.stringify(s.const)}`);

  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) add(`must be ≥ ${s.minimum}`);
    if (typeof s.maximum === 'number' && value > s.maximum) add(`must be ≤ ${s.maximum}`);
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum)
      add(`must be > ${s.exclusiveMinimum}`);
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum)
      add(`must be < ${s.exclusiveMaximum}`);
    if (typeof s.multipleOf === 'number' && s.multipleOf > 0 && !Number.isInteger(value / s.multipleOf))
      add(`must be a multiple of ${s.multipleOf}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (typeof s.minLength === 'number' && length < s.minLength)
      add(`must have at least ${s.minLength} characters`);
    if (typeof s.maxLength === 'number' && length > s.maxLength)
      add(`must have at most ${s.maxLength} characters`);
    if (typeof s.pattern === 'string') {
      let re: RegExp | null = null;
      try {
        re = new RegExp(s.pattern, 'u');
      } catch {
        // a pattern this page cannot compile is left to the server
      }
      if (re && !re.test(value)) add(`must match ${s.pattern}`);
    }
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems)
      add(`must have at least ${s.minItems} items`);
    if (typeof s.maxItems === 'number' && value.length > s.maxItems)
      add(`must have at most ${s.maxItems} items`);
    if (s.uniqueItems === true) {
      for (let i = 1; i < value.length; i++) {
        if (value.slice(0, i).some((v) => equal(v, value[i]))) {
          add(`items must be unique (item ${i} repeats an earlier one)`);
          break;
        }
      }
    }
    const prefix = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : [];
    value.forEach((item, i) => {
      const itemSchema = i < prefix.length ? prefix[i] : Array.isArray(s.items) ? s.additionalItems : s.items;
      if (isSchema(itemSchema)) walk(item, itemSchema, pointer(path, i), root, out, depth + 1);
    });
  }
  if (typeOf(value) === 'object') {
    const obj = value as Record<string, unknown>;
    const props: Record<string, unknown> =
      typeof s.properties === 'object' && s.properties !== null
        ? (s.properties as Record<string, unknown>)
        : {};
    if (Array.isArray(s.required)) {
      for (const name of s.required) {
        if (typeof name === 'string' && !(name in obj)) add(`is missing the required field "${name}"`);
      }
    }
    if (typeof s.minProperties === 'number' && Object.keys(obj).length < s.minProperties)
      add(`must have at least ${s.minProperties} fields`);
    if (typeof s.maxProperties === 'number' && Object.keys(obj).length > s.maxProperties)
      add(`must have at most ${s.maxProperties} fields`);
    const patterns: [RegExp, Schema][] = [];
    if (typeof s.patternProperties === 'object' && s.patternProperties !== null) {
      for (const [p, ps] of Object.entries(s.patternProperties)) {
        try {
          if (isSchema(ps)) patterns.push([new RegExp(p, 'u'), ps]);
        } catch {
          // left to the server
        }
      }
    }
    for (const [key, v] of Object.entries(obj)) {
      const at = pointer(path, key);
      const own = props[key];
      const byPattern = patterns.filter(([re]) => re.test(key));
      if (isSchema(own)) walk(v, own, at, root, out, depth + 1);
      for (const [, ps] of byPattern) walk(v, ps, at, root, out, depth + 1);
      if (own === undefined && byPattern.length === 0) {
        if (s.additionalProperties === false) add(`has a field "${key}" the schema does not allow`);
        else if (isSchema(s.additionalProperties) && s.additionalProperties !== true)
          walk(v, s.additionalProperties, at, root, out, depth + 1);
      }
    }
  }
  if (Array.isArray(s.allOf)) {
    for (const sub of s.allOf) if (isSchema(sub)) walk(value, sub, path, root, out, depth + 1);
  }
  if (Array.isArray(s.anyOf)) {
    const subs = s.anyOf.filter(isSchema);
    if (subs.length > 0 && !subs.some((sub) => matches(value, sub, root, depth + 1)))
      add('matches none of the allowed shapes (anyOf)');
  }
  if (Array.isArray(s.oneOf)) {
    const n = s.oneOf.filter(isSchema).filter((sub) => matches(value, sub, root, depth + 1)).length;
    if (n !== 1) add(`must match exactly one allowed shape (oneOf), matches ${n}`);
  }
  if (isSchema(s.not) && matches(value, s.not, root, depth + 1))
    add('matches a shape the schema excludes (not)');
}

/** Parses JSON text and checks it: the problems a reviewer sees under the corrected output. */
export function checkJsonText(text: string, schema: unknown): { value?: unknown; problems: SchemaProblem[] } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { problems: [{ path: '', message: `not JSON: ${(err as Error).message}` }] };
  }
  return { value, problems: checkAgainstSchema(value, schema) };
}
