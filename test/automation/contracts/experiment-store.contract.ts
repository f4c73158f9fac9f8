// The ExperimentStore contract: tenant-scoped experiments, listed per automation newest first,
// and the unfinished ones of every tenant.

import { strict as assert } from 'node:assert';
import { it } from 'node:test';
import { contractSuite } from './suite.js';
import type { ExperimentStore } from '../../../src/automation/experiments/store.js';
import type { ExperimentRecord } from '../../../src/automation/experiments/types.js';

const T0 = Date.UTC(2026, 0, 1);

export function experiment(
  tenant: string,
  id: string,
  extra: Partial<ExperimentRecord> = {},
): ExperimentRecord {
  return {
    id,
    tenant,
    automationId: 'wf_a',
    automationType: 'workflow',
    status: 'completed',
    version: null,
    concurrency: 2,
    createdAt: T0,
    completedAt: T0 + 10,
    cancelRequestedAt: null,
    interrupted: false,
    examples: [{ exampleId: 'ex_1', exampleName: 'one' }],
    runs: [{ id: 'exec_1', exampleId: 'ex_1', exampleName: 'one', createdAt: T0 + 1 }],
    results: { exec_1: { status: 'completed', score: 1, passed: true, completedAt: T0 + 5 } },
    ...extra,
  };
}

export function experimentStoreContract(
  label: string,
  make: () => Promise<{ store: ExperimentStore; close(): Promise<void> }>,
): void {
  contractSuite(`ExperimentStore contract: ${label}`, make, (s) => {
    it('reads back what was put, only for its tenant', async () => {
      const e = experiment('t1', 'exp_1');
      await s().store.put(e);
      assert.deepEqual(await s().store.get('t1', 'exp_1'), e);
      assert.equal(await s().store.get('t2', 'exp_1'), undefined, 'another tenant’s experiment is absent');
      assert.equal(await s().store.get('t1', 'exp_missing'), undefined);
    });

    it('put replaces the record and takes its value as it was when called', async () => {
      const e = experiment('t1', 'exp_2', { status: 'running', completedAt: null, results: {} });
      const put = s().store.put(e);
      // The runner keeps changing its object after put; the stored value is the one given.
      e.runs.push({ id: 'exec_late', exampleId: 'ex_2', exampleName: 'two', createdAt: T0 + 2 });
      await put;
      assert.equal((await s().store.get('t1', 'exp_2'))!.runs.length, 1);
      await s().store.put({ ...e, status: 'completed', completedAt: T0 + 99 });
      const got = (await s().store.get('t1', 'exp_2'))!;
      assert.equal(got.status, 'completed');
      assert.equal(got.runs.length, 2);
    });

    it('lists a tenant’s experiments of one automation, newest first', async () => {
      await s().store.put(experiment('t3', 'exp_a', { createdAt: T0 + 1 }));
      await s().store.put(experiment('t3', 'exp_c', { createdAt: T0 + 3 }));
      await s().store.put(experiment('t3', 'exp_b', { createdAt: T0 + 3 }));
      await s().store.put(experiment('t3', 'exp_other', { automationId: 'wf_b', createdAt: T0 + 5 }));
      await s().store.put(experiment('t4', 'exp_d', { createdAt: T0 + 9 }));
      assert.deepEqual(
        (await s().store.list('t3', 'wf_a')).map((e) => e.id),
        ['exp_c', 'exp_b', 'exp_a'],
      );
      assert.deepEqual(
        (await s().store.list('t3', 'wf_b')).map((e) => e.id),
        ['exp_other'],
      );
      assert.deepEqual(await s().store.list('t3', 'wf_none'), []);
      assert.deepEqual(await s().store.list('t5', 'wf_a'), []);
    });

    it('unfinished lists every tenant’s experiments that are not completed', async () => {
      await s().store.put(experiment('t6', 'exp_q', { status: 'queued', completedAt: null }));
      await s().store.put(experiment('t7', 'exp_r', { status: 'running', completedAt: null }));
      const ids = (await s().store.unfinished()).map((e) => e.id).sort();
      assert.deepEqual(ids, ['exp_q', 'exp_r']);
    });
  });
}
