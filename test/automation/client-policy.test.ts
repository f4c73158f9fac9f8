// Pure parts of the client: retry policy, backoff, Retry-After parsing, query and path encoding,
// and file extraction.
import * as assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { extractFiles, guessContentType, isFileValue, toBlob } from '../../src/automation/client/files.js';
import {
  buildQuery,
  camelCase,
  segment,
  slashPath,
  snakeCase,
  wireName,
} from '../../src/automation/client/query.js';
import {
  networkErrorCode,
  parseRetryAfter,
  retryDelayMs,
  shouldRetryNetworkError,
  shouldRetryStatus,
} from '../../src/automation/client/retry.js';

describe('retry policy', () => {
  const get = { method: 'GET', markedIdempotent: false };
  const post = { method: 'POST', markedIdempotent: false };
  const keyed = { method: 'POST', markedIdempotent: true };

  it('retries 429 for every method, 5xx only for idempotent requests, never other 4xx', () => {
    assert.equal(shouldRetryStatus(429, post), true);
    assert.equal(shouldRetryStatus(503, get), true);
    assert.equal(shouldRetryStatus(503, post), false);
    assert.equal(shouldRetryStatus(503, keyed), true);
    assert.equal(shouldRetryStatus(500, { method: 'PUT', markedIdempotent: false }), true);
    assert.equal(shouldRetryStatus(500, { method: 'PATCH', markedIdempotent: false }), false);
    for (const status of [400, 401, 403, 404, 409, 413]) assert.equal(shouldRetryStatus(status, get), false);
  });

  it('retries network errors of a POST only when the connection was never made', () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    });
    const reset = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('x'), { code: 'ECONNRESET' }),
    });
    assert.equal(networkErrorCode(refused), 'ECONNREFUSED');
    assert.equal(shouldRetryNetworkError(refused, post), true);
    assert.equal(shouldRetryNetworkError(reset, post), false);
    assert.equal(shouldRetryNetworkError(reset, keyed), true);
    assert.equal(shouldRetryNetworkError(reset, get), true);
    assert.equal(shouldRetryNetworkError(new Error('no code'), post), false);
  });

  it('parses Retry-After as seconds or an HTTP date, ignoring garbage', () => {
    assert.equal(parseRetryAfter('7'), 7);
    assert.equal(parseRetryAfter('1.5'), 1.5);
    assert.equal(parseRetryAfter(null), undefined);
    assert.equal(parseRetryAfter(''), undefined);
    assert.equal(parseRetryAfter('soon'), undefined);
    assert.equal(parseRetryAfter('-3'), undefined);
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now), 30);
    assert.equal(parseRetryAfter('Wed, 31 Dec 2025 23:59:00 GMT', now), 0);
  });

  it('backs off exponentially with jitter in [step/2, step], capped, and lets Retry-After win', () => {
    const policy = { baseMs: 100, maxMs: 1000 };
    assert.equal(
      retryDelayMs(0, policy, undefined, () => 0),
      50,
    );
    assert.equal(
      retryDelayMs(0, policy, undefined, () => 1),
      100,
    );
    assert.equal(
      retryDelayMs(2, policy, undefined, () => 1),
      400,
    );
    assert.equal(
      retryDelayMs(10, policy, undefined, () => 1),
      1000,
    );
    assert.equal(
      retryDelayMs(10, policy, undefined, () => 0),
      500,
    );
    assert.equal(retryDelayMs(0, policy, 0.25), 250);
    assert.equal(retryDelayMs(0, policy, 60), 1000);
  });
});

describe('query and path encoding', () => {
  it('sends the SDK spelling of names and serialises lists, dates and booleans', () => {
    assert.equal(snakeCase('batchId'), 'batch_id');
    assert.equal(camelCase('review_created_after'), 'reviewCreatedAfter');
    assert.equal(camelCase('sampleRate'), 'sampleRate');
    assert.equal(wireName('batch_id'), 'batchId');
    assert.equal(wireName('exampleIds'), 'exampleIds');
    // The one name the SDK itself sends in snake_case.
    assert.equal(wireName('waitForCompletion'), 'wait_for_completion');
    assert.equal(wireName('wait_for_completion'), 'wait_for_completion');
    assert.equal(
      buildQuery({
        status: ['a', 'b'],
        hasReview: true,
        createdAfter: new Date(0),
        skipped: undefined,
        nothing: null,
        empty: [],
      }),
      '?status=a%2Cb&hasReview=true&createdAfter=1970-01-01T00%3A00%3A00.000Z',
    );
    assert.equal(buildQuery({}), '');
    assert.equal(buildQuery(undefined), '');
  });

  it('encodes path parameters and keeps slashes of file paths', () => {
    assert.equal(segment('workflows.echo-report'), 'workflows.echo-report');
    assert.equal(segment('a/b c'), 'a%2Fb%20c');
    assert.equal(slashPath('/docs//a b.pdf'), 'docs/a%20b.pdf');
    assert.throws(() => slashPath('a/../b'), /must not contain/);
    assert.throws(() => segment('.'), /must not contain/);
  });
});

describe('file values', () => {
  it('recognises Blob, File, Buffer, Uint8Array, ArrayBuffer, { name, data } and { content, filename }', () => {
    assert.equal(isFileValue(new Blob(['x'])), true);
    assert.equal(isFileValue(new File(['x'], 'x.txt')), true);
    assert.equal(isFileValue(Buffer.from('x')), true);
    assert.equal(isFileValue(new Uint8Array(1)), true);
    assert.equal(isFileValue(new ArrayBuffer(1)), true);
    assert.equal(isFileValue({ name: 'a.pdf', data: new Uint8Array(1) }), true);
    assert.equal(
      isFileValue({ name: 'a.pdf', data: new Uint8Array(1), contentType: 'application/pdf' }),
      true,
    );
    assert.equal(isFileValue({ content: new Uint8Array(1), filename: 'a.pdf' }), true);
  });

  it('leaves ordinary values alone', () => {
    assert.equal(isFileValue({ name: 'Ann', data: 'text' }), false);
    assert.equal(isFileValue({ name: 'a', data: new Uint8Array(1), extra: 1 }), false);
    assert.equal(isFileValue('a string'), false);
    assert.equal(isFileValue([1, 2]), false);
    assert.equal(isFileValue(null), false);
    assert.equal(isFileValue(new Date()), false);
  });

  it('extracts nested files, keeping a $file reference and leaving non-plain objects untouched', () => {
    const when = new Date(0);
    const { json, parts } = extractFiles({ a: { b: [0, Buffer.from('x')] }, when, plain: 'p' });
    assert.deepEqual(json, { a: { b: [0, { $file: 'files.a.b.1' }] }, when, plain: 'p' });
    assert.deepEqual(
      parts.map((p) => [p.field, p.filename]),
      [['files.a.b.1', '1']],
    );
  });

  it('copies bytes so later changes to the caller buffer do not leak into the upload', async () => {
    const bytes = new Uint8Array([1, 2, 3]);
    const { blob } = toBlob(bytes, 'b.bin');
    bytes[0] = 9;
    assert.deepEqual([...new Uint8Array(await blob.arrayBuffer())], [1, 2, 3]);
    assert.equal(guessContentType('b.bin'), 'application/octet-stream');
    assert.equal(guessContentType('REPORT.PDF'), 'application/pdf');
  });
});
