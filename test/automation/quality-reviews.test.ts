// Reviews, corrected files, promotion to the dataset, run-list review filters and review health.
import * as assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { strToU8, unzipSync } from 'fflate';
import { ServiceClient, ClientNotFoundError } from '../../src/automation/client/index.js';
import type { KeyStore } from '../../src/core/auth/index.js';
import {
  PromoteRunResponse,
  RunReviewDetail,
  RunReviewExpectedArtifacts,
  RunReviewExpectedFileMutationResponse,
  RunReviewExpectedFileUpdateResponse,
  RunReviewHealthResponse,
} from '../../src/automation/wire/reviews.js';
import { startHarness, type Harness } from './harness.js';
import { HANG_MS } from '../helpers/wait.js';

/** The body is exactly the SDK type: required fields present, nothing extra (Closed schemas). */
function shaped<T>(schema: TSchema, value: T): T {
  const first = [...Value.Errors(schema, value)][0];
  assert.ok(!first, `${String(schema.$id)}: ${first?.path} ${first?.message} in ${JSON.stringify(value)}`);
  return value;
}

const A = 'workflows.text-report';
let h: Harness;
let client: ServiceClient;
let otherTenant: string;
const runs: string[] = [];

before(async () => {
  h = await startHarness();
  otherTenant = (
    await (h.ctx.ctx.auth as KeyStore).create({ tenant: 'other', user: 'o', scopes: ['automation'] })
  ).token;
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
  it('puts, reads, replaces and clears a review; unfinished runs and bad bodies are refused', async () => {
    const id = runs[9]!;
    assert.deepEqual(shaped(RunReviewDetail, await client.runs.reviews.get(id)), { review: null });
    const put = shaped(
      RunReviewDetail,
      await client.runs.reviews.put(id, {
        verdict: 'incorrect',
        note: 'wrong count',
        correctedOutput: { words: 9 },
        corrections: [
          { kind: 'field', path: '/words', originalValue: 2, correctedValue: 9 },
          { id: 'corr_mine', kind: 'file', path: 'output/report.md', label: 'report' },
        ],
      }),
    );
    const review = put['review'] as Record<string, any>;
    assert.match(review['id'], /^rev_[0-9a-f]+$/);
    assert.equal(review['status'], 'open', 'only a correct verdict closes the review by default');
    assert.equal(review['closedAt'], null);
    assert.equal(review['reviewedBy'], 'admin');
    assert.equal(review['reviewedByEmail'], null);
    assert.ok(Date.parse(review['reviewedAt']) > 0);
    assert.deepEqual(review['correctedOutput'], { words: 9 });
    const [c1, c2] = review['corrections'] as Record<string, any>[];
    assert.match(c1!['id'], /^corr_[0-9a-f]+$/);
    assert.deepEqual(
      { ...c1, id: undefined, createdAt: undefined, updatedAt: undefined },
      {
        id: undefined,
        kind: 'field',
        path: '/words',
        label: null,
        note: '',
        originalValue: 2,
        correctedValue: 9,
        createdAt: undefined,
        updatedAt: undefined,
      },
    );
    assert.equal(c2!['id'], 'corr_mine');
    assert.equal(c2!['label'], 'report');

    // Omitted note, corrected output and corrections are kept; verdict and status are set anew.
    const closed = shaped(RunReviewDetail, await client.runs.reviews.put(id, { verdict: 'correct' }));
    const r2 = closed['review'] as Record<string, any>;
    assert.equal(r2['id'], review['id']);
    assert.equal(r2['status'], 'closed');
    assert.equal(r2['closedBy'], 'admin');
    assert.equal(r2['closedNote'], 'wrong count');
    assert.equal(r2['note'], 'wrong count');
    assert.deepEqual(r2['correctedOutput'], { words: 9 });
    assert.deepEqual(
      (r2['corrections'] as { id: string }[]).map((c) => c.id),
      [c1!['id'], 'corr_mine'],
    );
    // A correction sent again with its id keeps its id and creation time; null clears the output.
    const nit = shaped(
      RunReviewDetail,
      await client.runs.reviews.put(id, {
        verdict: null,
        note: null,
        correctedOutput: null,
        corrections: [{ id: 'corr_mine', kind: 'file', path: 'output/report.md' }],
      }),
    );
    const r3 = nit['review'] as Record<string, any>;
    assert.equal(r3['status'], 'open');
    assert.equal(r3['verdict'], null);
    assert.equal(r3['note'], '');
    assert.equal(r3['closedAt'], null);
    assert.equal('correctedOutput' in r3, false);
    assert.equal(r3['corrections'].length, 1);
    assert.equal(r3['corrections'][0].createdAt, c2!['createdAt']);
    // The run record carries what the run views' RunReviewSummary is made of.
    const summary = (await h.service.core.runs.get(id))!.review!;
    assert.deepEqual(
      [summary.verdict, summary.status, summary.note, summary.correctionCount],
      [null, 'open', '', 1],
    );

    for (const body of [
      { verdict: 'maybe' },
      { status: 'done' },
      { corrections: [{ kind: 'cell', path: '/x' }] },
      { corrections: [{ kind: 'field' }] },
      { corrections: [{ id: 'a b', kind: 'field', path: '/x' }] },
      {
        corrections: [
          { id: 'same', kind: 'field', path: '/x' },
          { id: 'same', kind: 'field', path: '/y' },
        ],
      },
      { note: 5 },
    ]) {
      const r = await h.api('PUT', `/runs/${id}/reviews`, { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.ok(r.body.requestId);
    }
    assert.equal((await h.api('GET', `/runs/${id}/reviews`, { token: otherTenant })).status, 404);
    assert.equal(
      (await h.api('PUT', `/runs/${id}/reviews`, { token: otherTenant, body: { verdict: 'correct' } }))
        .status,
      404,
    );
    assert.equal((await h.api('DELETE', `/runs/${id}/reviews`, { token: otherTenant })).status, 404);

    const cleared = await h.api('DELETE', `/runs/${id}/reviews`);
    assert.equal(cleared.status, 200);
    assert.deepEqual(shaped(RunReviewDetail, cleared.body), { review: null });
    assert.deepEqual(await client.runs.reviews.get(id), { review: null });
    assert.deepEqual(
      await client.runs.reviews.delete(id),
      { review: null },
      'clearing twice is the same state',
    );
    const again = (await client.runs.reviews.put(id, { verdict: 'correct' }))['review'] as Record<
      string,
      any
    >;
    assert.notEqual(again['id'], review['id'], 'a new review after a clear has a new id');
    await client.runs.reviews.delete(id);
    await assert.rejects(client.runs.reviews.get('run_missing'), ClientNotFoundError);

    const slow = await h.api('POST', '/runs', {
      body: { target: A, input: { text: 'slow', delay_ms: 60_000 } },
    });
    const refused = await h.api('PUT', `/runs/${slow.body.id}/reviews`, { body: { verdict: 'correct' } });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.issues[0].code, 'run_not_finished');
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
    const up = await client.runs.reviews.uploadExpected(id, content, { name: 'fixed.md' });
    assert.deepEqual(shaped(RunReviewExpectedFileMutationResponse, up), { name: 'fixed.md' });
    const copied = await h.api('POST', `/runs/${id}/reviews/expected`, {
      body: { outputFileName: 'report.md', expectedName: 'copy.md' },
    });
    assert.equal(copied.status, 201);
    assert.deepEqual(shaped(RunReviewExpectedFileMutationResponse, copied.body), { name: 'copy.md' });
    const listed = shaped(RunReviewExpectedArtifacts, await client.runs.reviews.listExpected(id));
    assert.deepEqual(listed, { files: [{ name: 'fixed.md' }, { name: 'copy.md' }] });
    const raw = await h.api('GET', `/runs/${id}/reviews/expected/fixed.md`);
    assert.equal(raw.status, 200);
    assert.equal(raw.headers.get('content-type'), 'application/octet-stream');
    assert.deepEqual(new Uint8Array(raw.body), content);
    const output = await h.api('GET', `/runs/${id}/artifacts/output/report.md`);
    assert.deepEqual(
      new Uint8Array(await client.runs.reviews.downloadExpected(id, 'copy.md')),
      new Uint8Array(output.body),
    );
    const renamed = await h.api('PATCH', `/runs/${id}/reviews/expected/copy.md`, {
      body: { name: 'renamed.md' },
    });
    assert.equal(renamed.status, 200);
    assert.deepEqual(shaped(RunReviewExpectedFileUpdateResponse, renamed.body), { name: 'renamed.md' });
    await assert.rejects(client.runs.reviews.downloadExpected(id, 'copy.md'), ClientNotFoundError);
    for (const [body, status] of [
      [{ name: '../x' }, 400],
      [{ name: 'a/b' }, 400],
      [{}, 400],
      [{ name: 'fixed.md' }, 409],
    ] as const) {
      const r = await h.api('PATCH', `/runs/${id}/reviews/expected/renamed.md`, { body });
      assert.equal(r.status, status, JSON.stringify(body));
    }
    const noOutput = await h.api('POST', `/runs/${id}/reviews/expected`, {
      body: { outputFileName: 'nope.md' },
    });
    assert.equal(noOutput.status, 404);
    const noBody = await h.api('POST', `/runs/${id}/reviews/expected`, {
      raw: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    assert.equal(noBody.status, 415);
    assert.equal(
      (await h.api('GET', `/runs/${id}/reviews/expected/fixed.md`, { token: otherTenant })).status,
      404,
    );
    const deleted = await h.api('DELETE', `/runs/${id}/reviews/expected/renamed.md`);
    assert.equal(deleted.status, 204);
    assert.equal(deleted.body.length, 0);
    assert.equal((await h.api('DELETE', `/runs/${id}/reviews/expected/renamed.md`)).status, 404);
    const bundle = await h.api('GET', `/runs/${id}/artifacts?zip=1&bundle=review`);
    const entries = unzipSync(new Uint8Array(bundle.body));
    assert.deepEqual(entries['expected/fixed.md'], content);
    assert.equal(entries['expected/renamed.md'], undefined);
    assert.ok(entries['output/report.md']);
    // The run's review summary (what has_corrections filters on) counts the corrected files.
    assert.equal((await h.service.core.runs.get(id))!.review!.hasCorrections, true);
    assert.equal((await h.api('GET', `/runs?limit=100&ids=${id}&has_corrections=true`)).body.runs.length, 1);
    // Changes to one review are applied one at a time: none of these concurrent ones is lost.
    const names = ['c1.txt', 'c2.txt', 'c3.txt', 'c4.txt', 'c5.txt'];
    await Promise.all([
      ...names.map((n) => client.runs.reviews.uploadExpected(id, strToU8(n), { name: n })),
      client.runs.reviews.put(id, { verdict: 'correct', note: 'while uploading' }),
    ]);
    const all = (await client.runs.reviews.listExpected(id))['files'] as { name: string }[];
    assert.deepEqual(all.map((f) => f.name).sort(), [...names, 'fixed.md']);
    // Clearing the review removes its files too.
    await client.runs.reviews.delete(id);
    assert.deepEqual(await client.runs.reviews.listExpected(id), { files: [] });
    const after = unzipSync(
      new Uint8Array((await h.api('GET', `/runs/${id}/artifacts?zip=1&bundle=review`)).body),
    );
    assert.equal(after['expected/fixed.md'], undefined);
  });

  it('promotes a reviewed run to a dataset example with the corrected output and files', async () => {
    const id = runs[7]!;
    await client.runs.reviews.put(id, {
      verdict: 'incorrect',
      note: 'counted wrong',
      correctedOutput: { text: 'hello 7', words: 2, fixed: true },
    });
    await client.runs.reviews.uploadExpected(id, strToU8('expected bytes'), { name: 'expected.txt' });
    const res = await h.api('POST', `/runs/${id}/promote`, { body: { name: 'from review' } });
    assert.equal(res.status, 200);
    const promoted = shaped(PromoteRunResponse, res.body as Record<string, unknown>);
    assert.equal(promoted['name'], 'from review');
    assert.equal(promoted['automationType'], 'workflow');
    assert.match(String(promoted['exampleId']), /^ex_/);
    const ex = await client.automations.examples.get(A, String(promoted['exampleId']));
    assert.deepEqual(ex.expected, { text: 'hello 7', words: 2, fixed: true });
    assert.deepEqual(ex.input, { text: 'hello 7' });
    assert.equal(ex.annotation, 'counted wrong');
    assert.deepEqual(
      await client.automations.examples.expected.download(A, ex.id, 'expected.txt'),
      strToU8('expected bytes'),
    );
    assert.equal((ex.metadata as Record<string, unknown>)['promotedFromRunId'], id);
    // The same name again updates that example rather than adding one.
    const count = (await client.automations.examples.list(A, { limit: 1000 })).total;
    await client.runs.reviews.put(id, { verdict: 'incorrect', correctedOutput: { text: 'v2' } });
    const again = await client.runs.promote(id, { name: 'from review' });
    assert.equal(again['exampleId'], promoted['exampleId']);
    assert.equal((await client.automations.examples.list(A, { limit: 1000 })).total, count);
    const ex1 = await client.automations.examples.get(A, ex.id);
    assert.deepEqual(ex1.expected, { text: 'v2' });
    assert.equal(ex1.rowOrder, ex.rowOrder);
    // Without a review the run's own output and output files become the expectation; an empty
    // body (or none) is a generated name.
    const plain = await client.runs.promote(runs[3]!, {});
    assert.equal(plain['name'], `run ${runs[3]}`);
    const ex2 = await client.automations.examples.get(A, String(plain['exampleId']));
    assert.equal((ex2.expected as { text: string }).text, 'hello 3');
    assert.deepEqual((await client.automations.examples.expected.list(A, ex2.id)).files, ['report.md']);
    const noBody = await h.api('POST', `/runs/${runs[3]}/promote`);
    assert.equal(noBody.status, 200);
    assert.equal(noBody.body.exampleId, plain['exampleId']);
    assert.equal((await h.api('POST', `/runs/${id}/promote`, { body: { name: 5 } })).status, 400);
    assert.equal((await h.api('POST', `/runs/${id}/promote`, { token: otherTenant, body: {} })).status, 404);
    await client.runs.reviews.delete(id);
  });

  it('refuses to promote a run whose expected value would not be a JSON object', async () => {
    const id = runs[6]!;
    const before = (await client.automations.examples.list(A, { limit: 1000 })).total;
    await client.runs.reviews.put(id, { verdict: 'incorrect', correctedOutput: 'just text' });
    const r = await h.api('POST', `/runs/${id}/promote`, { body: { name: 'text expectation' } });
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

    const health = shaped(
      RunReviewHealthResponse,
      await client.automations.reviews.health(A, { rollingWindow: 3, minRollingReviews: 2 }),
    );
    const s = health['summary'] as Record<string, any>;
    assert.equal(s['totalRuns'], 11, '10 fixture runs and the cancelled one');
    assert.equal(s['reviewedRuns'], 6, 'ranked reviews only: the nit is left out');
    assert.equal(s['correctReviews'], 5);
    assert.equal(s['incorrectReviews'], 1);
    assert.equal(s['nitReviews'], 1);
    assert.ok(Math.abs(s['reviewCoverage'] - 6 / 11) < 1e-12);
    assert.ok(Math.abs(s['reviewedCorrectness'] - 5 / 6) < 1e-12);
    // Wilson 95% for 5 of 6 (published tables: 0.4365 – 0.9699).
    assert.ok(Math.abs(s['confidence'].lower - 0.43649) < 1e-4, String(s['confidence'].lower));
    assert.ok(Math.abs(s['confidence'].upper - 0.96994) < 1e-4, String(s['confidence'].upper));
    assert.equal(s['confidence'].method, 'wilson');

    // The SDK's camelCase query names and the snake_case ones mean the same.
    for (const q of [
      'status=completed&rollingWindow=3&minRollingReviews=2',
      'status=completed&rolling_window=3&min_rolling_reviews=2',
    ]) {
      const completedOnly = await h.api('GET', `/automations/${A}/reviews/health?${q}`);
      shaped(RunReviewHealthResponse, completedOnly.body);
      assert.equal(completedOnly.body.summary.totalRuns, 10);
      assert.deepEqual(completedOnly.body.granularity, {
        bucket: 'day',
        rollingWindow: 3,
        minRollingReviews: 2,
      });
      const rolling = completedOnly.body.rolling as Record<string, any>[];
      // Ranked reviews r0 c, r1 c, r2 i, r4 c, r6 c, r8 c: one point each once 2 are in the window.
      assert.equal(rolling.length, 5, q);
      const third = rolling[1]!; // window r0 r1 r2: 2 correct, 1 incorrect
      assert.equal(third.reviewedRuns, 3);
      assert.ok(Math.abs(third.reviewedCorrectness - 2 / 3) < 1e-12);
      const last = rolling[4]!; // window r4 r6 r8; coverage over runs r6 r7 r8
      const r8 = await client.runs.get(runs[8]!);
      assert.equal(last.at, (r8.timing as { createdAt: string }).createdAt);
      assert.equal(last.correctReviews, 3);
      assert.equal(last.reviewedCorrectness, 1);
      assert.equal(last.totalRunsInWindow, 3);
      assert.ok(Math.abs(last.reviewCoverage - 2 / 3) < 1e-12);
      assert.ok(Math.abs(last.confidenceLower - 0.43849) < 1e-4, String(last.confidenceLower)); // Wilson 3 of 3
      assert.ok(last.confidenceUpper > 0.9999);

      const buckets = completedOnly.body.buckets as Record<string, any>[];
      assert.ok(buckets.length >= 30 && buckets.length <= 32, String(buckets.length));
      assert.equal(
        buckets.reduce((n, b) => n + b.totalRuns, 0),
        10,
      );
      assert.equal(
        buckets.reduce((n, b) => n + b.reviewedRuns, 0),
        6,
      );
    }
    const month = await h.api('GET', `/automations/${A}/reviews/health?bucket=month&from=-2d`);
    assert.ok(month.body.buckets.length <= 2);
    assert.equal(month.body.granularity.bucket, 'month');
    for (const [q, total] of [
      ['type=agent', 0],
      ['triggered_by=system', 0],
      ['triggeredBy=__system__', 0],
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
      'rollingWindow=abc',
      'experiments=maybe',
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
    assert.equal((await list('review_status=open')).length, 2, 'the incorrect and the nit review stay open');
    assert.equal((await list('has_corrections=true')).length, 1);
    assert.equal((await list('review_note_contains=bad%20total')).length, 1);
    assert.equal((await list('no_review=true&status=completed')).length, 3);
    // Every run was created before the latest closed review.
    assert.equal((await list('since_last_closed=true')).length, 0);
  });
});
