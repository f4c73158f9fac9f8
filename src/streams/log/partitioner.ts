// Which partition each record of a produce request goes to: an explicit partition wins, a key
// goes where the Java client would put it, and the unkeyed records of one request stay together
// on one partition (Kafka's sticky behaviour keeps batches local), the next request moving on
// round robin so partitions fill evenly over time.

import { partitionForKey } from './murmur2.js';

export interface Routable {
  readonly key: string | null;
  readonly partition: number | undefined;
}

export class Partitioner {
  private readonly cursors = new Map<number, number>();

  choose(topicId: number, partitions: number, records: readonly Routable[]): number[] {
    let sticky: number | undefined;
    return records.map((record) => {
      if (record.partition !== undefined) return record.partition;
      if (record.key !== null) return partitionForKey(record.key, partitions);
      if (sticky === undefined) {
        const cursor = this.cursors.get(topicId) ?? 0;
        sticky = cursor % partitions;
        this.cursors.set(topicId, (cursor + 1) % partitions);
      }
      return sticky;
    });
  }
}
