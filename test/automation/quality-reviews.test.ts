// Reviews, corrected files, promotion to the dataset, run-list review filters and review health.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { strToU8, unzipSync } from 'fflate';
import { ServiceClient, ClientNotFoundError } from '../../src/automation/client/index.js';
import { startHarness, type Harness } from './harness.js';
import { HANG_MS } from '../helpers/wait.js';

const A = 'workflows.text-report';
let h: Harness;
let client: ServiceClient;
const runs: string[] = [];

before(async () => {
  h = await startHarness();
  client = new ServiceClient({ api_key: h.token, base_url: h.url, env: {} });
  for (let i = 0; i < 10; i++) {
    const r = await h.api('POST', '/runs?wait_for_completion=30', {
      body: { target: A, input: { text: `hello ${i}` } },
    });
    assert.equal(r.body.execution.status, 'completed');
    runs.push(r.body.id);
    await new Promise((res) => setTimeout(res, 3)); // distinct creation times keep the fixture's order exact
  }
});
after(async () => {
  await h?.close();
});

describe('reviews', () => {
  it('puts, reads, replaces and deletes a review; unfinished runs and bad bodies are refused', async () => {
    const id = runs[9]!;
    assert.equal((await client.runs.reviews.get(id))['review'], null);
    const put = await client.runs.reviews.put(id, {
      verdict: 'incorrect',
      note: 'wrong count',
      correctedOutput: { words: 9 },
    });
    const review = put['review'] as Record<string, unknown>;
    assert.equal(review['status'], 'closed', 'a verdict closes the review by default');
    assert.equal(review['reviewedBy'], 'admin');
    assert.deepEqual(review['correctedOutput'], { words: 9 });
    const nit = await client.runs.reviews.put(id, { verdict: null, note: 'typo' });
    assert.equal((nit['review'] as Record<string, unknown>)['status'], 'open');
    for (const body of [
      { verdict: 'maybe' },
      { status: 'done' },
      { corrections: [{ kind: 'cell', path: '/x' }] },
      { extra: 1 },
    ]) {
      const r = await h.api('PUT', `/runs/${id}/reviews`, { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.ok(r.body.requestId);
    }
    const deleted = await client.runs.reviews.delete(id);
    assert.equal(deleted['deleted'], true);
    assert.equal((await client.runs.reviews.get(id))['review'], null);
    await assert.rejects(client.runs.reviews.delete(id), ClientNotFoundError);
    await assert.rejects(client.runs.reviews.get('run_missing'), ClientNotFoundError);

    const slow = await h.api('POST', '/runs', {
      body: { target: A, input: { text: 'slow', delay_ms: 60_000 } },
    });
    const refused = await h.api('PUT', `/runs/${slow.body.id}/reviews`, { body: { verdict: 'correct' } });
    assert.equal(refused.status, 409);
    await h.api('POST', `/runs/${slow.body.id}/cancel`);
    await h.service.core.runs.waitFor(slow.body.id, HANG_MS);
  });

  it('manages corrected files (upload, copy from output, rename, download, delete) and bundles them', async () => {
    const id = runs[8]!;
    await assert.rejects(
      client.runs.reviews.uploadExpected(id, strToU8('x'), { name: 'x.txt' }),
      ClientNotFoundError,
    );
    await client.runs.reviews.put(id, {
      verdict: 'correct',
      corrections: [{ kind: 'file', path: 'report.md', correctedArtifactPath: 'expected/fixed.md' }],
    });
    const content = strToU8('# fixed report\n');
    await client.runs.reviews.uploadExpected(id, content, { name: 'fixed.md' });
    await client.runs.reviews.copyOutputToExpected(id, 'report.md', { expectedName: 'copy.md' });
    const listed = (await client.runs.reviews.listExpected(id))['files'] as { name: string }[];
    assert.deepEqual(listed.map((f) => f.name).sort(), ['copy.md', 'fixed.md']);
    assert.deepEqual(await client.runs.reviews.downloadExpected(id, 'fixed.md'), content);
    const output = await h.api('GET', `/runs/${id}/artifacts/output/report.md`);
    assert.deepEqual(
      new Uint8Array(await client.runs.reviews.downloadExpected(id, 'copy.md')),
      new Uint8Array(output.body),
    );
    await client.runs.reviews.updateExpected(id, 'copy.md', { name: 'renamed.md' });
    await assert.rejects(client.runs.reviews.downloadExpected(id, 'copy.md'), ClientNotFoundError);
    const badName = await h.api('PATCH', `/runs/${id}/reviews/expected/renamed.md`, {
      body: { name: '../x' },
    });
    assert.equal(badName.status, 400);
    const noOutput = await h.api('POST', `/runs/${id}/reviews/expected`, {
      body: { outputFileName: 'nope.md' },
    });
    assert.equal(noOutput.status, 404);
    await client.runs.reviews.deleteExpected(id, 'renamed.md');
    const bundle = await h.api('GET', `/runs/${id}/artifacts?zip=1&bundle=review`);
    const entries = unzipSync(new Uint8Array(bundle.body));
    assert.deepEqual(entries['expected/fixed.md'], content);
    assert.ok(entries['output/report.md']);
    const run = await client.runs.get(id);
    assert.equal((run.execution as { review?: { hasCorrections: boolean } }).review?.hasCorrections, true);
  });

  it('promotes a reviewed run to a dataset example with the corrected output and files', async () => {
    const id = runs[7]!;
    await client.runs.reviews.put(id, {
      verdict: 'incorrect',
      correctedOutput: { text: 'hello 7', words: 2, fixed: true },
    });
    await client.runs.reviews.uploadExpected(id, strToU8('expected bytes'), { name: 'expected.txt' });
    const promoted = await client.runs.promote(id, { name: 'from review' });
    assert.equal(promoted['name'], 'from review');
    assert.equal(promoted['automationType'], 'workflow');
    const ex = await client.automations.examples.get(A, String(promoted['exampleId']));
    assert.deepEqual(ex.expected, { text: 'hello 7', words: 2, fixed: true });
    assert.deepEqual(ex.input, { text: 'hello 7' });
    assert.deepEqual(
      await client.automations.examples.expected.download(A, ex.id, 'expected.txt'),
      strToU8('expected bytes'),
    );
    assert.equal((ex.metadata as Record<string, unknown>)['promotedFromRunId'], id);
    // Without a review the run's own output and output files become the expectation.
    const plain = await client.runs.promote(runs[3]!, {});
    const ex2 = await client.automations.examples.get(A, String(plain['exampleId']));
    assert.equal((ex2.expected as { text: string }).text, 'hello 3');
    assert.deepEqual((await client.automations.examples.expected.list(A, ex2.id)).files, ['report.md']);
    await client.runs.reviews.delete(id);
  });

  it('refuses to promote a run whose expected value would not be a JSON object', async () => {
    const id = runs[6]!;
    const before = (await client.automations.examples.list(A, { limit: 1000 })).total;
    await client.runs.reviews.put(id, { verdict: 'incorrect', correctedOutput: 'just text' });
    const r = await h.api('POST', `/runs/${id}/promote`, { body: { exampleId: 'ex_promoted_text' } });
    assert.equal(r.status, 400);
    assert.equal(r.body.issues[0].field, 'expected');
    assert.equal((await client.automations.examples.list(A, { limit: 1000 })).total, before);
    await client.runs.reviews.delete(id);
  });

  it('computes review health on a fixture of known verdicts, and the run list filters by review', async () => {
    for (const id of runs)
      if ((await client.runs.reviews.get(id))['review']) await client.runs.reviews.delete(id);
    const verdicts: Record<number, 'correct' | 'incorrect' | null> = {
      0: 'correct',
      1: 'correct',
      2: 'incorrect',
      4: 'correct',
      5: null,
      6: 'correct',
      8: 'correct',
    };
    for (const [i, verdict] of Object.entries(verdicts))
      await client.runs.reviews.put(runs[Number(i)]!, {
        verdict,
        note: i === '2' ? 'Bad Total' : null,
        ...(i === '2' ? { correctedOutput: {} } : {}),
      });

    const health = await client.automations.reviews.health(A, {
      rollingWindow: 3,
      minRollingReviews: 2,
    });
    const s = health['summary'] as Record<string, any>;
    assert.equal(s['totalRuns'], 11, '10 fixture runs and the cancelled one');
    assert.equal(s['reviewedRuns'], 7);
    assert.equal(s['correctReviews'], 5);
    assert.equal(s['incorrectReviews'], 1);
    assert.equal(s['nitReviews'], 1);
    assert.ok(Math.abs(s['reviewCoverage'] - 7 / 11) < 1e-12);
    assert.ok(Math.abs(s['reviewedCorrectness'] - 5 / 6) < 1e-12);
    // Wilson 95% for 5 of 6 (published tables: 0.4365 – 0.9699).
    assert.ok(Math.abs(s['confidence'].lower - 0.43649) < 1e-4, String(s['confidence'].lower));
    assert.ok(Math.abs(s['confidence'].upper - 0.96994) < 1e-4, String(s['confidence'].upper));
    assert.equal(s['confidence'].method, 'wilson');

    const completedOnly = await h.api(
      'GET',
      `/automations/${A}/reviews/health?status=completed&rolling_window=3&min_rolling_reviews=2`,
    );
    assert.equal(completedOnly.body.summary.totalRuns, 10);
    const rolling = completedOnly.body.rolling as Record<string, any>[];
    assert.equal(rolling.length, 6, 'one point per reviewed run once 2 reviews are in the window');
    const third = rolling[1]!; // window r0 r1 r2: 2 correct, 1 incorrect
    assert.equal(third.reviewedRuns, 3);
    assert.ok(Math.abs(third.reviewedCorrectness - 2 / 3) < 1e-12);
    const last = rolling[5]!; // window r5 (nit) r6 r8, spanning runs r5..r8
    assert.equal(last.runId, runs[8]);
    assert.equal(last.correctReviews, 2);
    assert.equal(last.reviewedCorrectness, 1);
    assert.equal(last.totalRunsInWindow, 4);
    assert.equal(last.reviewCoverage, 0.75);
    assert.ok(Math.abs(last.confidenceLower - 0.34237) < 1e-4, String(last.confidenceLower)); // Wilson 2 of 2
    assert.ok(last.confidenceUpper > 0.9999);

    const buckets = completedOnly.body.buckets as Record<string, any>[];
    assert.ok(buckets.length >= 30 && buckets.length <= 32, String(buckets.length));
    assert.equal(
      buckets.reduce((n, b) => n + b.totalRuns, 0),
      10,
    );
    assert.equal(buckets.at(-1)!.reviewedRuns, 7);
    const month = await h.api('GET', `/automations/${A}/reviews/health?bucket=month&from=-2d`);
    assert.ok(month.body.buckets.length <= 2);
    assert.equal(month.body.granularity.bucket, 'month');
    for (const [q, total] of [
      ['type=agent', 0],
      ['triggered_by=system', 0],
      ['triggered_by=admin&status=completed', 10],
      ['trigger=api&experiments=false&status=completed', 10],
      [`example_id_contains=zzz`, 0],
      ['from=2999-01-01&to=2999-01-02', 0],
      ['completed_before=-1d', 0],
    ] as const) {
      const r = await h.api('GET', `/automations/${A}/reviews/health?${q}`);
      assert.equal(r.status, 200, q);
      assert.equal(r.body.summary.totalRuns, total, q);
    }
    for (const q of [
      'bucket=year',
      'rolling_window=0',
      'from=garbage',
      'from=2020-01-01&bucket=day&to=2026-01-01',
    ]) {
      const r = await h.api('GET', `/automations/${A}/reviews/health?${q}`);
      assert.equal(r.status, 400, q);
    }

    const list = async (q: string) =>
      (await h.api('GET', `/runs?limit=100&source=${A}&${q}`)).body.runs as { id: string }[];
    assert.equal((await list('has_review=true')).length, 7);
    assert.equal((await list('hasReview=true')).length, 7);
    assert.equal((await list('review_verdict=incorrect')).length, 1);
    assert.equal((await list('review_verdict=nit')).length, 1);
    assert.equal((await list('review_status=open')).length, 1);
    assert.equal((await list('has_corrections=true')).length, 1);
    assert.equal((await list('review_note_contains=bad%20total')).length, 1);
    assert.equal((await list('no_review=true&status=completed')).length, 3);
    // Every run was created before the latest closed review.
    assert.equal((await list('since_last_closed=true')).length, 0);
  });
});
