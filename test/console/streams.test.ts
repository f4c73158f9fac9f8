// The streams section in a browser against `sluice streams` (the service alone serves its own
// console): create a topic, produce through the form and see the record arrive live over the
// push WebSocket, browse it, watch a consumer group's lag drop, and see the message when the
// service goes away.
import { strict as assert } from 'node:assert';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
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
import { waitUntil } from '../helpers/wait.js';

describe('console: streams section', { skip: browserSkipReason() }, () => {
  let sluice: RunningSluice;
  let browser: Browser;

  before(async () => {
    sluice = await startSluice({ command: 'streams' });
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await sluice?.stop();
  });

  /** Calls the streams API from the test (the consumer the page watches). */
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${sluice.urls.streams}${path}`, {
      method,
      headers: { authorization: `Bearer ${sluice.token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  };
  const instance = '/streams/consumers/billing/instances/c1';
  /** Fetches until `n` records came, then commits what was delivered. */
  const consume = async (n: number) => {
    let got = 0;
    await waitUntil(`${n} records consumed`, async () => {
      got += ((await call('GET', `${instance}/records?timeout=200`)) as unknown[]).length;
      return got >= n;
    });
    await call('POST', `${instance}/offsets`);
  };

  it('shows a topic’s size and configuration, and the live view connected, paused and resumed', async () => {
    await call('POST', '/streams/topics/topic', {
      topic_name: 'live-events',
      partitions: 2,
      configs: [
        { name: 'retention.ms', value: '3600000' },
        { name: 'retention.bytes', value: '1073741824' },
      ],
    });
    await call('POST', '/streams/topic/live-events', {
      records: [0, 1, 2].map((i) => ({ value: { i }, partition: i % 2 })),
    });
    const watched = await openPage(browser);
    const { page } = watched;
    try {
      await signIn(page, sluice.console, sluice.token);
      await page.evaluate(`location.hash = '#/streams/topics/live-events'`);
      await page.getByRole('heading', { name: 'Topic live-events' }).waitFor();
      const facts = page.getByTestId('topic-facts');
      await facts.waitFor();
      // Size in records: the sum of end minus beginning offsets the API reports.
      const info = (await call('GET', '/streams/topics/live-events')) as {
        partitions: { beginning_offset: number; end_offset: number }[];
      };
      const kept = info.partitions.reduce((n, p) => n + p.end_offset - p.beginning_offset, 0);
      assert.equal(kept, 3);
      assert.equal(await page.getByTestId('records-kept').innerText(), '3');
      assert.equal(await facts.locator('[data-config="retention.ms"]').innerText(), '1 h');
      assert.equal(await facts.locator('[data-config="retention.bytes"]').innerText(), '1 GiB');

      const state = page.getByTestId('live-state');
      assert.equal(await state.getAttribute('data-state'), 'off');
      await page.getByLabel('Follow new records as they are produced').check();
      await page.locator('[data-testid="live-state"][data-state="connected"]').waitFor();
      await call('POST', '/streams/topic/live-events', { records: [{ key: 'first-live', value: { n: 1 } }] });
      const live = page.getByRole('table', { name: 'Live records, newest first' });
      await live.getByText('first-live').waitFor();

      await page.getByRole('button', { name: 'Pause' }).click();
      await page.locator('[data-testid="live-state"][data-state="paused"]').waitFor();
      await call('POST', '/streams/topic/live-events', { records: [{ key: 'held-live', value: { n: 2 } }] });
      await state.getByText('1 new record held.').waitFor();
      assert.equal(await live.getByText('held-live').count(), 0, 'held, not shown, while paused');
      await assertAccessible(page, 'a topic with its configuration and a paused live view');
      await screenshot(page, 'streams-topic-live-paused');

      await page.getByRole('button', { name: 'Resume' }).click();
      await page.locator('[data-testid="live-state"][data-state="connected"]').waitFor();
      await live.getByText('held-live').waitFor();
      assert.deepEqual(
        (await live.locator('tbody tr td:nth-child(4)').allInnerTexts()).map((t) => t.trim()),
        ['held-live', 'first-live'],
      );
      await page.getByLabel('Follow new records as they are produced').uncheck();
      await page.locator('[data-testid="live-state"][data-state="off"]').waitFor();
      assertCleanPage(watched);
    } finally {
      await watched.close();
    }
  });

  it('creates a topic, produces, browses, follows live records and shows a group lag dropping', async () => {
    const watched = await openPage(browser);
    const { page } = watched;
    try {
      await signIn(page, sluice.console, sluice.token);
      const nav = page.getByRole('navigation', { name: 'Sections' });
      assert.deepEqual(await nav.getByRole('heading').allInnerTexts(), ['STREAMS'], 'only its own section');

      await nav.getByRole('link', { name: 'Topics' }).click();
      await page.getByLabel('Topic name').fill('orders');
      await page.getByLabel('Partitions').fill('2');
      await page.getByRole('button', { name: 'Create topic' }).click();
      await page.getByText("topic 'orders' created with 2 partitions").waitFor();
      await page.getByRole('link', { name: 'orders' }).click();
      await page.getByRole('heading', { name: 'Topic orders' }).waitFor();

      // Follow live records, then produce one through the form: it arrives over the WebSocket.
      await page.getByLabel('Follow new records as they are produced').check();
      await page.getByLabel('Key').fill('user-42');
      await page.getByLabel('Partition', { exact: true }).first().selectOption('1');
      await page.getByLabel('Value (JSON object)').fill('{"total": 12.5, "items": ["book"]}');
      await page.getByLabel('Headers').fill('trace-id: abc');
      // The live stream must be open before the record is produced (it starts at the end).
      await page.locator('[data-testid="live-state"][data-state="connected"]').waitFor();
      await waitUntil('the console consumer to join', async () => {
        const groups = (await call('GET', '/streams/consumer-groups')) as {
          consumer_groups: { group: string }[];
        };
        return groups.consumer_groups.some((g) => g.group.startsWith('sluice-console-'));
      });
      await page.getByRole('button', { name: 'Produce' }).click();
      await page.getByText('Stored at partition 1, offset 0.').waitFor();
      const live = page.getByRole('table', { name: 'Live records, newest first' });
      await live.getByText('user-42').waitFor();
      assert.match(await live.innerText(), /"total":12\.5/);

      // Browse partition 1 from the beginning: a table of offset, partition, time, key, headers, value.
      await page.getByLabel('Partition', { exact: true }).nth(1).selectOption('1');
      await page.getByLabel('Start at').selectOption('beginning');
      await page.getByRole('button', { name: 'Show records' }).click();
      const read = page.getByRole('table', { name: 'Records read' });
      await read.getByText('user-42').waitFor();
      const cells = await read.getByRole('row').nth(1).getByRole('cell').allInnerTexts();
      assert.deepEqual(cells.slice(0, 2), ['0', '1'], 'offset, partition');
      assert.match(cells[2]!, /^(just now|\d+ (s|min) ago)$/);
      assert.equal(cells[3], 'user-42');
      assert.equal(cells[4], 'trace-id: abc');
      assert.equal(cells[5], '{"total":12.5,"items":["book"]}');
      // The preview unfolds into the JSON viewer.
      await read.getByText('{"total":12.5,"items":["book"]}').click();
      await read.getByRole('group', { name: 'Value of partition 1 offset 0' }).waitFor();
      await assertAccessible(page, 'a topic with live and read records');
      await screenshot(page, 'streams-topic');
      await page.getByLabel('Follow new records as they are produced').uncheck();

      // A consumer group (driven by the test) with lag 3, then 0 once it has consumed.
      await call('POST', '/streams/consumers/billing', { name: 'c1', 'auto.offset.reset': 'earliest' });
      await call('POST', `${instance}/subscription`, { topics: ['orders'] });
      await consume(1);
      await call('POST', '/streams/topic/orders', {
        records: [0, 1, 2].map((i) => ({ value: { i }, partition: 0 })),
      });
      await nav.getByRole('link', { name: 'Consumer groups' }).click();
      // The list shows each group's lag (summed over the partitions it committed on).
      const billing = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'billing' }) });
      await waitUntil('the group list shows lag 3', async () =>
        /\b3$/.test((await billing.getByRole('cell').last().innerText()).trim()),
      );
      await assertAccessible(page, 'the consumer group list');
      await screenshot(page, 'streams-groups');
      await page.getByRole('link', { name: 'billing' }).click();
      const lag = page.getByTestId('total-lag');
      await page.getByRole('heading', { name: 'Consumer group billing' }).waitFor();
      await waitUntil('lag 3 shown', async () => (await lag.innerText()) === '3');
      const partitions = page.getByRole('table', { name: 'Partitions' });
      assert.match(await partitions.innerText(), /orders\s+0\s+c1\s+0\s+3\s+3/);
      await screenshot(page, 'streams-group-lag');
      await consume(3);
      await waitUntil('lag 0 shown', async () => (await lag.innerText()) === '0');
      await screenshot(page, 'streams-group');
      // The tail of partition 0, newest first, filtered by key and by value text.
      await nav.getByRole('link', { name: 'Topics' }).click();
      await page.getByRole('link', { name: 'orders' }).click();
      await page.getByRole('heading', { name: 'Topic orders' }).waitFor();
      await call('POST', '/streams/topic/orders', {
        records: ['apple', 'banana', 'cherry', 'apricot'].map((fruit, i) => ({
          key: `k-${fruit}`,
          value: { fruit, n: i },
          partition: 0,
        })),
      });
      await page.getByLabel('Partition', { exact: true }).nth(1).selectOption('0');
      await page.getByLabel('Start at').selectOption('tail');
      await page.getByLabel('Count').fill('3');
      await page.getByRole('button', { name: 'Show records' }).click();
      const tail = page.getByRole('table', { name: 'Records read, newest first' });
      await tail.getByText('k-apricot').waitFor();
      const keys = async () =>
        (await tail.locator('tbody tr td:nth-child(4)').allInnerTexts()).map((t) => t.trim());
      assert.deepEqual(await keys(), ['k-apricot', 'k-cherry', 'k-banana'], 'the last three, newest first');
      await page.getByLabel('Filter by key').fill('AP');
      await waitUntil('the key filter applied', async () => (await keys()).length === 1);
      assert.deepEqual(await keys(), ['k-apricot']);
      await page.getByLabel('Filter by key').fill('');
      await page.getByLabel('Filter by value text').fill('"n":1');
      await waitUntil('the value filter applied', async () => (await keys()).length === 1);
      assert.deepEqual(await keys(), ['k-banana']);
      await page.getByText('1 of 3 records match the filters').waitFor();
      await page.getByLabel('Filter by value text').fill('');
      await assertAccessible(page, 'the tail of a partition');
      await page.getByRole('heading', { name: 'Browse records' }).evaluate((el) => el.scrollIntoView());
      await screenshot(page, 'streams-records-tail');
      assertCleanPage(watched);

      // The service goes away: the view says so instead of showing stale numbers as current.
      watched.allow.push(/ERR_CONNECTION_REFUSED|Failed to load resource/);
      await sluice.stop();
      await page.getByText('The streams service did not answer').waitFor();
      assertCleanPage(watched);
    } finally {
      await watched.close();
    }
  });
});
