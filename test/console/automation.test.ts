// The automation section in a real browser against `sluice automation`: sign in, start a run and
// open it, review it with a corrected output and an expected file, promote it, configure an
// evaluator, run an experiment and watch it finish, read its scores, and the review health
// chart. Each flow ends with a screenshot and an assertion on what the page shows.

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
  startSluice,
  type RunningSluice,
  type WatchedPage,
} from '../helpers/browser.js';

const skip = browserSkipReason();

describe('console: automation section', { skip }, () => {
  let sluice: RunningSluice;
  let browser: Browser;
  let watched: WatchedPage;
  let page: Page;
  let runId = '';
  let exampleHref = '';

  before(async () => {
    sluice = await startSluice({ command: 'automation' });
    browser = await launchBrowser();
    watched = await openPage(browser);
    page = watched.page;
  });

  after(async () => {
    await watched?.close();
    await browser?.close();
    await sluice?.stop();
  });

  const go = async (hash: string) => {
    await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  };

  it('signs in and lists the automations', async () => {
    await page.goto(sluice.console);
    await page.getByLabel('API key').fill(sluice.token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    await go('#/automation');
    const row = page.getByRole('link', { name: 'Text report' });
    await row.waitFor();
    await screenshot(page, 'automation-list');
    assert.equal(await row.count(), 1);
    assertCleanPage(watched);
  });

  it('starts a run and opens it', async () => {
    await page.getByRole('link', { name: 'Text report' }).click();
    await page.getByRole('heading', { name: 'Start a run' }).waitFor();
    await page.getByLabel('Input (JSON object)').fill('{"text": "alpha beta beta"}');
    await page.getByRole('button', { name: 'Start run' }).click();
    await page.getByTestId('run-status').getByText('completed').waitFor();
    runId = decodeURIComponent(new URL(page.url()).hash.split('/').pop()!.split('?')[0]!);
    const output = page.getByTestId('run-output');
    await output.getByText('"alpha beta beta"').first().waitFor();
    await page.getByRole('tab', { name: 'Files' }).click();
    await page.getByRole('button', { name: 'Preview output/report.md' }).click();
    const text = page.getByLabel('Text of report.md');
    await text.waitFor();
    await screenshot(page, 'automation-run');
    assert.match((await text.textContent()) ?? '', /words: 3/);
    assert.match(runId, /^[A-Za-z0-9_.@-]+$/);
    // Times: relative, with the full UTC timestamp (milliseconds) on hover.
    const created = page.locator('dt', { hasText: 'Created' }).locator('xpath=following-sibling::dd[1]/time');
    assert.match((await created.getAttribute('title')) ?? '', /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC$/);
    assert.match(await created.innerText(), /^(just now|\d+ (s|min) ago)$/);
    // Events carry milliseconds, so steps a few ms apart are told apart.
    await page.getByRole('tab', { name: 'Events' }).click();
    const firstEventTime = page.getByRole('tabpanel').locator('tbody tr').first().locator('time');
    await firstEventTime.waitFor();
    assert.match(await firstEventTime.innerText(), /^\d\d:\d\d:\d\d\.\d{3}$/);
    await assertAccessible(page, 'the run page');
    assertCleanPage(watched);
  });

  it('names the automation on its pages, and empty lists say what to do next', async () => {
    await go('#/automation');
    const link = page.getByRole('link', { name: 'Text report' });
    await link.waitFor();
    const automationPath = (await link.getAttribute('href')) ?? '';
    await go(`${automationPath}/dataset`);
    await page.getByRole('heading', { level: 1, name: 'Dataset · Text report' }).waitFor();
    const noExamples = page.getByTestId('examples-table').getByText('No examples yet.');
    await noExamples.waitFor();
    assert.match(await noExamples.innerText(), /Add example/);
    await assertAccessible(page, 'the empty dataset');
    await screenshot(page, 'automation-dataset-empty');
    await go(`${automationPath}/experiments`);
    await page.getByRole('heading', { level: 1, name: 'Experiments · Text report' }).waitFor();
    await page.getByText('No experiments yet.').waitFor();
    await go(`${automationPath}/evaluators`);
    await page.getByRole('heading', { level: 1, name: 'Evaluators · Text report' }).waitFor();
    await go(`${automationPath}/health`);
    await page.getByRole('heading', { level: 1, name: 'Review health · Text report' }).waitFor();
    await go(`#/automation/runs/${encodeURIComponent(runId)}`);
    await page.getByTestId('run-status').getByText('completed').waitFor();
    assertCleanPage(watched);
  });

  it('reviews the run with a corrected output and an expected file', async () => {
    await page.getByRole('tab', { name: 'Review' }).click();
    await page.getByTestId('review-state').getByText('Not reviewed yet.').waitFor();
    await page.getByLabel('Incorrect').check();
    await page.getByLabel('Note').fill('beta is counted once too often');
    await page.getByLabel('This run has a corrected output').check();
    const editor = page.getByLabel('Corrected output (JSON)');
    // A value the output schema refuses is flagged in the page before anything is sent.
    const corrected = (words: unknown) =>
      JSON.stringify({
        text: 'alpha beta beta',
        words,
        characters: 15,
        topWords: ['beta', 'alpha'],
        report: 'report.md',
      });
    await editor.fill(corrected('two'));
    await page.getByTestId('schema-problems').getByText('must be integer, is string').waitFor();
    await editor.fill(corrected(2));
    await page.getByTestId('schema-problems').getByText('Matches the output schema.').waitFor();
    await page.getByRole('button', { name: 'Save review' }).click();
    await page.getByTestId('review-state').getByText('incorrect, open').waitFor();
    await page.getByText('Review saved.').waitFor();

    await page.getByLabel('File to upload').setInputFiles({
      name: 'expected.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from('# Text report\n\n- words: 2\n'),
    });
    await page.getByRole('button', { name: 'Upload', exact: true }).click();
    await page.getByTestId('expected-files').locator('code', { hasText: 'expected.md' }).waitFor();
    await page.getByRole('button', { name: 'Copy from output' }).click();
    await page.getByTestId('expected-files').locator('code', { hasText: 'report.md' }).waitFor();
    await page.getByRole('button', { name: 'Delete report.md' }).click();
    await page
      .getByTestId('expected-files')
      .locator('code', { hasText: 'report.md' })
      .waitFor({ state: 'detached' });
    await screenshot(page, 'automation-review');
    assert.deepEqual(await page.getByTestId('expected-files').locator('code').allTextContents(), [
      'expected.md',
    ]);
    assertCleanPage(watched);
  });

  it('promotes the run to a dataset example', async () => {
    await page.getByLabel('Example name (optional)').fill('alpha-beta');
    await page.getByRole('button', { name: 'Promote' }).click();
    const link = page.getByTestId('promoted').getByRole('link', { name: 'alpha-beta' });
    await link.waitFor();
    exampleHref = (await link.getAttribute('href')) ?? '';
    await link.click();
    await page.getByRole('heading', { name: 'alpha-beta' }).waitFor();
    await page.getByTestId('example-expected-files').locator('code', { hasText: 'expected.md' }).waitFor();
    await screenshot(page, 'automation-example');
    // The expected output is the corrected one (2 words), not the run's (3).
    const expected = (await page.getByTestId('example-expected').textContent()) ?? '';
    assert.match(expected, /words: 2/);
    assertCleanPage(watched);
  });

  it('shows the server’s evaluator config messages at their lines, then saves a valid config', async () => {
    const automationId = decodeURIComponent(exampleHref.split('/')[3] ?? '');
    // The refused PUT is logged by the browser as a failed resource; that one is expected.
    watched.allow.push(/status of 400 \(Bad Request\)/);
    await go(`#/automation/automations/${encodeURIComponent(automationId)}/evaluators`);
    const yaml = page.getByLabel('Evaluator config (YAML)');
    await yaml.waitFor();
    await yaml.fill('passThreshold: 3\nevaluators:\n  - { name: words, type: nope }\n');
    await page.getByRole('button', { name: 'Validate and save' }).click();
    const issues = page.getByTestId('evaluator-issues');
    await issues.waitFor();
    assert.ok((await issues.getByRole('button', { name: 'line 1' }).count()) >= 1);
    assert.ok((await issues.getByRole('button', { name: 'line 3' }).count()) >= 1);
    await screenshot(page, 'automation-evaluators-invalid');
    await yaml.fill(
      'passThreshold: 0.5\nevaluators:\n  - { name: words, type: equals, path: /words, value: { $expected: /words } }\n' +
        '  - { name: has-alpha, type: contains, path: /text, value: alpha }\n',
    );
    await page.getByRole('button', { name: 'Validate and save' }).click();
    await page.getByText('Saved: the server accepted the config.').waitFor();
    assert.equal(await page.getByTestId('evaluator-issues').count(), 0);
    assertCleanPage(watched);
    watched.allow.pop();
  });

  it('runs an experiment from a selected example, watches it finish and reads its scores', async () => {
    const automationId = decodeURIComponent(exampleHref.split('/')[3] ?? '');
    await go(`#/automation/automations/${encodeURIComponent(automationId)}/dataset`);
    await page.getByLabel('Select alpha-beta').check();
    await page.getByRole('button', { name: 'Start an experiment from 1 selected' }).click();
    await page.getByRole('button', { name: 'Start experiment' }).click();
    const progress = page.getByTestId('experiment-progress');
    await progress.getByText('1 of 1 runs finished — experiment finished.').waitFor();
    await page.getByRole('link', { name: /^Open experiment / }).click();
    await page.getByTestId('experiment-status').getByText('completed').waitFor();
    const table = page.getByTestId('scores-table');
    await table.getByRole('columnheader', { name: 'words' }).waitFor();
    await screenshot(page, 'automation-experiment');
    // The rerun of the example again counts 3 words; the expected output (corrected) says 2.
    const row = table.getByRole('row', { name: /alpha-beta/ });
    const cells = await row.locator('td').allTextContents();
    assert.equal(cells.length, 4, `cells: ${cells.join(' | ')}`);
    assert.match(cells[2]!, /^0 ✗/);
    assert.match(cells[3]!, /^1 ✓/);
    assert.equal(await page.getByTestId('experiment-avg').textContent(), '0.5');
    assertCleanPage(watched);
  });

  it('draws review health with its confidence band', async () => {
    const automationId = decodeURIComponent(exampleHref.split('/')[3] ?? '');
    await go(`#/automation/automations/${encodeURIComponent(automationId)}/health`);
    const chart = page.getByTestId('health-chart');
    await chart.waitFor();
    await assertAccessible(page, 'review health');
    await screenshot(page, 'automation-health');
    assert.equal(await chart.locator('path.sa-chart-band').count(), 1);
    assert.match((await page.getByTestId('health-summary').textContent()) ?? '', /0 \/ 1 \/ 0/);
    assertCleanPage(watched);
  });

  it('lists runs with a filter and pages with the cursor at a narrow width', async () => {
    await page.setViewportSize({ width: 420, height: 800 });
    await go(`#/automation/runs?status=completed&limit=25`);
    const table = page.getByTestId('runs-table');
    await table.waitFor();
    await table.getByRole('link', { name: runId }).waitFor();
    await screenshot(page, 'automation-runs-narrow');
    const statuses = await table.locator('tbody .sa-status').allTextContents();
    assert.ok(statuses.length >= 2);
    assert.ok(statuses.every((s) => s === 'completed'));
    assertCleanPage(watched);
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
