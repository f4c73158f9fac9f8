// The run views in a real browser against `sluice automation`: the run list's input and output
// previews and usage columns, the step waterfall of a workflow run, and the review queue with its
// one-key verdicts, and two experiments compared side by side. Runs, examples and experiments are
// made through the API first; every assertion compares what the page shows with what the API
// answers.

import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
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
  type WatchedPage,
} from '../helpers/browser.js';

const skip = browserSkipReason();

interface ApiRun {
  id: string;
  finished: boolean;
  timing: { createdAt: string; startedAt: string | null; completedAt: string | null };
  input?: { args: unknown };
  output?: unknown;
  usage?: { tokens: { input: number | null; output: number | null }; creditsCharged: number | null } | null;
}

interface ApiStep {
  name: string;
  startedAt: string;
  completedAt: string;
}

describe('console: run previews, usage, waterfall, review queue, experiment comparison', { skip }, () => {
  let sluice: RunningSluice;
  let browser: Browser;
  let watched: WatchedPage;
  let page: Page;
  let agentRun = '';
  let slowRun = '';
  /** Text report runs, oldest first. */
  const reportRuns: string[] = [];
  /** Example ids by name, made by the experiment comparison. */
  const exampleIds: Record<string, string> = {};

  const call = async <T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> => {
    const res = await fetch(`${sluice.urls.automation}/api/v1${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${sluice.token}`, 'content-type': 'application/json' },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await res.text();
    assert.ok(res.ok, `${init.method ?? 'GET'} ${path}: ${res.status} ${text}`);
    return JSON.parse(text) as T;
  };
  const startRun = async (
    target: string,
    input: Record<string, unknown>,
    metadata?: Record<string, unknown>,
  ) => {
    const run = await call<ApiRun>('/runs?wait_for_completion=60', {
      method: 'POST',
      body: { target, input, ...(metadata ? { metadata } : {}) },
    });
    assert.equal(run.finished, true, `run of ${target} did not finish: ${JSON.stringify(run)}`);
    return run.id;
  };
  const go = (hash: string) => page.evaluate(`location.hash = ${JSON.stringify(hash)}`);

  before(async () => {
    sluice = await startSluice({ command: 'automation' });
    agentRun = await startRun('agents.echo-agent', { text: 'one two three' });
    // One at a time, so their creation order is the queue's order.
    for (const text of ['first text', 'second text', 'third text'])
      reportRuns.push(await startRun('workflows.text-report', { text }));
    slowRun = await startRun(
      'workflows.text-report',
      { text: 'a slow normalize step', delay_ms: 150 },
      { customer: { name: 'Initech Ltd' } },
    );
    browser = await launchBrowser();
    watched = await openPage(browser);
    page = watched.page;
    await signIn(page, sluice.console, sluice.token);
  });

  after(async () => {
    await watched?.close();
    await browser?.close();
    await sluice?.stop();
  });

  it('lists runs with input and output previews, tokens and credits as the API gives them', async () => {
    await go('#/automation/runs');
    const table = page.getByTestId('runs-table');
    const row = table.getByRole('row').filter({ has: page.getByRole('link', { name: agentRun }) });
    const tokens = row.locator('td[data-cell="tokens"]');
    await tokens.waitFor();
    const detail = await call<ApiRun>(`/runs/${encodeURIComponent(agentRun)}?expand=input,usage`);
    assert.ok(detail.usage, 'the echo agent records usage');
    const expectedTokens = (detail.usage.tokens.input ?? 0) + (detail.usage.tokens.output ?? 0);
    assert.ok(expectedTokens > 0);
    assert.equal(await tokens.innerText(), String(expectedTokens));
    assert.equal(
      await row.locator('td[data-cell="credits"]').innerText(),
      String(detail.usage.creditsCharged ?? '—'),
    );
    assert.equal(await row.locator('td[data-cell="input"]').innerText(), '{"text":"one two three"}');
    const output = await row.locator('td[data-cell="output"]').innerText();
    const whole = JSON.stringify(detail.output);
    assert.equal(output, whole.length > 40 ? `${whole.slice(0, 39)}…` : whole);
    // A workflow run's preview is its own input, not the agent's.
    const reportRow = table
      .getByRole('row')
      .filter({ has: page.getByRole('link', { name: reportRuns[0]! }) });
    await reportRow.locator('td[data-cell="input"]').waitFor();
    assert.equal(await reportRow.locator('td[data-cell="input"]').innerText(), '{"text":"first text"}');
    // Every row is filled in: none is left pending.
    await table.locator('[data-cell="pending"]').first().waitFor({ state: 'detached' });
    assert.equal(await table.locator('[data-cell="failed"]').count(), 0);
    await assertAccessible(page, 'the run list');
    await screenshot(page, 'automation-runs-usage');
    assertCleanPage(watched);
  });

  it('draws the steps of a run as bars on its time axis', async () => {
    await go(`#/automation/runs/${encodeURIComponent(slowRun)}?tab=steps`);
    const chart = page.getByTestId('waterfall');
    await chart.locator('tbody tr').nth(2).waitFor();
    const run = await call<ApiRun>(`/runs/${encodeURIComponent(slowRun)}`);
    const { steps } = await call<{ steps: ApiStep[] }>(`/runs/${encodeURIComponent(slowRun)}/steps`);
    assert.deepEqual(
      steps.map((s) => s.name),
      ['normalize', 'analyze', 'report'],
    );
    const t = (s: string | null) => new Date(s!).getTime();
    const origin = Math.min(t(run.timing.startedAt), ...steps.map((s) => t(s.startedAt)));
    const end = Math.max(t(run.timing.completedAt), ...steps.map((s) => t(s.completedAt)));
    const total = Math.max(1, end - origin);
    assert.equal(Number(await chart.getAttribute('data-total-ms')), total);
    const names = await chart.locator('tbody th').allInnerTexts();
    assert.deepEqual(names, ['normalize', 'analyze', 'report']);
    const bars = chart.locator('rect');
    for (const [i, step] of steps.entries()) {
      const bar = bars.nth(i);
      const offset = t(step.startedAt) - origin;
      const duration = t(step.completedAt) - t(step.startedAt);
      assert.equal(Number(await bar.getAttribute('data-offset-ms')), offset, `${step.name} start`);
      assert.equal(Number(await bar.getAttribute('data-duration-ms')), duration, `${step.name} length`);
      assert.ok(Math.abs(Number(await bar.getAttribute('x')) - (offset / total) * 1000) < 1e-6);
    }
    // The normalize step slept 150 ms, so its bar is at least 150 ms long.
    assert.ok(Number(await bars.nth(0).getAttribute('data-duration-ms')) >= 150);
    await assertAccessible(page, 'the step waterfall');
    await screenshot(page, 'automation-run-waterfall');
    assertCleanPage(watched);
  });

  it('reviews the queue with A, R and S, oldest unreviewed run first', async () => {
    // The slow run is reviewed already, so the queue holds the three text runs.
    await call(`/runs/${encodeURIComponent(slowRun)}/reviews`, {
      method: 'PUT',
      body: { verdict: 'correct' },
    });
    await go('#/automation/automations/workflows.text-report/review');
    await page.getByRole('heading', { level: 1, name: /^Review queue/ }).waitFor();
    // Waits on the page's state: the queue shows this run (a locator wait, no eval, which the CSP refuses).
    const shown = (id: string) => page.locator(`[data-testid="queue-run"][data-run-id="${id}"]`).waitFor();
    await shown(reportRuns[0]!);
    await page.getByLabel('Run input').getByText('"first text"').waitFor();
    await assertAccessible(page, 'the review queue');
    await screenshot(page, 'automation-review-queue');

    await page.keyboard.press('a');
    await shown(reportRuns[1]!);
    const first = await call<{ review: { verdict: string; status: string } | null }>(
      `/runs/${encodeURIComponent(reportRuns[0]!)}/reviews`,
    );
    assert.equal(first.review?.verdict, 'correct');
    assert.equal(first.review?.status, 'closed');

    // Letters typed into the note are text, not verdicts.
    const note = page.getByLabel('Note (optional)');
    await note.focus();
    await page.keyboard.type('rash');
    assert.equal(await note.inputValue(), 'rash');
    assert.equal(await page.getByTestId('queue-run').getAttribute('data-run-id'), reportRuns[1]);
    await page.getByRole('button', { name: 'Approve (A)' }).focus();
    await page.keyboard.press('r');
    await shown(reportRuns[2]!);
    const second = await call<{ review: { verdict: string; status: string; note: string | null } | null }>(
      `/runs/${encodeURIComponent(reportRuns[1]!)}/reviews`,
    );
    assert.equal(second.review?.verdict, 'incorrect');
    assert.equal(second.review?.status, 'open');
    assert.equal(second.review?.note, 'rash');

    await page.keyboard.press('s');
    await page.getByText('No runs left to review.').waitFor();
    const third = await call<{ review: unknown }>(`/runs/${encodeURIComponent(reportRuns[2]!)}/reviews`);
    assert.equal(third.review, null);
    assert.equal(await page.getByTestId('queue-count').innerText(), 'Reviewed in this visit: 2; skipped: 1');
    assert.deepEqual(await page.getByTestId('queue-log').locator('li').allInnerTexts(), [
      `${reportRuns[2]} skipped`,
      `${reportRuns[1]} rejected`,
      `${reportRuns[0]} approved`,
    ]);
    await assertAccessible(page, 'the emptied review queue');
    assertCleanPage(watched);
  });

  it('compares two experiments, the changed example first', async () => {
    const auto = '/automations/workflows.text-report';
    const examples = [
      ['one word', 'solo', 1],
      ['two words', 'alpha beta', 2],
      ['three words', 'alpha beta gamma', 3],
    ] as const;
    const ids: Record<string, string> = {};
    for (const [name, text, words] of examples) {
      const made = await call<{ id: string }>(`${auto}/examples`, {
        method: 'POST',
        body: { name, input: { text }, expected: { words } },
      });
      ids[name] = made.id;
      exampleIds[name] = made.id;
    }
    await call(`${auto}/evaluators`, {
      method: 'PUT',
      body: {
        yaml: 'passThreshold: 1\nevaluators:\n  - { name: words, type: equals, path: /words, value: { $expected: /words } }\n',
      },
    });
    const experiment = async () => {
      const { id } = await call<{ id: string }>(`${auto}/experiments`, { method: 'POST', body: {} });
      // Waits on the experiment's state (a hang guard, not a timing margin).
      for (let i = 0; ; i++) {
        const x = await call<{ status: string }>(`${auto}/experiments/${encodeURIComponent(id)}`);
        if (x.status === 'completed') return id;
        assert.ok(i < 600, `experiment ${id} did not complete`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const first = await experiment();
    // The second experiment expects 5 words of the two-word example, so that example fails.
    await call(`${auto}/examples/${encodeURIComponent(ids['two words']!)}`, {
      method: 'PATCH',
      body: { expected: { words: 5 } },
    });
    const second = await experiment();

    await go(`#/automation${auto}/experiments`);
    await page.getByRole('link', { name: 'Compare two experiments' }).click();
    await page.getByRole('heading', { level: 1, name: /^Compare experiments/ }).waitFor();
    // The newest two, the older as the baseline.
    const table = page.getByTestId('compare-table');
    await table.locator('tbody tr').nth(2).waitFor();
    assert.equal(await page.getByLabel('Baseline (A)').inputValue(), first);
    assert.equal(await page.getByLabel('Candidate (B)').inputValue(), second);
    assert.equal(
      await page.getByTestId('compare-changed').innerText(),
      '1 of 3 examples changed; they are listed first.',
    );
    const rows = table.locator('tbody tr');
    assert.equal(await rows.nth(0).locator('th').innerText(), 'two words');
    assert.equal(await rows.nth(0).getAttribute('data-changed'), 'true');
    const cells = await rows.nth(0).locator('td').allInnerTexts();
    assert.deepEqual(
      cells.map((c) => c.split('\n')[0]),
      ['changed', '1 ✓ → 0 ✗'],
    );
    for (const n of [1, 2]) {
      assert.equal(await rows.nth(n).getAttribute('data-changed'), 'false');
      assert.equal((await rows.nth(n).locator('td').allInnerTexts())[0], 'same');
    }
    const summary = await page
      .getByTestId('compare-summary')
      .getByRole('row', { name: /Passed/ })
      .locator('td')
      .allInnerTexts();
    assert.deepEqual(summary, ['3 / 0', '2 / 1']);
    await assertAccessible(page, 'the experiment comparison');
    await screenshot(page, 'automation-experiment-compare');

    // Swapping the sides through the pickers moves the baseline into the hash.
    await page.getByLabel('Baseline (A)').selectOption(second);
    await page.getByText('Pick two different experiments.').waitFor();
    assert.match(page.url(), new RegExp(`a=${second}`));
    assertCleanPage(watched);
  });

  it('searches runs in one box: a review note, an example id, a run id, metadata, as the API answers', async () => {
    await go('#/automation/runs');
    const table = page.getByTestId('runs-table');
    const box = page.getByRole('searchbox', { name: 'Search runs' });
    /** Searches in the box and waits until the table lists exactly the runs the API finds. */
    const search = async (term: string) => {
      const { runs } = await call<{ runs: { id: string }[] }>(
        `/runs?search=${encodeURIComponent(term)}&limit=50`,
      );
      assert.ok(runs.length > 0, `the API finds runs for ${term}`);
      await box.fill(term);
      await page.getByRole('button', { name: 'Apply filters' }).click();
      for (const run of runs) await table.getByRole('link', { name: run.id }).waitFor();
      // Exactly that many rows (locator waits: the console's CSP refuses page-side eval).
      await table
        .locator('tbody tr')
        .nth(runs.length - 1)
        .waitFor();
      await table.locator('tbody tr').nth(runs.length).waitFor({ state: 'detached' });
      assert.match(page.url(), new RegExp(`search=${encodeURIComponent(term)}`), 'the search is in the link');
      return runs.map((r) => r.id);
    };
    // The note "rash" was written in the review queue (any case matches).
    assert.deepEqual(await search('RASH'), [reportRuns[1]]);
    // Part of an example id: the runs of that example, one per experiment.
    const example = exampleIds['two words']!;
    assert.equal((await search(example.slice(-12))).length, 2);
    await assertAccessible(page, 'the run list searched by example id');
    await screenshot(page, 'automation-runs-search');
    // Part of a run id.
    assert.ok((await search(agentRun.slice(-10))).includes(agentRun));
    // A string in the run's input metadata.
    assert.deepEqual(await search('initech'), [slowRun]);
    assertCleanPage(watched);
  });
});
