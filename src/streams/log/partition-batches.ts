// An append's records split into one batch per partition, in request order: what both logs do
// before taking offsets. The common case — every record of a request in one partition (unkeyed
// records stay together, partitioner.ts) — takes the caller's array as it is.

import type { AppendRecord, RecordToStore } from './types.js';

export interface PartitionBatch {
  readonly partition: number;
  readonly records: readonly RecordToStore[];
}

/** Each record's partition: `partitions` when given (TopicLog.append), else the records' own. */
export function partitionOfEach(
  records: readonly RecordToStore[],
  partitions: readonly number[] | undefined,
): readonly number[] {
  if (!partitions) return records.map((r) => (r as AppendRecord).partition);
  if (partitions.length !== records.length)
    throw new Error(`${partitions.length} partitions given for ${records.length} records`);
  return partitions;
}

/** True when every record goes to the same partition (and there is at least one). */
export function onePartition(partitions: readonly number[]): boolean {
  if (partitions.length === 0) return false;
  const first = partitions[0]!;
  for (let i = 1; i < partitions.length; i++) if (partitions[i] !== first) return false;
  return true;
}

/** The records grouped by partition, in order of first appearance; request order within each. */
export function partitionBatches(
  records: readonly RecordToStore[],
  partitions: readonly number[],
): PartitionBatch[] {
  if (onePartition(partitions)) return [{ partition: partitions[0]!, records }];
  const byPartition = new Map<number, RecordToStore[]>();
  for (let i = 0; i < records.length; i++) {
    const list = byPartition.get(partitions[i]!);
    if (list) list.push(records[i]!);
    else byPartition.set(partitions[i]!, [records[i]!]);
  }
  return [...byPartition].map(([partition, list]) => ({ partition, records: list }));
}
