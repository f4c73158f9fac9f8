// The automation page's schedule in a real browser: a release of the built-in text report with a
// yearly `triggers.cron` is synced through the API (as docs/automation.md "Triggers" does it), and
// its page shows the expression, time zone, overlap rule and the next tick times the service
// lists; an automation without one says how to add it.

import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
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
  type WatchedPage,
} from '../helpers/browser.js';

const skip = browserSkipReason();

describe('console: an automation’s schedule', { skip }, () => {
  let sluice: RunningSluice;
  let browser: Browser;
  let watched: WatchedPage;
  let page: Page;
  let key = '';

  before(async () => {
    sluice = await startSluice({ command: 'automation' });
    key = await createKey(sluice, 'automation', 'schedule-test');
    // A release whose manifest names a schedule: the first of January, 06:00 in Paris.
    const registry = join(sluice.dataDir, 'automation', 'registry.git');
    const manifestPath = join(registry, 'workflows', 'text-report', 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { triggers: Record<string, unknown> };
    manifest.triggers.cron = {
      schedule: '0 6 1 1 *',
      timezone: 'Europe/Paris',
      input: { text: 'new year report' },
    };
    writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + '\n');
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', registry, ...args], {
        env: {
          ...process.env,
          GIT_AUTHOR_NAME: 'Console Test',
          GIT_AUTHOR_EMAIL: 'console-test@localhost',
          GIT_COMMITTER_NAME: 'Console Test',
          GIT_COMMITTER_EMAIL: 'console-test@localhost',
        },
      });
    git('commit', '-qam', 'text-report: a yearly schedule');
    git('tag', '-a', 'workflows.text-report@1.1.0', '-m', '1.1.0');
    const synced = await fetch(`${sluice.urls.automation}/api/v1/automations/workflows.text-report/sync`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.equal(synced.status, 200, await synced.text());
    browser = await launchBrowser();
    watched = await openPage(browser);
    page = watched.page;
  });

  after(async () => {
    await watched?.close();
    await browser?.close();
    await sluice?.stop();
  });

  it('shows the schedule with its next ticks, as GET /schedules lists them', async () => {
    const listed = (await (
      await fetch(`${sluice.urls.automation}/api/v1/schedules?next=5`, {
        headers: { authorization: `Bearer ${key}` },
      })
    ).json()) as { data: { automationId: string; nextFireTimes: string[] }[] };
    assert.equal(listed.data.length, 1);
    const [schedule] = listed.data;
    await signIn(page, sluice.console, key);
    await page.evaluate(
      `location.hash = ${JSON.stringify(`#/automation/automations/${schedule!.automationId}`)}`,
    );
    const section = page.getByRole('region', { name: 'Schedule' });
    await section.getByText('0 6 1 1 *').waitFor();
    assert.match(await section.innerText(), /Europe\/Paris/);
    assert.match(await section.innerText(), /skip a tick while the previous run is running/);
    const ticks = page.getByRole('list', { name: 'Next ticks' }).locator('time');
    await ticks.first().waitFor();
    // Each tick's full timestamp is on hover (the title), the same instants the API lists.
    const shown = await ticks.evaluateAll((els) => els.map((e) => e.getAttribute('datetime')));
    assert.deepEqual(
      shown.map((t) => new Date(t).toISOString()),
      schedule!.nextFireTimes,
    );
    await section.scrollIntoViewIfNeeded();
    await screenshot(page, 'automation-schedule');
    await assertAccessible(page, 'the automation page with a schedule');
    assertCleanPage(watched);
  });

  it('an automation without a schedule says how to add one', async () => {
    await page.evaluate(`location.hash = ${JSON.stringify('#/automation')}`);
    await page.getByRole('link', { name: 'Echo agent' }).click();
    const section = page.getByRole('region', { name: 'Schedule' });
    await section.getByText('No schedule.').waitFor();
    assert.match(await section.innerText(), /triggers\.cron/);
    assertCleanPage(watched);
  });
});
