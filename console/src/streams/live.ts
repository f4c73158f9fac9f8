// Follows new records of a topic over the push WebSocket (docs/streams.md, "Push consume over
// WebSocket"): a consumer instance of its own group (`sluice-console-<random>`, starting at the
// end), subscribed to the topic, streamed with credits. The key goes as a subprotocol (browsers
// cannot set Authorization on a WebSocket).
//
// When the socket drops after it was connected (the service restarted, a proxy cut it, the
// instance expired), it reconnects with a growing delay and resumes after the last record it
// showed, per partition: the instance's positions are set to those offsets before the stream
// opens again (an instance that is gone is replaced by a new one, set the same way), so records
// produced meanwhile are shown and none twice.

import { ApiFailure, api, request, storedKey } from '../api.js';
import { describeTopic, seg, url, type StreamRecord } from './api.js';

export type LiveStatus = 'connecting' | 'connected' | 'reconnecting' | 'closed';

export interface LiveHandlers {
  onRecords(records: StreamRecord[]): void;
  /** `detail` says why it is reconnecting or closed. */
  onStatus(status: LiveStatus, detail?: string): void;
}

/** Delays between reconnection attempts; the last one repeats until it works or stops. */
export const BACKOFF_MS = [250, 500, 1_000, 2_000, 4_000] as const;

const CREDITS = 500;

export function followTopic(topic: string, handlers: LiveHandlers): { stop: () => void } {
  let stopped = false;
  let everConnected = false;
  let attempt = 0;
  let socket: WebSocket | undefined;
  let instancePath: string | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** partition → the next offset to show (the last one shown + 1, or the end when following began). */
  const next = new Map<number, number>();
  const remember = (partition: number, offset: number) =>
    next.set(partition, Math.max(next.get(partition) ?? 0, offset));

  const remove = (path: string) => void request(url(path), { method: 'DELETE' }).catch(() => undefined);

  const createInstance = async (): Promise<string> => {
    const group = `sluice-console-${crypto.randomUUID().slice(0, 8)}`;
    const created = await api<{ instance_id: string }>(url(`/streams/consumers/${seg(group)}`), {
      method: 'POST',
      // No commits: the group is the view's own and must leave no offsets behind when it goes.
      body: { 'auto.offset.reset': 'latest', 'auto.commit.enable': 'false' },
    });
    const path = `/streams/consumers/${seg(group)}/instances/${seg(created.instance_id)}`;
    try {
      await request(url(`${path}/subscription`), { method: 'POST', body: { topics: [topic] } });
    } catch (error) {
      remove(path);
      throw error;
    }
    return path;
  };

  /** Puts the instance's positions where the view left off (nothing to do before any record). */
  const resume = async (path: string) => {
    if (next.size === 0) return;
    const offsets = [...next].map(([partition, offset]) => ({ topic, partition, offset }));
    await request(url(`${path}/positions`), { method: 'POST', body: { offsets } });
  };

  const open = async () => {
    try {
      if (!instancePath) {
        const created = await createInstance();
        if (stopped) return remove(created);
        instancePath = created;
        if (!everConnected) {
          // Where following began, so a drop before the first record still resumes there.
          const info = await describeTopic(topic);
          for (const p of info.partitions) remember(p.partition, p.end_offset);
        }
      }
      if (everConnected) await resume(instancePath);
      if (!stopped) connect(instancePath);
    } catch (error) {
      if (stopped) return;
      const failure = error instanceof ApiFailure ? error : undefined;
      // The instance is gone (expired, deleted): the next attempt makes a new one.
      if (failure?.status === 404 && instancePath) instancePath = undefined;
      if (!everConnected || failure?.status === 401 || failure?.status === 403)
        return handlers.onStatus('closed', (error as Error).message);
      retry((error as Error).message);
    }
  };

  const connect = (path: string) => {
    const base = new URL(url(path), window.location.href);
    base.protocol = base.protocol === 'https:' ? 'wss:' : 'ws:';
    const ws = new WebSocket(`${base.href}/ws`, ['sluice', `sluice.bearer.${storedKey() ?? ''}`]);
    socket = ws;
    let problem: string | undefined;
    ws.onopen = () => {
      everConnected = true;
      attempt = 0;
      ws.send(JSON.stringify({ credits: CREDITS }));
      handlers.onStatus('connected');
    };
    ws.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as { records?: StreamRecord[]; message?: string };
      if (message.records) {
        for (const r of message.records) remember(r.partition, r.offset + 1);
        handlers.onRecords(message.records);
        ws.send(JSON.stringify({ credits: message.records.length }));
      } else if (message.message) problem = message.message;
    };
    ws.onclose = (event) => {
      if (stopped || socket !== ws) return;
      socket = undefined;
      // 4404: the server deleted the instance (or no longer has it).
      if (event.code === 4404) instancePath = undefined;
      const why = `the live stream closed (${event.code}${event.reason ? `: ${event.reason}` : ''})${problem ? `: ${problem}` : ''}`;
      if (!everConnected) return handlers.onStatus('closed', why);
      retry(why);
    };
  };

  const retry = (why: string) => {
    handlers.onStatus('reconnecting', why);
    const delay = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)];
    attempt += 1;
    timer = setTimeout(() => void open(), delay);
  };

  handlers.onStatus('connecting');
  void open();
  return {
    stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      socket?.close();
      if (instancePath) remove(instancePath);
    },
  };
}
