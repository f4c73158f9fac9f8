// Request validation against the TypeBox schemas, used by the route contract (http/route.ts).
// Query names may come in camelCase (the product's SDK) or snake_case (the spec); both fold onto
// the declared names.

import type { TObject, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { ApiError, type Issue } from '../errors.js';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checker(schema: TSchema): TypeCheck<TSchema> {
  let c = compiled.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    compiled.set(schema, c);
  }
  return c;
}

const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

function issuesOf(check: TypeCheck<TSchema>, value: unknown, prefix: string): Issue[] {
  const out: Issue[] = [];
  for (const e of check.Errors(value)) {
    const path = e.path.split('/').filter(Boolean).join('.');
    out.push({
      field: [prefix, path].filter(Boolean).join('.') || '<root>',
      message: e.message,
      code: 'invalid_value',
      severity: 'error',
    });
    if (out.length >= 20) break;
  }
  return out;
}

/** The declared name a query key stands for: as declared, or its snake_case / camelCase twin. */
function declaredName(known: ReadonlySet<string>, key: string): string | undefined {
  if (known.has(key)) return key;
  const s = snake(key);
  if (known.has(s)) return s;
  const c = camel(key);
  return known.has(c) ? c : undefined;
}

const isArraySchema = (schema: TSchema) =>
  schema.type === 'array' ||
  (Array.isArray(schema.anyOf) && (schema.anyOf as TSchema[]).some((s) => s.type === 'array'));

/**
 * Query parameters folded onto one declaration: names in snake_case or camelCase, booleans as
 * true/false/1/0, numbers converted, and array parameters from repeated keys (`expand=a&expand=b`,
 * the OpenAPI default form style) or comma-separated values (`expand=a,b`), or both.
 */
export function parseQuery<T>(schema: TObject, query: URLSearchParams): T {
  const known = new Set(Object.keys(schema.properties));
  const raw: Record<string, unknown> = {};
  for (const [key, value] of query) {
    const name = declaredName(known, key.endsWith('[]') ? key.slice(0, -2) : key);
    if (name === undefined) continue;
    const prop = schema.properties[name] as TSchema;
    if (isArraySchema(prop)) {
      const items = value
        .split(',')
        .map((v) => v.trim())
        .filter((v) => v !== '');
      raw[name] = [...((raw[name] as string[] | undefined) ?? []), ...items];
    } else if (prop.type === 'boolean') {
      const v = value.toLowerCase();
      raw[name] = v === '1' || v === 'true' ? true : v === '0' || v === 'false' ? false : value;
    } else raw[name] = value;
  }
  const converted = Value.Convert(schema, raw);
  const check = checker(schema);
  if (!check.Check(converted)) {
    const issues = issuesOf(check, converted, '');
    throw new ApiError(
      400,
      'invalid_query',
      `invalid query parameter: ${issues[0]?.field} ${issues[0]?.message}`,
      issues,
    );
  }
  return converted as T;
}

export function validateBody<T>(schema: TSchema, value: unknown): T {
  const check = checker(schema);
  if (!check.Check(value)) {
    const issues = issuesOf(check, value, '');
    throw new ApiError(
      400,
      'invalid_body',
      `invalid request body: ${issues[0]?.field} ${issues[0]?.message}`,
      issues,
    );
  }
  return value as T;
}
