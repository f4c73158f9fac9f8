import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  checkSchema,
  parseEvaluatorConfig,
  scoreRun,
  type EvaluatorResult,
} from '../../src/automation/evals/index.js';
import { ManifestError, parseManifest } from '../../src/automation/registry/manifest.js';
import { DEFAULT_MAX_ENTRIES, SchemaCompiler } from '../../src/automation/schemas/compiler.js';

const distinct = (i: number) => ({ type: 'object', properties: { [`p${i}`]: { type: 'number' } } });

describe('schema compiler cache', () => {
  it('returns the cached validator for the same schema text', () => {
    const compiler = new SchemaCompiler({ maxEntries: 4 });
    const a = compiler.compile({ type: 'string', minLength: 2 });
    const b = compiler.compile({ type: 'string', minLength: 2 });
    assert.equal(a, b);
    assert.equal(compiler.size(), 1);
  });

  it('holds at most maxEntries validators and evicts the least recently used', () => {
    const compiler = new SchemaCompiler({ maxEntries: 3 });
    const first = compiler.compile(distinct(0));
    const second = compiler.compile(distinct(1));
    compiler.compile(distinct(2));
    assert.equal(compiler.compile(distinct(1)), second, 'a hit makes it the most recently used');
    compiler.compile(distinct(3));
    assert.equal(compiler.size(), 3);
    assert.notEqual(compiler.compile(distinct(0)), first, 'the oldest entry was evicted and compiled anew');
    assert.equal(compiler.compile(distinct(1)), second, 'a recently used entry stayed');
  });

  it(`is bounded to ${DEFAULT_MAX_ENTRIES} entries by default`, () => {
    const compiler = new SchemaCompiler();
    const first = compiler.compile(distinct(0));
    for (let i = 1; i <= DEFAULT_MAX_ENTRIES; i++) compiler.compile(distinct(i));
    assert.equal(compiler.size(), DEFAULT_MAX_ENTRIES);
    assert.notEqual(compiler.compile(distinct(0)), first);
  });
});

// Run inputs are validated against the manifest's inputSchema with checkSchema, the same call the
// run service makes; evaluators score through scoreRun. Both must read 2020-12 keywords without
// a `$schema`.
const TUPLE = { type: 'array', prefixItems: [{ type: 'string' }, { type: 'number' }], items: false };
const DEPENDENT = { type: 'object', dependentRequired: { card: ['expiry'] } };

function manifestWith(inputSchema: unknown) {
  return parseManifest(
    JSON.stringify({ name: 'W', entry: 'index.js', inputSchema }),
    'manifest.json',
    'workflow',
    1000,
  );
}

async function evaluate(schema: unknown, output: unknown): Promise<EvaluatorResult> {
  const parsed = parseEvaluatorConfig(
    JSON.stringify({ evaluators: [{ name: 'e', type: 'json-schema', value: schema }] }),
  );
  if (!parsed.ok) assert.fail(JSON.stringify(parsed.errors));
  const run = await scoreRun({ config: parsed.config, output });
  return run.results[0]!;
}

describe('one dialect for manifests and evaluators', () => {
  it('a manifest input schema reads prefixItems and dependentRequired (2020-12)', async () => {
    const tuple = manifestWith(TUPLE).inputSchema!;
    const ok = await checkSchema(tuple, ['a', 1], undefined);
    assert.ok(ok.ok && ok.valid);
    const wrong = await checkSchema(tuple, ['a', 'b'], undefined);
    assert.ok(wrong.ok && !wrong.valid);
    const extra = await checkSchema(tuple, ['a', 1, 2], undefined);
    assert.ok(extra.ok && !extra.valid, 'items: false refuses a third element');

    const dependent = manifestWith(DEPENDENT).inputSchema!;
    const missing = await checkSchema(dependent, { card: '4111' }, undefined);
    assert.ok(missing.ok && !missing.valid);
    const complete = await checkSchema(dependent, { card: '4111', expiry: '12/30' }, undefined);
    assert.ok(complete.ok && complete.valid);
  });

  it('an evaluator schema reads the same keywords the same way', async () => {
    assert.equal((await evaluate(TUPLE, ['a', 1])).passed, true);
    assert.equal((await evaluate(TUPLE, ['a', 'b'])).passed, false);
    assert.equal((await evaluate(DEPENDENT, { card: '4111' })).passed, false);
    assert.equal((await evaluate(DEPENDENT, { card: '4111', expiry: '12/30' })).passed, true);
  });

  it('a manifest schema that 2020-12 refuses is an invalid manifest', () => {
    assert.throws(
      () => manifestWith({ type: 'array', prefixItems: 'string' }),
      (e: unknown) => e instanceof ManifestError && e.issues.some((i) => i.field === 'inputSchema'),
    );
  });

  it('keeps draft-07 schemas working: the array form of items, and a named draft-07', async () => {
    const legacy = manifestWith({
      type: 'array',
      items: [{ type: 'string' }],
      additionalItems: false,
    }).inputSchema!;
    const ok = await checkSchema(legacy, ['a'], undefined);
    assert.ok(ok.ok && ok.valid);
    const wrong = await checkSchema(legacy, [1], undefined);
    assert.ok(wrong.ok && !wrong.valid);
    const named = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'integer' };
    assert.equal((await evaluate(named, 3)).passed, true);
    assert.equal((await evaluate(named, 'x')).passed, false);
  });
});
