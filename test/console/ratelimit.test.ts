// The rate limit section in a browser against `sluice serve` (the page on the automation port
// calls the rate limit port cross-origin): the loaded configuration as a tree, live counters,
// and a dry-run request whose answer shows the decision, the rule and the remaining quota while
// the counters stay where they were. The /login window is a year long, so the hits the test
// makes stay in one window however slowly it runs.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  assertCleanPage,
  browserSkipReason,
  launchBrowser,
  openPage,
  screenshot,
  signIn,
  startSluice,
  type RunningSluice,
} from '../helpers/browser.js';

const CONFIG = `domain: shop
descriptors:
  - key: path
    value: /login
    rate_limit:
      unit: year
      requests_per_unit: 3
  - key: path
    value: /search
    rate_limit:
      unit: second
      requests_per_unit: 100
    descriptors:
      - key: user
        rate_limit:
          unit: minute
          requests_per_unit: 10
`;

describe('console: rate limit section', { skip: browserSkipReason() }, () => {
  let sluice: RunningSluice;
  let browser: Browser;
  let runtime: string;

  before(async () => {
    runtime = mkdtempSync(join(tmpdir(), 'sluice-console-rl-'));
    mkdirSync(join(runtime, 'config'));
    writeFileSync(join(runtime, 'config', 'shop.yaml'), CONFIG);
    sluice = await startSluice({
      env: { RUNTIME_ROOT: runtime, RUNTIME_WATCH_ROOT: 'false', WINDOW_ALGORITHM: 'fixed' },
    });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await sluice?.stop();
    rmSync(runtime, { recursive: true, force: true });
  });

  const totalHits = async (key: string): Promise<number> => {
    const res = await fetch(`${sluice.urls.ratelimit}/json/stats`, {
      headers: { authorization: `Bearer ${sluice.token}` },
    });
    const body = (await res.json()) as { rules: { key: string; total_hits: number }[] };
    return body.rules.find((r) => r.key === key)?.total_hits ?? 0;
  };

  it('shows the loaded rules and counters, and tries a request without counting it', async () => {
    // Two real decisions on /login: the window holds 2 of 3.
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${sluice.urls.ratelimit}/json`, {
        method: 'POST',
        body: JSON.stringify({
          domain: 'shop',
          descriptors: [{ entries: [{ key: 'path', value: '/login' }] }],
        }),
      });
      assert.equal(res.status, 200);
    }
    assert.equal(await totalHits('shop.path_/login'), 2);

    const watched = await openPage(browser);
    const { page } = watched;
    try {
      await signIn(page, sluice.console, sluice.token);
      const nav = page.getByRole('navigation', { name: 'Sections' });
      await nav.getByRole('link', { name: 'Configuration' }).click();
      const tree = page.locator('.tree').filter({ hasText: 'shop' });
      await tree.getByText('path=/login').waitFor();
      assert.match(await tree.innerText(), /path=\/login\s+3 per year/);
      assert.match(await tree.innerText(), /user\s+10 per minute/);
      await screenshot(page, 'ratelimit-config');

      await nav.getByRole('link', { name: 'Traffic' }).click();
      const row = page.getByRole('row').filter({ hasText: 'shop.path_/login' });
      await row.waitFor();
      assert.match(await row.innerText(), /\b2\b/);

      await nav.getByRole('link', { name: 'Try a request' }).click();
      await page.getByLabel('Domain').fill('shop');
      await page.getByLabel('Descriptors').fill('path=/login');
      await page.getByRole('button', { name: 'Try it' }).click();
      const result = page.locator('.result');
      await result.getByText('Decision:').waitFor();
      assert.match(await result.getByRole('heading').innerText(), /Decision:\s*OK/);
      const status = result.getByRole('row').filter({ hasText: 'path=/login' });
      const cells = await status.getByRole('cell').allInnerTexts();
      // descriptor, decision, rule, hits in window, remaining, resets in
      assert.equal(cells[1], 'OK');
      assert.match(cells[2]!, /shop\.path_\/login\s+3 per year/);
      assert.equal(cells[3], '2');
      assert.equal(cells[4], '0');

      // Two hits would go over.
      await page.getByLabel('Hits').fill('2');
      await page.getByRole('button', { name: 'Try it' }).click();
      await result.getByText('OVER_LIMIT').first().waitFor();
      await screenshot(page, 'ratelimit-try');
      assertCleanPage(watched);
    } finally {
      await watched.close();
    }
    // The dry runs counted nothing.
    assert.equal(await totalHits('shop.path_/login'), 2);
  });
});
