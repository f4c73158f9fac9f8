// The streams API as the console uses it (docs/streams.md), typed.

import { api } from '../api.js';
import { serviceUrl } from '../services.js';

export interface PartitionInfo {
  partition: number;
  beginning_offset: number;
  end_offset: number;
}

export interface TopicInfo {
  name: string;
  partitions_count: number;
  created_at: string;
  /** Kafka's retention configs by name (`retention.ms`, `retention.bytes`); -1 is unlimited. */
  configs?: { name: string; value: string }[];
  partitions: PartitionInfo[];
}

export interface StreamRecord {
  topic: string;
  key: string | null;
  value: unknown;
  partition: number;
  offset: number;
  timestamp: number;
  headers?: { key: string; value: string | null }[];
}

export interface GroupSummary {
  group: string;
  members: number;
  topics: string[];
  /** Summed over the partitions it committed on; null before its first commit. */
  lag: number | null;
}

export interface GroupDetail {
  group: string;
  members: {
    instance_id: string;
    node: string | null;
    subscription: string[];
    assignments: { topic: string; partition: number }[];
    created_at: string | null;
    last_seen: string | null;
  }[];
  partitions: {
    topic: string;
    partition: number;
    owner: string | null;
    committed_offset: number | null;
    end_offset: number;
    lag: number | null;
  }[];
}

export const url = (path: string) => serviceUrl('streams', path);
export const seg = encodeURIComponent;
const opts = (signal?: AbortSignal) => (signal ? { signal } : {});

export const listTopics = (signal?: AbortSignal) => api<string[]>(url('/streams/topics'), opts(signal));

export const describeTopic = (name: string, signal?: AbortSignal) =>
  api<TopicInfo>(url(`/streams/topics/${seg(name)}`), opts(signal));

export const createTopic = (name: string, partitions: number) =>
  api<{ message: string }>(url('/streams/topics/topic'), {
    method: 'POST',
    body: { topic_name: name, partitions },
  });

export const produce = (topic: string, records: unknown[]) =>
  api<{ offsets: { partition: number; offset: number }[] }>(url(`/streams/topic/${seg(topic)}`), {
    method: 'POST',
    body: { records },
  });

export const readPartition = (
  topic: string,
  partition: number,
  from: { offset: number } | { timestamp: number } | undefined,
  count: number,
  signal?: AbortSignal,
) => {
  const q = new URLSearchParams({ count: String(count) });
  if (from && 'offset' in from) q.set('offset', String(from.offset));
  if (from && 'timestamp' in from) q.set('timestamp', String(from.timestamp));
  return api<StreamRecord[]>(
    url(`/streams/topics/${seg(topic)}/partitions/${partition}/records?${q}`),
    opts(signal),
  );
};

export const listGroups = (signal?: AbortSignal) =>
  api<{ consumer_groups: GroupSummary[] }>(url('/streams/consumer-groups'), opts(signal));

export const describeGroup = (group: string, signal?: AbortSignal) =>
  api<GroupDetail>(url(`/streams/consumer-groups/${seg(group)}`), opts(signal));

export type ResetTo =
  { to: 'earliest' | 'latest' } | { to: 'offset'; offset: number } | { to: 'time'; timestamp: number };

export interface ResetAnswer {
  group: string;
  dry_run: boolean;
  offsets: { topic: string; partition: number; previous_offset: number | null; offset: number }[];
}

/** Sets a stopped group's offsets; with `dryRun`, only says what they would be. */
export const resetGroupOffsets = (group: string, to: ResetTo, dryRun: boolean) =>
  api<ResetAnswer>(url(`/streams/consumer-groups/${seg(group)}/offsets/reset`), {
    method: 'POST',
    body: { ...to, dry_run: dryRun },
  });

export const deleteGroup = (group: string) =>
  api<void>(url(`/streams/consumer-groups/${seg(group)}`), { method: 'DELETE' });
