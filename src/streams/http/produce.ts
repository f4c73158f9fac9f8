// Storing a validated produce batch: partition choice, append, offsets. Shared by the /streams
// produce endpoint and the Confluent ones, which differ only in how a body is read and how the
// answer looks.

import type { Partitioner } from '../log/partitioner.js';
import type { AppendRecord, TopicInfo, TopicLog } from '../log/types.js';
import type { ProduceRecord } from './validate.js';

export interface Stored {
  /** Per record, in request order. */
  readonly partitions: number[];
  readonly offsets: number[];
}

export async function appendRecords(
  log: TopicLog,
  partitioner: Partitioner,
  topic: TopicInfo,
  parsed: readonly ProduceRecord[],
): Promise<Stored> {
  const partitions = partitioner.choose(topic.id, topic.partitions, parsed);
  const records: AppendRecord[] = parsed.map((r, i) => ({
    partition: partitions[i]!,
    key: r.key,
    valueJson: r.valueJson,
    timestamp: r.timestamp,
    headers: r.headers,
  }));
  const offsets = await log.append(topic, records);
  return { partitions, offsets };
}
