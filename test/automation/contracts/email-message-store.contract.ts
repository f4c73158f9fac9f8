// The EmailMessageStore contract: one claim per (automation, Message-ID) however many deliveries
// race for it, what it became kept, a given-back claim free again, and a claim left `starting`
// by a stopped node taken over only once it is stale (a movable clock: the `now` argument).

import { strict as assert } from 'node:assert';
import { it } from 'node:test';
import { contractSuite } from './suite.js';
import {
  STALE_CLAIM_MS,
  type EmailMessageStore,
} from '../../../src/automation/triggers/email/message-store.js';

export function emailMessageStoreContract(
  label: string,
  make: () => Promise<{ store: EmailMessageStore; close(): Promise<void> }>,
): void {
  contractSuite(`EmailMessageStore contract: ${label}`, make, (s) => {
    it('lets one of many racing deliveries claim a message, per automation', async () => {
      const claims = await Promise.all(Array.from({ length: 12 }, () => s().store.claim('wf_a', '<race@x>')));
      assert.equal(claims.filter(Boolean).length, 1);
      // The same Message-ID for another automation is its own claim; the id is compared trimmed, without case.
      assert.equal(await s().store.claim('wf_b', '<race@x>'), true);
      assert.equal(await s().store.claim('wf_a', ' <RACE@x> '), false);
    });

    it('keeps what the message became; a released claim can be claimed again', async () => {
      assert.equal(await s().store.get('wf_a', '<kept@x>'), undefined);
      assert.equal(await s().store.claim('wf_a', '<kept@x>'), true);
      assert.equal((await s().store.get('wf_a', '<kept@x>'))?.state, 'starting');
      const entry = { runId: 'run_1', state: 'started' as const, at: '2026-01-01T00:00:00.000Z' };
      await s().store.settle('wf_a', '<kept@x>', entry);
      assert.deepEqual(await s().store.get('wf_a', '<kept@x>'), entry);
      assert.equal(await s().store.claim('wf_a', '<released@x>'), true);
      await s().store.release('wf_a', '<released@x>');
      assert.equal(await s().store.claim('wf_a', '<released@x>'), true);
    });

    it('takes over a stale starting claim only, never a settled one', async () => {
      const t0 = Date.parse('2026-03-01T00:00:00.000Z');
      assert.equal(await s().store.claim('wf_a', '<stale@x>', t0), true);
      assert.equal(await s().store.claim('wf_a', '<stale@x>', t0 + STALE_CLAIM_MS - 1000), false);
      assert.equal(await s().store.claim('wf_a', '<stale@x>', t0 + STALE_CLAIM_MS + 1000), true);
      assert.equal(await s().store.claim('wf_a', '<stale@x>', t0 + STALE_CLAIM_MS + 2000), false);
      await s().store.settle('wf_a', '<stale@x>', {
        runId: 'run_2',
        state: 'started',
        at: new Date(t0).toISOString(),
      });
      assert.equal(await s().store.claim('wf_a', '<stale@x>', t0 + 100 * STALE_CLAIM_MS), false);
      await s().store.settle('wf_a', '<stale@x>', {
        runId: null,
        state: 'refused',
        at: new Date(t0).toISOString(),
      });
      assert.equal(await s().store.claim('wf_a', '<stale@x>', t0 + 100 * STALE_CLAIM_MS), false);
    });

    it('lists started entries awaiting their reply until one caller takes the reply on', async () => {
      const reply = { to: 'ann@example.com', messageId: '<owed@x>', subject: 's' };
      assert.equal(await s().store.claim('wf_r', '<owed@x>'), true);
      assert.deepEqual(await s().store.awaitingReply(), []);
      const owed = {
        runId: 'run_r',
        state: 'started' as const,
        at: '2026-01-01T00:00:00.000Z',
        automationId: 'wf_r',
        reply,
      };
      await s().store.settle('wf_r', '<owed@x>', owed);
      assert.deepEqual(await s().store.awaitingReply(), [owed]);
      const takes = await Promise.all(
        Array.from({ length: 6 }, () => s().store.takeReply('wf_r', '<owed@x>')),
      );
      assert.equal(takes.filter(Boolean).length, 1);
      assert.deepEqual(await s().store.awaitingReply(), []);
      assert.equal((await s().store.get('wf_r', '<owed@x>'))?.state, 'replied');
      assert.equal(await s().store.takeReply('wf_r', '<unknown@x>'), false);
    });
  });
}
