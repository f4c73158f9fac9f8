// GET /runs/{id}?expand=execution carries the run's full review (the SDK's
// WorkflowRunExecution.review / AgentRunExecution.review: a RunReview), as GET /runs/{id}/reviews
// has it; null for a run without one. Other views keep the review summary.

import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Run } from '../../src/automation/wire/runs.js';
import { startHarness, type Harness } from './harness.js';
import { assertWire } from './wire-check.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h?.close();
});

describe('expand=execution: the full review', () => {
  for (const target of ['workflows.text-report', 'agents.echo-agent']) {
    it(`embeds the review of a reviewed ${target.split('.')[0]} run, null before`, async () => {
      const started = await h.api('POST', '/runs?wait_for_completion=60', {
        body: { target, input: { text: 'one two' } },
      });
      assert.equal(started.status, 200, JSON.stringify(started.body));
      const id = started.body.id as string;

      const before = await h.api('GET', `/runs/${id}?expand=execution`);
      assert.equal(before.status, 200);
      assertWire(Run, before.body);
      assert.equal(before.body.execution.review, null);

      const put = await h.api('PUT', `/runs/${id}/reviews`, {
        body: { verdict: 'incorrect', note: 'the second word is wrong' },
      });
      assert.equal(put.status, 200, JSON.stringify(put.body));
      const stored = (await h.api('GET', `/runs/${id}/reviews`)).body.review;
      assert.ok(stored?.id);

      const after = await h.api('GET', `/runs/${id}?expand=execution`);
      assert.equal(after.status, 200);
      assertWire(Run, after.body);
      assert.deepEqual(after.body.execution.review, stored);
      // Without expand=execution the run carries the summary, as before.
      const plain = await h.api('GET', `/runs/${id}`);
      assert.deepEqual(plain.body.execution.review, {
        verdict: 'incorrect',
        status: 'open',
        hasNote: true,
        correctionCount: 0,
      });
    });
  }
});
