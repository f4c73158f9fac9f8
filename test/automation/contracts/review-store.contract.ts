// The ReviewStore contract: a run's review and the run's summary of it are saved together; the
// latest close time is kept per tenant. The factory gives the RunStore of the same database, so
// the case can create the runs reviews belong to and read their summaries back.

import { strict as assert } from 'node:assert';
import { it } from 'node:test';
import { contractSuite } from './suite.js';
import type { ReviewStore } from '../../../src/automation/reviews/store.js';
import type { ReviewRecord } from '../../../src/automation/reviews/types.js';
import type { RunStore } from '../../../src/automation/runs/store.js';
import { emptyDetail } from '../../../src/automation/runs/types.js';
import { contractRun } from './run-store.contract.js';

export interface ReviewStoreUnderTest {
  store: ReviewStore;
  /** The runs of the same database. */
  runs: RunStore;
  close(): Promise<void>;
}

const T0 = Date.UTC(2026, 0, 1);

function review(runId: string, extra: Partial<ReviewRecord> = {}): ReviewRecord {
  return {
    id: `rev_${runId.slice(-8)}`,
    runId,
    automationId: 'wf_0',
    verdict: 'incorrect',
    status: 'open',
    note: 'wrong',
    correctedOutput: null,
    corrections: [
      {
        id: 'corr_1',
        kind: 'field',
        path: '/total',
        label: null,
        originalValue: 1,
        correctedValue: 2,
        note: '',
        createdAt: T0,
        updatedAt: T0,
      },
    ],
    reviewedBy: 'alice',
    reviewedAt: T0,
    closedBy: null,
    closedAt: null,
    closedNote: null,
    createdAt: T0,
    updatedAt: T0,
    expectedFiles: [{ name: 'a.txt', size: 3, contentType: 'text/plain', source: 'upload' }],
    ...extra,
  };
}

export function reviewStoreContract(label: string, make: () => Promise<ReviewStoreUnderTest>): void {
  contractSuite(`ReviewStore contract: ${label}`, make, (s) => {
    const newRun = async (tenant: string, i: number) => {
      const run = contractRun(tenant, i, { status: 'completed', review: null });
      await s().runs.create(run, emptyDetail(), []);
      return run;
    };

    it('saves the review and the run’s summary together; null removes both', async () => {
      const run = await newRun('t1', 2);
      assert.equal(await s().store.get(run), undefined);
      const r = review(run.id);
      await s().store.save(run, r);
      assert.deepEqual(await s().store.get(run), r);
      const stored = (await s().runs.get(run.id))!;
      assert.deepEqual(stored.review, {
        status: 'open',
        verdict: 'incorrect',
        note: 'wrong',
        hasCorrections: true,
        correctionCount: 1,
        createdAt: T0,
        updatedAt: T0,
        closedAt: null,
      });
      assert.deepEqual({ ...stored, review: null }, run, 'the rest of the run is as given');
      const page = await s().runs.list({
        tenant: 't1',
        limit: 10,
        sort: 'createdAt',
        order: 'desc',
        hasReview: true,
      });
      assert.deepEqual(
        page.runs.map((x) => x.id),
        [run.id],
      );
      await s().store.save(stored, null);
      assert.equal(await s().store.get(run), undefined);
      assert.equal((await s().runs.get(run.id))!.review, null);
    });

    it('a review is its run’s tenant’s: another tenant reading the same run id finds none', async () => {
      const run = await newRun('t2', 3);
      await s().store.save(run, review(run.id));
      assert.ok(await s().store.get(run));
      assert.equal(await s().store.get({ tenant: 't3', id: run.id }), undefined);
    });

    it('keeps the latest close time per tenant, never moving back', async () => {
      assert.equal(await s().store.lastClosedAt('t4'), undefined);
      const a = await newRun('t4', 1);
      const b = await newRun('t4', 2);
      const c = await newRun('t5', 3);
      await s().store.save(a, review(a.id, { status: 'closed', closedAt: T0 + 500, closedBy: 'alice' }));
      assert.equal(await s().store.lastClosedAt('t4'), T0 + 500);
      await s().store.save(b, review(b.id, { status: 'closed', closedAt: T0 + 100, closedBy: 'alice' }));
      assert.equal(await s().store.lastClosedAt('t4'), T0 + 500, 'an earlier close does not move it back');
      await s().store.save(b, review(b.id)); // open again
      assert.equal(await s().store.lastClosedAt('t4'), T0 + 500);
      assert.equal(await s().store.lastClosedAt('t5'), undefined, 'another tenant’s closes do not count');
      await s().store.save(c, review(c.id, { status: 'wont_fix', closedAt: T0 + 900, closedBy: 'bob' }));
      assert.equal(await s().store.lastClosedAt('t5'), T0 + 900);
      assert.equal(await s().store.lastClosedAt('t4'), T0 + 500);
    });
  });
}
