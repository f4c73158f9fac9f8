// Checks a response body against its wire schema (src/automation/wire, the product SDK's types):
// the schemas close response objects, so an extra field fails here as a missing one does.

import { strict as assert } from 'node:assert';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';

export function assertWire(schema: TSchema, value: unknown): void {
  const check = TypeCompiler.Compile(schema);
  if (check.Check(value)) return;
  const errors = [...check.Errors(value)].slice(0, 5).map((e) => `${e.path || '/'}: ${e.message}`);
  assert.fail(
    `${(schema as { $id?: string }).$id ?? 'schema'} mismatch: ${errors.join('; ')}\n${JSON.stringify(value).slice(0, 2000)}`,
  );
}
