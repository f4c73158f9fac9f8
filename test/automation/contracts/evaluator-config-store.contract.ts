// The EvaluatorConfigStore contract: one YAML text per (tenant, automation), as given.

import { strict as assert } from 'node:assert';
import { it } from 'node:test';
import { contractSuite } from './suite.js';
import type {
  EvaluatorConfigStore,
  StoredEvaluatorConfig,
} from '../../../src/automation/evaluators/store.js';

export function evaluatorConfigStoreContract(
  label: string,
  make: () => Promise<{ store: EvaluatorConfigStore; close(): Promise<void> }>,
): void {
  contractSuite(`EvaluatorConfigStore contract: ${label}`, make, (s) => {
    it('keeps the text exactly, per tenant and automation; put replaces', async () => {
      const yaml = 'evaluators:\n  - name: "é"\n    type: equals   # a comment stays\n';
      const a: StoredEvaluatorConfig = {
        tenant: 't1',
        automationId: 'wf_a',
        yaml,
        updatedAt: '2026-01-01T00:00:00.000Z',
      };
      await s().store.put(a);
      assert.deepEqual(await s().store.get('t1', 'wf_a'), a);
      assert.equal(await s().store.get('t2', 'wf_a'), undefined, 'another tenant’s config is absent');
      assert.equal(await s().store.get('t1', 'wf_b'), undefined);
      const b = { ...a, yaml: '', updatedAt: '2026-01-02T00:00:00.000Z' };
      await s().store.put(b);
      assert.deepEqual(await s().store.get('t1', 'wf_a'), b);
      await s().store.put({ ...a, tenant: 't2', yaml: 'other' });
      assert.equal((await s().store.get('t1', 'wf_a'))!.yaml, '');
      assert.equal((await s().store.get('t2', 'wf_a'))!.yaml, 'other');
    });
  });
}
