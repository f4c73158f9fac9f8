// Starts the streams service through startStreams with a test context, and a small HTTP client.

import { makeTestContext, type TestContext } from '../helpers/context.js';
import { startStreams, type StreamsOptions } from '../../src/streams/index.js';
import type { RunningService } from '../../src/core/service.js';
import { waitUntil } from '../helpers/wait.js';
import { startNatsCluster } from '../helpers/nats.js';

export const VND = 'application/vnd.streams.json.v2+json';

export interface Reply {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

export interface Harness {
  url: string;
  token: string;
  test: TestContext;
  service: RunningService;
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  /** Stops the service and starts it again on the same data directory (a new port). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export interface CallOptions {
  body?: unknown;
  /** Raw body text (sent as is). */
  raw?: string;
  type?: string | null;
  accept?: string | null;
  token?: string | null;
  signal?: AbortSignal;
}

export async function startHarness(
  env: Record<string, string> = {},
  options: StreamsOptions = {},
): Promise<Harness> {
  const test = await makeTestContext({ env: { STREAMS_DEFAULT_PARTITIONS: '1', ...env } });
  const harness: Harness = {
    url: '',
    token: test.token,
    test,
    service: undefined as unknown as RunningService,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = {};
      const token = options.token === undefined ? harness.token : options.token;
      if (token !== null) headers.authorization = `Bearer ${token}`;
      let body: string | undefined;
      if (options.raw !== undefined) body = options.raw;
      else if (options.body !== undefined) body = JSON.stringify(options.body);
      if (body !== undefined && options.type !== null) headers['content-type'] = options.type ?? VND;
      if (options.accept !== null && options.accept !== undefined) headers.accept = options.accept;
      const init: RequestInit = { method, headers };
      if (body !== undefined) init.body = body;
      if (options.signal) init.signal = options.signal;
      const response = await fetch(harness.url + path, init);
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: response.status, headers: response.headers, text, body: parsed };
    },
    async restart() {
      await harness.service.close();
      harness.service = await startStreams(test.ctx, options);
      harness.url = harness.service.addresses.http!;
    },
    async close() {
      await harness.service.close();
      await test.cleanup();
    },
  };
  harness.service = await startStreams(test.ctx, options);
  harness.url = harness.service.addresses.http!;
  return harness;
}

/** Creates a topic, subscribes a new instance, returns the instance path. */
/** The harness on the JetStream backend of a 3-node cluster (R3) of its own, stopped with it. */
export async function startJetStreamHarness(env: Record<string, string> = {}): Promise<Harness> {
  const cluster = await startNatsCluster(3);
  try {
    const h = await startHarness({
      ...env,
      STREAMS_BACKEND: 'jetstream',
      STREAMS_NATS_SERVERS: cluster.urls.join(','),
      STREAMS_REPLICAS: '3',
    });
    const close = h.close.bind(h);
    h.close = async () => {
      await close();
      await cluster.stop();
    };
    return h;
  } catch (err) {
    await cluster.stop();
    throw err;
  }
}

export async function newConsumer(
  h: Harness,
  group: string,
  topics: string[],
  config: Record<string, unknown> = {},
): Promise<string> {
  const created = await h.call('POST', `/streams/consumers/${group}`, { body: config, accept: VND });
  if (created.status !== 200) throw new Error(`create consumer: ${created.status} ${created.text}`);
  const path = new URL(created.body.base_uri as string).pathname;
  if (topics.length > 0) {
    const sub = await h.call('POST', `${path}/subscription`, { body: { topics } });
    if (sub.status !== 200) throw new Error(`subscribe: ${sub.status} ${sub.text}`);
  }
  return path;
}

export async function createTopic(h: Harness, name: string, partitions?: number): Promise<void> {
  const body: Record<string, unknown> = { topic_name: name };
  if (partitions !== undefined) body.partitions = partitions;
  const reply = await h.call('POST', '/streams/topics/topic', { body, type: 'application/json' });
  if (reply.status !== 200) throw new Error(`create topic: ${reply.status} ${reply.text}`);
}

export async function produce(
  h: Harness,
  topic: string,
  records: unknown[],
): Promise<Array<{ partition: number; offset: number }>> {
  const reply = await h.call('POST', `/streams/topic/${topic}`, { body: { records } });
  if (reply.status !== 200) throw new Error(`produce: ${reply.status} ${reply.text}`);
  return reply.body.offsets;
}

/**
 * Fetches until `count` records arrived. Records produced before the call are all there to
 * read, so only a hang ends this early (after HANG_MS, with an error naming what was missing).
 */
export async function fetchAll(h: Harness, path: string, count: number, timeoutMs = 200): Promise<any[]> {
  const out: any[] = [];
  await waitUntil(
    `${count} records from ${path}`,
    async () => {
      const reply = await h.call('GET', `${path}/records?timeout=${timeoutMs}`, { accept: VND });
      if (reply.status !== 200) throw new Error(`fetch: ${reply.status} ${reply.text}`);
      out.push(...reply.body);
      return out.length >= count;
    },
    { intervalMs: 0 },
  );
  return out;
}
