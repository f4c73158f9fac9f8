// The offset of a partition at a point in time, for reads from a time and for resetting a
// group's offsets to a time (Kafka's ListOffsets with a timestamp, KIP-79).

import type { TopicInfo, TopicLog } from './types.js';

/**
 * The first offset whose record is stamped at or after `since`, by binary search over the
 * partition (one single-record read per step); the end offset when no record is that recent.
 * Exact when timestamps grow with offsets, as they do when the service stamps records; with
 * producer-given timestamps out of order it finds one such boundary, like Kafka's time index
 * finds the first segment.
 */
export async function offsetForTime(
  log: TopicLog,
  topic: TopicInfo,
  partition: number,
  since: number,
): Promise<number> {
  let lo = await log.beginningOffset(topic, partition);
  let hi = await log.endOffset(topic, partition);
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const [record] = await log.read(topic, partition, mid, { maxRecords: 1, maxBytes: 1, atLeastOne: true });
    if (record === undefined || record.timestamp >= since) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
