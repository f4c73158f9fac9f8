// What counts as a failure. Every service promises a JSON error body on a 4xx and never a 5xx
// for anything a client sent (docs/security.md, "Bad input"); a connection must not end without
// an answer, and an answer must come within the case's time limit.

import type { Outcome } from './send.js';

export type Verdict =
  { ok: true; bucket: string } | { ok: false; bucket: string; failure: FailureKind; detail: string };

export type FailureKind = '5xx' | 'dropped' | 'timeout' | 'non-json-4xx' | 'head-with-body';

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * `malformed`: the request is not valid HTTP/1.1 (a raw space in the path, a control character
 * in a header, no Host). uWebSockets.js's parser closes such a connection without answering,
 * before any of our code runs; that close is counted as `closed-by-parser`, not as a failure,
 * and is listed in docs/fuzz.md. Anything that is answered is judged like every other case.
 * `overLimit`: the body is larger than the smallest body limit of the case's service.
 */
export function judge(method: string, outcome: Outcome, malformed: boolean, overLimit = false): Verdict {
  if (outcome.kind === 'timeout')
    return { ok: false, bucket: 'timeout', failure: 'timeout', detail: 'no answer within the time limit' };
  if (outcome.kind === 'dropped') {
    if (malformed) return { ok: true, bucket: 'closed-by-parser' };
    // A body past the route's limit is answered 413 before it is read and the connection is
    // closed (docs/security.md); a client still writing then may get a reset before it reads the
    // answer (TCP discards unread data on close). Counted apart; see docs/fuzz.md.
    if (overLimit && (outcome.error === 'EPIPE' || outcome.error === 'ECONNRESET'))
      return { ok: true, bucket: 'reset-after-413' };
    return { ok: false, bucket: 'dropped', failure: 'dropped', detail: outcome.error ?? 'connection ended' };
  }
  const status = outcome.status ?? 0;
  const bucket = `${Math.floor(status / 100)}xx`;
  if (status >= 500) return { ok: false, bucket, failure: '5xx', detail: excerpt(outcome.body) };
  if (method === 'HEAD' && (outcome.body?.length ?? 0) > 0) {
    return {
      ok: false,
      bucket,
      failure: 'head-with-body',
      detail: `${outcome.body!.length} body bytes after the headers of a HEAD answer`,
    };
  }
  if (status >= 400 && status < 500 && method !== 'HEAD') {
    const type = outcome.headers?.['content-type'] ?? '';
    if (!JSON_TYPE.test(type))
      return { ok: false, bucket, failure: 'non-json-4xx', detail: `content-type ${JSON.stringify(type)}` };
    try {
      const parsed: unknown = JSON.parse(outcome.body?.toString('utf8') ?? '');
      if (typeof parsed !== 'object' || parsed === null) throw new Error('not an object');
    } catch {
      return { ok: false, bucket, failure: 'non-json-4xx', detail: `body ${excerpt(outcome.body)}` };
    }
  }
  return { ok: true, bucket };
}

export function excerpt(body: Buffer | undefined, max = 300): string {
  if (!body || body.length === 0) return '(empty body)';
  const text = body.subarray(0, max).toString('utf8');
  return JSON.stringify(body.length > max ? text + '…' : text);
}
