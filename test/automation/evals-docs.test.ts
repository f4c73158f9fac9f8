// Every YAML example in docs/evaluators.md must be a valid config, so the reference cannot
// drift from the parser.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { parseEvaluatorConfig } from '../../src/automation/evals/index.js';

const doc = readFileSync(new URL('../../docs/evaluators.md', import.meta.url), 'utf8');
const blocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');

describe('docs/evaluators.md examples', () => {
  it('has examples', () => {
    assert.ok(blocks.length >= 10);
  });
  blocks.forEach((block, i) => {
    it(`example ${i + 1} parses`, () => {
      const text = block.startsWith('- ') ? `evaluators:\n${block.replace(/^/gm, '  ')}` : block;
      const r = parseEvaluatorConfig(text);
      assert.ok(r.ok, `example ${i + 1}:\n${text}\n${r.ok ? '' : JSON.stringify(r.errors, null, 2)}`);
    });
  });
});
