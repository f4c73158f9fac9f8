// The ScoreStore contract: evaluator results recorded per run and read back in id order.

import { strict as assert } from 'node:assert';
import { it } from 'node:test';
import { contractSuite } from './suite.js';
import type { EvalResult, ScoreStore } from '../../../src/automation/runs/scores.js';

export function result(runId: string, id: string, extra: Partial<EvalResult> = {}): EvalResult {
  return {
    id,
    runId,
    automationId: 'wf_a',
    evaluatorName: `eval ${id}`,
    evaluatorType: 'equals',
    score: 0.5,
    passed: true,
    label: null,
    weight: 1,
    passThreshold: 0.5,
    description: null,
    details: { path: '/x', nested: [1, { a: null }] },
    error: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    ...extra,
  };
}

export function scoreStoreContract(
  label: string,
  make: () => Promise<{ store: ScoreStore; close(): Promise<void> }>,
): void {
  contractSuite(`ScoreStore contract: ${label}`, make, (s) => {
    it('lists a run’s results in id order; a run without results has none', async () => {
      await s().store.record([
        result('exec_a', '002_x'),
        result('exec_a', '000_y'),
        result('exec_b', '001_z'),
      ]);
      await s().store.record([
        result('exec_a', '001_w', { label: 'ok', error: 'late', passed: false, score: 0 }),
      ]);
      assert.deepEqual(
        (await s().store.list('exec_a')).map((r) => r.id),
        ['000_y', '001_w', '002_x'],
      );
      assert.deepEqual(await s().store.list('exec_b'), [result('exec_b', '001_z')]);
      const w = (await s().store.list('exec_a'))[1]!;
      assert.deepEqual(w, result('exec_a', '001_w', { label: 'ok', error: 'late', passed: false, score: 0 }));
      assert.deepEqual(await s().store.list('exec_none'), []);
    });

    it('replaces a result recorded again under the same id; an empty record is a no-op', async () => {
      await s().store.record([result('exec_c', '000_a', { score: 0.1 })]);
      await s().store.record([result('exec_c', '000_a', { score: 0.9 })]);
      await s().store.record([]);
      assert.deepEqual(
        (await s().store.list('exec_c')).map((r) => r.score),
        [0.9],
      );
    });
  });
}
