// Browser bench of the console's run list (not a tinybench file: bench/run.ts loads only
// *.bench.ts, and what is measured here is script time inside Chromium, not Node): 100k runs
// are written through the service's RunStore (the automation-list-100k load test's fill), the
// console signs in, and each page of 50 runs is measured with the Performance API marks the
// run list sets (console/src/automation/runs.tsx):
//   render  response parsed → rows in the document (the page's script work for one page)
//   total   request start → rows in the document (network, JSON parse and render)
// The ceiling, in the same browser and run: fetch + JSON parse of the same page with no render.
// Figures go to stdout as a Markdown table; nothing here fails on speed.
//
//   npx tsx bench/console-runs.ts [runs=100000] [pages=20]

import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fillRuns } from '../loadtest/scenarios/automation-support/fill.js';
import { browserSkipReason, launchBrowser, openPage, startSluice } from '../test/helpers/browser.js';

const runs = Number(process.argv[2] ?? 100_000);
const pages = Number(process.argv[3] ?? 20);

/** The page's globals this script reads (the project's TypeScript has no DOM library). */
interface PageGlobals {
  document: { body: { dataset: Record<string, string | undefined> } };
}

interface Sample {
  render: number;
  total: number;
}

function stats(values: number[]): { mean: number; p50: number; p95: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { mean: values.reduce((a, b) => a + b, 0) / values.length, p50: at(0.5), p95: at(0.95), max: at(1) };
}

async function main(): Promise<void> {
  const skip = browserSkipReason();
  if (skip) throw new Error(skip);
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-console-bench-'));
  mkdirSync(join(dataDir, 'automation'), { recursive: true });
  const filled = performance.now();
  await fillRuns(join(dataDir, 'automation', 'meta.lmdb'), runs);
  process.stderr.write(`wrote ${runs} runs in ${Math.round(performance.now() - filled)} ms\n`);
  const sluice = await startSluice({ command: 'automation', dataDir });
  const browser = await launchBrowser();
  try {
    const watched = await openPage(browser);
    const page = watched.page;
    await page.goto(sluice.console);
    await page.getByLabel('API key').fill(sluice.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    // Signed in once the shell shows the key's identity; its own start navigation is done then.
    await page.getByRole('button', { name: 'Sign out' }).waitFor();

    const samples: Sample[] = [];
    const ceiling: number[] = [];
    await page.getByRole('link', { name: 'Runs', exact: true }).click();
    for (let i = 1; i <= pages; i++) {
      // A function, not a string: the console's CSP forbids the eval a string predicate needs.
      await page.waitForFunction(
        (n) => (globalThis as unknown as PageGlobals).document.body.dataset.runsPage === String(n),
        i,
      );
      samples.push(
        await page.evaluate<Sample>(`(() => {
          const last = (name) => performance.getEntriesByName(name, 'measure').pop()?.duration ?? NaN;
          return { render: last('sluice:runs-page-render'), total: last('sluice:runs-page-total') };
        })()`),
      );
      const rows = await page.locator('[data-testid="runs-table"] tbody tr').count();
      if (rows !== 50) throw new Error(`page ${i} has ${rows} rows`);
      // The ceiling: the same request and JSON parse from the page, without rendering.
      ceiling.push(
        await page.evaluate<number>(`(async () => {
          const key = sessionStorage.getItem('sluice.apiKey') ?? '';
          const t0 = performance.now();
          const res = await fetch('/api/v1/runs?limit=50', { headers: { authorization: 'Bearer ' + key } });
          await res.json();
          return performance.now() - t0;
        })()`),
      );
      if (i < pages) await page.getByRole('button', { name: 'Next page' }).click();
    }
    await watched.close();

    const render = stats(samples.map((s) => s.render));
    const total = stats(samples.map((s) => s.total));
    const base = stats(ceiling);
    const f = (n: number) => n.toFixed(1);
    const row = (name: string, s: ReturnType<typeof stats>) =>
      `| ${name} | ${f(s.mean)} | ${f(s.p50)} | ${f(s.p95)} | ${f(s.max)} | ${(base.mean / s.mean).toFixed(2)}× |`;
    process.stdout.write(
      [
        `Console run list: ${pages} pages of 50 over ${runs} stored runs (Chromium ${browser.version()}, headless)`,
        '',
        '| what (ms) | mean | p50 | p95 | max | ratio to ceiling |',
        '|---|---:|---:|---:|---:|---:|',
        row('ceiling: fetch + JSON parse of a page, no render', base),
        row('render: parsed page → rows in the document', render),
        row('total: request → rows in the document', total),
        '',
        `Goal: a page renders in under 300 ms of script time — render p95 ${f(render.p95)} ms, total p95 ${f(total.p95)} ms.`,
        '',
      ].join('\n'),
    );
  } catch (err) {
    const pages = browser.contexts().flatMap((c) => c.pages());
    if (pages[0]) await pages[0].screenshot({ path: join(tmpdir(), 'console-runs-bench-failure.png') });
    throw err;
  } finally {
    await browser.close();
    await sluice.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
