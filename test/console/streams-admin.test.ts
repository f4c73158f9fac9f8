// Consumer group administration and the live view's reconnection, in a browser against `sluice
// streams`: reset a stopped group's offsets (the confirmation shows the dry run's offsets) and
// delete it (confirmed by typing its name), disabled while the group has members and absent for a
// read-only key; and the live records view reconnecting after the service went away for real
// (the process stopped and started again on the same ports and data) and after the server closed
// the stream (the console's instance deleted), showing what was produced meanwhile, once.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  assertAccessible,
  assertCleanPage,
  browserSkipReason,
  createKey,
  launchBrowser,
  openPage,
  screenshot,
  signIn,
  startSluice,
  type RunningSluice,
} from '../helpers/browser.js';
import { waitUntil } from '../helpers/wait.js';

/** A minute boundary in the future: records stamped from it sort after everything the service stamps. */
const T0 = Date.UTC(2030, 0, 1, 12, 0);
const MINUTE = 60_000;

/** `YYYY-MM-DDTHH:MM` in this process's zone, as a datetime-local input takes it (the browser's zone is the same). */
const localInput = (ms: number) => {
  const d = new Date(ms);
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`;
};

describe(
  'console: consumer group administration and live reconnection',
  { skip: browserSkipReason() },
  () => {
    let sluice: RunningSluice;
    let browser: Browser;
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-console-admin-'));

    before(async () => {
      sluice = await startSluice({ command: 'streams', dataDir });
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
      await sluice?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const call = async (method: string, path: string, body?: unknown, expect = 300) => {
      const res = await fetch(`${sluice.urls.streams}${path}`, {
        method,
        headers: { authorization: `Bearer ${sluice.token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      assert.ok(res.status < expect, `${method} ${path}: ${res.status} ${text}`);
      return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
    };
    /** A member of `group` that reads `count` records and commits them. */
    const consumer = async (group: string, topic: string, count: number) => {
      const base = `/streams/consumers/${group}/instances/c1`;
      await call('POST', `/streams/consumers/${group}`, { name: 'c1', 'auto.offset.reset': 'earliest' });
      await call('POST', `${base}/subscription`, { topics: [topic] });
      let got = 0;
      await waitUntil(`${count} records consumed by ${group}`, async () => {
        got += ((await call('GET', `${base}/records?timeout=200`)).body as unknown[]).length;
        return got >= count;
      });
      await call('POST', `${base}/offsets`);
      return base;
    };
    const committed = async (group: string) =>
      ((await call('GET', `/streams/consumer-groups/${group}`)).body.partitions as any[]).map(
        (p) => `${p.partition}:${p.committed_offset}`,
      );

    it('resets a stopped group’s offsets and deletes it, each confirmed; not while it has members', async () => {
      await call('POST', '/streams/topics/topic', { topic_name: 'payments', partitions: 2 });
      await call('POST', '/streams/topic/payments', {
        records: [
          ...[0, 1, 2, 3].map((i) => ({ value: { i }, partition: 0, timestamp: T0 + i * MINUTE })),
          ...[0, 1].map((i) => ({ value: { i }, partition: 1 })),
        ],
      });
      const member = await consumer('ledger', 'payments', 6);
      assert.deepEqual(await committed('ledger'), ['0:4', '1:2']);

      const watched = await openPage(browser);
      const { page } = watched;
      try {
        await signIn(page, sluice.console, sluice.token);
        await page.evaluate(`location.hash = '#/streams/groups/ledger'`);
        await page.getByRole('heading', { name: 'Consumer group ledger' }).waitFor();
        const resetButton = page.getByRole('button', { name: 'Reset offsets…' });
        const deleteButton = page.getByRole('button', { name: 'Delete group…' });
        // With a member: both disabled, and the page says why.
        await page.getByTestId('group-admin-why').getByText('The group has 1 live member.').waitFor();
        assert.equal(await resetButton.isDisabled(), true);
        assert.equal(await deleteButton.isDisabled(), true);
        assert.equal(await resetButton.getAttribute('aria-describedby'), 'st-group-admin-why');

        // Stopped: the page (polling) enables them.
        await call('DELETE', member);
        await page.getByTestId('group-admin-why').waitFor({ state: 'detached' });
        assert.equal(await resetButton.isDisabled(), false);

        // Reset to an offset: the dialog shows the dry run's offsets, clamped per partition.
        await page.getByLabel('Reset to').selectOption('offset');
        await page.getByLabel('Offset', { exact: true }).fill('3');
        await resetButton.click();
        const dialog = page.getByRole('dialog', { name: 'Reset the offsets of ledger?' });
        const preview = dialog.getByRole('table', { name: 'New offsets' });
        await preview.getByRole('row').nth(2).waitFor();
        const dry = (
          await call('POST', '/streams/consumer-groups/ledger/offsets/reset', {
            to: 'offset',
            offset: 3,
            dry_run: true,
          })
        ).body.offsets as any[];
        const rows = async () =>
          (await preview.locator('tbody tr').allInnerTexts()).map((t) =>
            t.split(/\s+/).filter(Boolean).join(' '),
          );
        assert.deepEqual(
          await rows(),
          dry.map((o) => `${o.topic} ${o.partition} ${o.previous_offset} ${o.offset}`),
        );
        assert.deepEqual(await rows(), ['payments 0 4 3', 'payments 1 2 2']);
        await assertAccessible(page, 'the reset confirmation with its preview');
        await screenshot(page, 'streams-group-reset');
        // By keyboard: the confirm button, Enter.
        await dialog.getByRole('button', { name: 'Reset offsets', exact: true }).focus();
        await page.keyboard.press('Enter');
        await page.getByTestId('reset-done').getByText('Offsets reset on 2 partitions.').waitFor();
        assert.equal(await dialog.isVisible(), false);
        assert.deepEqual(await committed('ledger'), ['0:3', '1:2']);
        const partitions = page.getByRole('table', { name: 'Partitions' });
        await waitUntil('the page shows the new committed offset', async () =>
          /payments\s+0\s+—\s+3\s+4\s+1/.test(await partitions.innerText()),
        );

        // Reset to a time: previewed, then cancelled with Escape — nothing changes.
        await page.getByLabel('Reset to').selectOption('time');
        await page.getByLabel('Time (local)').fill(localInput(T0 + 2 * MINUTE));
        await resetButton.click();
        // The preview of this target, not the last one's: wait for its rows, then compare.
        await waitUntil(
          'the time reset is previewed',
          async () => (await rows()).join() === 'payments 0 3 2,payments 1 2 2',
        );
        assert.deepEqual(await rows(), ['payments 0 3 2', 'payments 1 2 2']);
        await page.keyboard.press('Escape');
        await dialog.waitFor({ state: 'hidden' });
        assert.deepEqual(await committed('ledger'), ['0:3', '1:2']);

        // Delete: enabled only once the name is typed exactly.
        await deleteButton.click();
        const confirm = page.getByRole('dialog', { name: 'Delete the group ledger?' });
        const go = confirm.getByRole('button', { name: 'Delete group', exact: true });
        assert.equal(await go.isDisabled(), true);
        await confirm.getByLabel('Group name').fill('ledge');
        assert.equal(await go.isDisabled(), true);
        await confirm.getByLabel('Group name').fill('ledger');
        assert.equal(await go.isDisabled(), false);
        await assertAccessible(page, 'the delete confirmation');
        await screenshot(page, 'streams-group-delete');
        await go.click();
        await page.getByRole('heading', { name: 'Consumer groups' }).waitFor();
        await page.getByText('No consumer groups.', { exact: false }).waitFor();
        assert.equal((await call('GET', '/streams/consumer-groups/ledger', undefined, 500)).status, 404);
        assertCleanPage(watched);
      } finally {
        await watched.close();
      }

      // A key that only reads sees the group, not its administration.
      await call('DELETE', await consumer('audit', 'payments', 6));
      const reader = await createKey(sluice, 'streams:read', 'reader');
      const second = await openPage(browser);
      try {
        await signIn(second.page, sluice.console, reader);
        await second.page.evaluate(`location.hash = '#/streams/groups/audit'`);
        await second.page.getByRole('table', { name: 'Partitions' }).getByText('payments').first().waitFor();
        assert.equal(await second.page.getByRole('heading', { name: 'Administration' }).count(), 0);
        assert.equal(await second.page.getByRole('button', { name: 'Delete group…' }).count(), 0);
        assertCleanPage(second);
      } finally {
        await second.close();
      }
    });

    it('reconnects the live view after the service restarts and after the server closes the stream', async () => {
      await call('POST', '/streams/topics/topic', { topic_name: 'ticks', partitions: 2 });
      const produce = (key: string) =>
        call('POST', '/streams/topic/ticks', { records: [{ key, value: { key } }] });
      const watched = await openPage(browser);
      const { page } = watched;
      try {
        await signIn(page, sluice.console, sluice.token);
        await page.evaluate(`location.hash = '#/streams/topics/ticks'`);
        await page.getByRole('heading', { name: 'Topic ticks' }).waitFor();
        const state = (s: string) => page.locator(`[data-testid="live-state"][data-state="${s}"]`);
        await page.getByLabel('Follow new records as they are produced').check();
        await state('connected').waitFor();
        const live = page.getByRole('table', { name: 'Live records, newest first' });
        await produce('before-drop');
        await live.getByText('before-drop', { exact: true }).waitFor();

        // The process goes away: the socket drops, the view says it is reconnecting.
        watched.allow.push(/ERR_CONNECTION_REFUSED|Failed to load resource|WebSocket connection/);
        const { ports, token } = sluice;
        await sluice.stop();
        await state('reconnecting').waitFor();
        await assertAccessible(page, 'the live view reconnecting');
        await screenshot(page, 'streams-live-reconnecting');
        // Back on the same ports and data: the view reconnects by itself.
        sluice = await startSluice({ command: 'streams', dataDir, ports, token });
        await state('connected').waitFor();
        await produce('after-restart');
        await live.getByText('after-restart', { exact: true }).waitFor();

        // The server closes the stream (its consumer instance is deleted): a new one resumes after
        // the last record shown, so a record produced at once is shown, whichever comes first.
        const groups = (await call('GET', '/streams/consumer-groups')).body.consumer_groups as {
          group: string;
        }[];
        const mine = groups.filter((g) => g.group.startsWith('sluice-console-'));
        assert.equal(mine.length, 1, JSON.stringify(groups));
        const old = mine[0]!.group;
        const members = (await call('GET', `/streams/consumer-groups/${old}`)).body.members as any[];
        await call('DELETE', `/streams/consumers/${old}/instances/${members[0].instance_id}`);
        await produce('during-gap');
        await live.getByText('during-gap', { exact: true }).waitFor();
        await state('connected').waitFor();
        await produce('after-gap');
        await live.getByText('after-gap', { exact: true }).waitFor();
        const keys = (await live.locator('tbody tr td:nth-child(4)').allInnerTexts()).map((t) => t.trim());
        assert.deepEqual(
          keys,
          ['after-gap', 'during-gap', 'after-restart', 'before-drop'],
          'each once, newest first',
        );
        const now = (await call('GET', '/streams/consumer-groups')).body.consumer_groups as {
          group: string;
        }[];
        assert.ok(!now.some((g) => g.group === old), 'the deleted instance’s group is gone');
        assertCleanPage(watched);
      } finally {
        await watched.close();
      }
    });
  },
);
