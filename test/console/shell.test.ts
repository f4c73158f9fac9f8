// The console shell in a real browser against `sluice serve`: sign-in with a key (kept in the
// tab's session storage, never in the URL), tenant and scopes shown, sections listed, narrow
// layout, sign-out. No console error or CSP violation on the way.
import { strict as assert } from 'node:assert';
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
  startSluice,
  type RunningSluice,
} from '../helpers/browser.js';

const skip = browserSkipReason();

describe('console shell', { skip }, () => {
  let sluice: RunningSluice;
  let browser: Browser;

  before(async () => {
    sluice = await startSluice();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await sluice?.stop();
  });

  it('signs in with a key, shows tenant and scopes, and signs out', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    try {
      await page.goto(sluice.console);
      await page.getByRole('heading', { name: 'Sluice console' }).waitFor();
      await assertAccessible(page, 'the sign-in page');
      // A wrong key: the console says so (the browser logs the 401 answer, which is expected).
      watched.allow.push(/status of 401/);
      await page.getByLabel('API key').fill('sk_wrongwrongwr_' + 'x'.repeat(43));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText('This key is not valid').waitFor();
      watched.allow.length = 0;

      await page.getByLabel('API key').fill(sluice.token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const who = page.getByLabel('Signed in as');
      await who.waitFor();
      assert.match(await who.innerText(), /tenant\s+default/);
      assert.match(await who.innerText(), /scopes\s+admin/);
      const nav = page.getByRole('navigation', { name: 'Sections' });
      for (const title of ['Automation', 'Streams', 'Rate limit'])
        await nav.getByRole('heading', { name: title }).waitFor();
      assert.ok(!page.url().includes(sluice.token), 'the key is never in the URL');
      assert.equal(await page.evaluate("sessionStorage.getItem('sluice.apiKey')"), sluice.token);
      // Keyboard: a section link followed with Enter opens the view and moves focus to it.
      await nav.getByRole('link', { name: 'Consumer groups' }).focus();
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { name: 'Consumer groups', level: 1 }).waitFor();
      // The focus moves once the view has rendered: wait for that state rather than read it at once.
      await page.waitForFunction("document.activeElement !== null && document.activeElement.id === 'main'");
      assert.match(page.url(), /#\/streams\/groups$/);
      await nav.getByRole('link', { name: 'Topics' }).click();
      await page.getByRole('heading', { name: 'Topics', level: 1 }).waitFor();
      await assertAccessible(page, 'the shell');
      await screenshot(page, 'shell');

      // A reload keeps the session (same tab), and the shell comes back signed in.
      await page.reload();
      await page.getByLabel('Signed in as').waitFor();

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByLabel('API key').waitFor();
      assert.equal(await page.evaluate("sessionStorage.getItem('sluice.apiKey')"), null);
      assertCleanPage(watched);
    } finally {
      await watched.close();
    }
  });

  it("shows only the sections the key's scopes open, and says which scope a hidden one needs", async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    try {
      // The sign-in hint names a key that every view accepts; such a key opens all three sections.
      await page.goto(sluice.console);
      const hint = await page.getByText('Create one that opens every view').innerText();
      const scopes = /--scopes (\S+)/.exec(hint)?.[1];
      assert.equal(scopes, 'automation,streams,ratelimit');
      const everything = await createKey(sluice, scopes, 'every view');
      await page.getByLabel('API key').fill(everything);
      await page.getByRole('button', { name: 'Sign in' }).click();
      const nav = page.getByRole('navigation', { name: 'Sections' });
      for (const title of ['Automation', 'Streams', 'Rate limit'])
        await nav.getByRole('heading', { name: title }).waitFor();
      await nav.getByRole('link', { name: 'Traffic' }).click();
      await page.getByRole('heading', { name: 'Traffic per rule' }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();

      // An automation-only key: no Streams or Rate limit section to click into.
      const automationOnly = await createKey(sluice, 'automation', 'automation only');
      await page.getByLabel('API key').fill(automationOnly);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await nav.getByRole('heading', { name: 'Automation' }).waitFor();
      assert.deepEqual(await nav.getByRole('heading').allTextContents(), ['Automation']);
      assert.equal(await nav.getByRole('link', { name: 'Topics' }).count(), 0);
      // Reaching a hidden section by URL names the scope it needs instead of failing on a call.
      await page.goto(`${sluice.console}#/streams/topics`);
      const notice = page.getByRole('status').filter({ hasText: 'This key cannot open the Streams section' });
      await notice.waitFor();
      assert.match(await notice.innerText(), /streams:read/);
      assert.match(await notice.innerText(), /sluice keys create --scopes automation,streams,ratelimit/);
      await assertAccessible(page, 'a section the key cannot open');
      await screenshot(page, 'shell-scopes');
      assertCleanPage(watched);
    } finally {
      await watched.close();
    }
  });

  it('fits a narrow window without horizontal scrolling', async () => {
    const watched = await openPage(browser, { viewport: { width: 420, height: 800 } });
    const { page } = watched;
    try {
      await page.goto(sluice.console);
      await page.getByLabel('API key').fill(sluice.token);
      await page.keyboard.press('Enter');
      await page.getByLabel('Signed in as').waitFor();
      const overflow = await page.evaluate<number>(
        'document.documentElement.scrollWidth - window.innerWidth',
      );
      assert.ok(overflow <= 0, `page is ${overflow}px wider than the window`);
      await screenshot(page, 'shell-narrow');
      assertCleanPage(watched);
    } finally {
      await watched.close();
    }
  });
});
