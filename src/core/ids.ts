// Identifiers. Request ids are short, sortable-enough and cheap: a per-thread random prefix and
// a counter, so making one costs no crypto call on the hot path.

import { randomBytes, randomUUID } from 'node:crypto';

const prefix = randomBytes(6).toString('base64url');
let counter = 0;

export function nextRequestId(): string {
  counter = (counter + 1) % 0x7fffffff;
  return `${prefix}-${counter.toString(36)}`;
}

// A client's X-Request-Id is kept only when it is short and plain: it is echoed in a response
// header, written to logs and put in error bodies, so control characters, quotes or megabytes
// must not pass through. Anything else gets a fresh id.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The client's request id when it is at most 128 characters of `A-Z a-z 0-9 . _ : -`, else a new one. */
export function requestIdFrom(header: string | undefined): string {
  return header !== undefined && SAFE_REQUEST_ID.test(header) ? header : nextRequestId();
}

export function uuid(): string {
  return randomUUID();
}

/** A URL-safe random id of `bytes` bytes of entropy, with an optional prefix (`key_…`). */
export function randomId(bytes = 16, idPrefix = ''): string {
  return idPrefix + randomBytes(bytes).toString('base64url');
}
