// Identifiers. Request ids are short, sortable-enough and cheap: a per-thread random prefix and
// a counter, so making one costs no crypto call on the hot path.

import { randomBytes, randomUUID } from 'node:crypto';

const prefix = randomBytes(6).toString('base64url');
let counter = 0;

export function nextRequestId(): string {
  counter = (counter + 1) % 0x7fffffff;
  return `${prefix}-${counter.toString(36)}`;
}

export function uuid(): string {
  return randomUUID();
}

/** A URL-safe random id of `bytes` bytes of entropy, with an optional prefix (`key_…`). */
export function randomId(bytes = 16, idPrefix = ''): string {
  return idPrefix + randomBytes(bytes).toString('base64url');
}
