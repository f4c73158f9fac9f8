// Named wire schemas are embedded by value in the schemas that use them, so one document can
// carry the same `$id` several times (Run holds RunFile twice, for instance). TypeBox's
// compiler does not mind; Ajv rejects a repeated `$id` as an ambiguous reference. This gives
// the plain JSON Schema a standard validator accepts: the top-level `$id` stays, nested ones go.

export type JsonSchema = { [key: string]: unknown };

export function toPlainJsonSchema(schema: object): JsonSchema {
  return strip(schema, true) as JsonSchema;
}

function strip(value: unknown, top: boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => strip(v, false));
  if (value === null || typeof value !== 'object') return value;
  const out: JsonSchema = {};
  // Object.entries skips TypeBox's symbol keys (Kind, Optional), which JSON Schema has no use for.
  for (const [k, v] of Object.entries(value)) {
    if (k === '$id' && !top) continue;
    out[k] = strip(v, false);
  }
  return out;
}
