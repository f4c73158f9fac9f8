// The streams API as the console uses it (docs/streams.md), typed.

import { api, request, storedKey } from '../api.js';
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

const url = (path: string) => serviceUrl('streams', path);
const seg = encodeURIComponent;
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

/**
 * Follows new records of a topic over the push WebSocket: a consumer instance of its own group
 * (`sluice-console-<random>`, starting at the end), subscribed to the topic, streamed with
 * credits. The key goes as a subprotocol (browsers cannot set Authorization on a WebSocket).
 * `stop()` closes the socket and deletes the instance.
 */
export async function followTopic(
  topic: string,
  onRecords: (records: StreamRecord[]) => void,
  onError: (message: string) => void,
  onOpen: () => void = () => undefined,
): Promise<{ stop: () => void }> {
  const group = `sluice-console-${crypto.randomUUID().slice(0, 8)}`;
  const created = await api<{ instance_id: string; base_uri: string }>(
    url(`/streams/consumers/${seg(group)}`),
    {
      method: 'POST',
      body: { 'auto.offset.reset': 'latest' },
    },
  );
  const instancePath = `/streams/consumers/${seg(group)}/instances/${seg(created.instance_id)}`;
  const remove = () => void request(url(instancePath), { method: 'DELETE' }).catch(() => undefined);
  try {
    await request(url(`${instancePath}/subscription`), { method: 'POST', body: { topics: [topic] } });
  } catch (error) {
    remove();
    throw error;
  }
  const base = new URL(url(instancePath), window.location.href);
  base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
  const socket = new WebSocket(`${base.href}/ws`, ['sluice', `sluice.bearer.${storedKey() ?? ''}`]);
  let stopped = false;
  socket.onopen = () => {
    socket.send(JSON.stringify({ credits: 500 }));
    onOpen();
  };
  socket.onmessage = (event) => {
    const message = JSON.parse(String(event.data)) as { records?: StreamRecord[]; message?: string };
    if (message.records) {
      onRecords(message.records);
      socket.send(JSON.stringify({ credits: message.records.length }));
    } else if (message.message) onError(message.message);
  };
  socket.onclose = (event) => {
    if (!stopped) onError(`the live stream closed (${event.code}${event.reason ? `: ${event.reason}` : ''})`);
  };
  return {
    stop() {
      stopped = true;
      socket.close();
      remove();
    },
  };
}
