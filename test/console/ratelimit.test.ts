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
import { waitUntil } from '../helpers/wait.js';
import {
  assertAccessible,
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

  interface StatsRule {
    key: string;
    total_hits: number;
    history: { total_hits: number[] };
  }
  const statsRules = async (): Promise<StatsRule[]> => {
    const res = await fetch(`${sluice.urls.ratelimit}/json/stats`, {
      headers: { authorization: `Bearer ${sluice.token}` },
    });
    return ((await res.json()) as { rules: StatsRule[] }).rules;
  };
  const totalHits = async (key: string): Promise<number> =>
    (await statsRules()).find((r) => r.key === key)?.total_hits ?? 0;

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
    // The service's ring takes a step every two seconds: wait until a step holds the two hits,
    // so the page has history to start from.
    await waitUntil(
      'the history ring to hold the two /login hits',
      async () => {
        const login = (await statsRules()).find((r) => r.key === 'shop.path_/login');
        return (login?.history.total_hits ?? []).reduce((a, b) => a + b, 0) === 2;
      },
      { intervalMs: 200 },
    );

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

      await assertAccessible(page, 'the rate limit configuration');

      // Traffic: the first answer the page gets already carries the service's recent history,
      // and the sparkline draws it at once (no waiting for polls of its own).
      const first = page.waitForResponse((r) => r.url().endsWith('/json/stats'));
      await nav.getByRole('link', { name: 'Traffic' }).click();
      const seeded = ((await (await first).json()) as { rules: StatsRule[] }).rules;
      const loginSeries = seeded.find((r) => r.key === 'shop.path_/login')!.history.total_hits;
      const row = page.getByRole('row').filter({ hasText: 'shop.path_/login' });
      await row.waitFor();
      assert.match(await row.innerText(), /\b2\b/);
      assert.ok(loginSeries.length > 1, 'the first answer has more than one step');
      const hitsLine = row.getByRole('img', { name: /^hits of shop\.path_\/login/ });
      assert.match(
        (await hitsLine.getAttribute('aria-label')) ?? '',
        new RegExp(`peak ${Math.max(...loginSeries)} over the last ${loginSeries.length} samples`),
      );
      // Every configured rule is listed; those without traffic as zeros.
      for (const key of ['shop.path_/search', 'shop.path_/search.user']) {
        const idle = page.getByRole('row').filter({ has: page.getByText(key, { exact: true }) });
        await idle.waitFor();
        const cells = await idle.getByRole('cell').allInnerTexts();
        assert.equal(cells[4], '0', `${key} total hits`);
        assert.equal(cells[5], '0', `${key} total over`);
      }
      await assertAccessible(page, 'the traffic view');
      await screenshot(page, 'ratelimit-traffic');

      await nav.getByRole('link', { name: 'Try a request' }).click();
      // The view has read the loaded domains (as a person sees the hint) before the form is filled.
      await page.getByText('Loaded: shop').waitFor();
      await page.getByLabel('Domain').fill('shop');
      await page.getByLabel('Descriptors').fill('path=/login');
      const answered = page.waitForResponse((r) => r.url().endsWith('/json/dry-run'));
      await page.getByRole('button', { name: 'Try it' }).click();
      const dryRun = await answered;
      const exchange = `sent ${dryRun.request().postData()}, answered ${await dryRun.text()}`;
      const result = page.locator('.result');
      await result.getByText('Decision:').waitFor();
      assert.match(await result.getByRole('heading').innerText(), /Decision:\s*OK/);
      const status = result.getByRole('row').filter({ hasText: 'path=/login' });
      const cells = await status.getByRole('cell').allInnerTexts();
      // descriptor, decision, rule, hits in window, remaining, resets in
      assert.equal(cells[1], 'OK');
      assert.match(cells[2]!, /shop\.path_\/login\s+3 per year/, exchange);
      assert.equal(cells[3], '2');
      assert.equal(cells[4], '0');
      // The reset time in human units, not raw seconds.
      assert.match(cells[5]!, /^\d+ (d|h|min|s)( \d+ (h|min|s))?$/);

      // Two hits would go over.
      await page.getByLabel('Hits').fill('2');
      await page.getByRole('button', { name: 'Try it' }).click();
      await result.getByText('OVER_LIMIT').first().waitFor();
      await assertAccessible(page, 'the dry-run view');
      await screenshot(page, 'ratelimit-try');
      assertCleanPage(watched);
    } finally {
      await watched.close();
    }
    // The dry runs counted nothing.
    assert.equal(await totalHits('shop.path_/login'), 2);
  });
});
