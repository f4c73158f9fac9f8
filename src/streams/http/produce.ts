// Storing a validated produce batch: partition choice, append, offsets. Shared by the /streams
// produce endpoint and the Confluent ones, which differ only in how a body is read and how the
// answer looks.

import type { Partitioner } from '../log/partitioner.js';
import type { TopicInfo, TopicLog } from '../log/types.js';
import type { ProduceRecord } from './validate.js';

export interface Stored {
  /** Per record, in request order. */
  readonly partitions: number[];
  readonly offsets: number[];
}

/** Records handed to the log: their partitions now, their offsets once stored. */
export interface Queued {
  readonly partitions: number[];
  readonly offsets: Promise<number[]>;
}

/**
 * Chooses the partitions and hands the records to the log, returning at once: the promise holds
 * no record objects while JetStream or LMDB works (else they are promoted out of the young
 * generation by the time it answers, and a 1000-record request has thousands).
 */
export function appendRecords(
  log: TopicLog,
  partitioner: Partitioner,
  topic: TopicInfo,
  parsed: readonly ProduceRecord[],
): Queued {
  const partitions = partitioner.choose(topic.id, topic.partitions, parsed);
  // The parsed records go to the log as they are, their partitions beside them: no second
  // object per record.
  return { partitions, offsets: log.append(topic, parsed, partitions) };
}
