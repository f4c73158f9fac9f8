// The JetStream API error codes Sluice branches on, named once. JetStream answers a refused API
// call with `{"error": {"code": <HTTP-like status>, "err_code": <number>, ...}}`; the numbers are
// the server's own table (nats-server `server/errors.json`), and the client surfaces them as
// `JetStreamApiError.code`. Code checks these numbers, never message text.

import { JetStreamApiError } from '@nats-io/jetstream';

export const JetStreamErrors = {
  /** "JetStream system temporarily unavailable" (no leader yet): a retry may succeed. */
  temporarilyUnavailable: 10008,
  /**
   * "wrong last sequence": an expected-last-sequence failed because the stream or the subject
   * moved on — a KV create of a key that exists, an update or delete at a stale revision.
   */
  wrongLastSequence: 10071,
  /** The same failed expectation as newer servers report it (the client's `StreamWrongLastSequenceUnknown`). */
  wrongLastSequenceUnknown: 10164,
  /**
   * "duplicate message id is in process": newer servers answer a message id that another
   * publish is still proposing with this (older ones wait and answer a duplicate ack).
   */
  duplicateInProcess: 10158,
} as const;

/** The JetStream API error number of a refused call, or undefined for any other failure. */
export function jetStreamErrorCode(error: unknown): number | undefined {
  return error instanceof JetStreamApiError ? error.code : undefined;
}

/** A compare-and-set lost a race (see `wrongLastSequence`). */
export function isWrongLastSequence(error: unknown): boolean {
  const code = jetStreamErrorCode(error);
  return code === JetStreamErrors.wrongLastSequence || code === JetStreamErrors.wrongLastSequenceUnknown;
}

/** A refusal a retry cannot change (a 4xx other than "temporarily unavailable"). */
export function isPermanentRefusal(error: unknown): boolean {
  return (
    error instanceof JetStreamApiError &&
    error.status < 500 &&
    error.code !== JetStreamErrors.temporarilyUnavailable
  );
}
