// Failures the streams engine reports, numbered like Confluent's REST Proxy (error_code) so
// clients written for Kafka REST proxies recognise them. The HTTP layer turns them into answers;
// nothing below http/ knows about HTTP.

import { CodedError } from '../core/errors.js';

/**
 * `errorCode` is the Confluent number the HTTP envelope carries; `code` names it in snake_case
 * (`topic_not_found`) like every other Sluice error.
 */
export class StreamsError extends CodedError {
  constructor(
    readonly status: number,
    readonly errorCode: number,
    message: string,
  ) {
    super(codeName(errorCode), message);
  }
}

export const ErrorCodes = {
  topicInvalid: 40002,
  topicNotFound: 40401,
  partitionNotFound: 40402,
  instanceNotFound: 40403,
  notAcceptable: 40601,
  instanceExists: 40902,
  illegalState: 40903,
  /** The consumer group has live members (Kafka's NON_EMPTY_GROUP); it must be stopped first. */
  groupNotEmpty: 40904,
  invalidRecord: 42203,
  invalidConsumerConfig: 42204,
  unsupportedFormat: 41501,
  storageFailure: 50002,
  storageRetriable: 50003,
  /** 507 Insufficient Storage: the disk under the log is (nearly) full; nothing was stored. */
  storageFull: 50701,
} as const;

// The numbers used without a Confluent sub-code are plain HTTP statuses.
const PLAIN: Readonly<Record<number, string>> = {
  413: 'too_large',
  416: 'offset_out_of_range',
  422: 'unprocessable',
};

const NAMES = new Map<number, string>(
  Object.entries(ErrorCodes).map(([key, n]) => [n, key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)]),
);

/** The snake_case name of a Confluent error number (`40401` → `topic_not_found`). */
export function codeName(errorCode: number): string {
  return NAMES.get(errorCode) ?? PLAIN[errorCode] ?? `error_${errorCode}`;
}

export const topicNotFound = (topic: string): StreamsError =>
  new StreamsError(404, ErrorCodes.topicNotFound, `topic '${topic}' not found`);

export const partitionNotFound = (topic: string, partition: number, count: number): StreamsError =>
  new StreamsError(
    404,
    ErrorCodes.partitionNotFound,
    `partition ${partition} of topic '${topic}' not found (the topic has partitions 0..${count - 1})`,
  );

export const illegalState = (message: string): StreamsError =>
  new StreamsError(409, ErrorCodes.illegalState, message);

/** A request field that is wrong; `code` picks the Confluent number, 422 otherwise. */
export const unprocessable = (message: string, code: number = 422): StreamsError =>
  new StreamsError(422, code, message);

/**
 * A read below a partition's beginning: the records were removed by retention (Kafka's
 * OFFSET_OUT_OF_RANGE). Confluent's proxy has no number of its own for it, so the HTTP status
 * is the error_code, as for its other generic errors.
 */
export const offsetOutOfRange = (
  topic: string,
  partition: number,
  offset: number,
  beginning: number,
): StreamsError =>
  new StreamsError(
    416,
    416,
    `offset ${offset} of ${topic}/${partition} is out of range: retention removed the records before offset ${beginning}`,
  );
