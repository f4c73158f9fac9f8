// Reviews stored before reviews carried ids are completed on read, the same way every time,
// into records whose wire view satisfies the SDK's RunReview.

import { describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { Value } from '@sinclair/typebox/value';
import { upgradeReview } from '../../src/automation/reviews/upgrade.js';
import { runReviewView } from '../../src/automation/reviews/view.js';
import type { ReviewRecord } from '../../src/automation/reviews/types.js';
import { RunReview } from '../../src/automation/wire/reviews.js';

const OLD = {
  runId: 'run_0123',
  automationId: 'aut_1',
  verdict: 'incorrect',
  status: 'open',
  note: 'n',
  corrections: [{ kind: 'field', path: '/total', originalValue: 1, correctedValue: 2 }],
  reviewedBy: 'u1',
  closedBy: null,
  closedAt: null,
  createdAt: 1_700_000_000_000,
  updatedAt: 1_700_000_100_000,
  expectedFiles: [],
} as unknown as ReviewRecord;

describe('reviews stored by earlier versions', () => {
  it('get ids, reviewedAt and correction fields, stable across reads', () => {
    const a = upgradeReview(structuredClone(OLD));
    const b = upgradeReview(structuredClone(OLD));
    assert.match(a.id, /^rev_[0-9a-f]{16}$/);
    assert.equal(a.id, b.id);
    assert.equal(a.reviewedAt, OLD.updatedAt);
    assert.equal(a.closedNote, null);
    assert.match(a.corrections[0]!.id, /^corr_[0-9a-f]{16}$/);
    assert.equal(a.corrections[0]!.id, b.corrections[0]!.id);
    assert.deepEqual([...Value.Errors(RunReview, runReviewView(a))], []);
  });

  it('leave a current record untouched', () => {
    const current = upgradeReview(structuredClone(OLD));
    assert.equal(upgradeReview(current), current);
  });
});
