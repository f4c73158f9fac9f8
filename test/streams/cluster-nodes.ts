// Sluice streams nodes as separate processes (test/streams/node-child.ts) on one JetStream
// cluster, and a small HTTP client for them, shared by the multi-node tests. Each node has its
// own STREAMS_NODE_ID, port and STREAMS_PUBLIC_URL; heartbeat and node timeout are small
// settings, so the tests wait for states (assignments, expiry), never for time.
import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { waitUntil, withinHang } from '../helpers/wait.js';

export const VND = 'application/vnd.streams.json.v2+json';

export interface Reply {
  status: number;
  text: string;
  body: any;
}

export interface CallOptions {
  body?: unknown;
  type?: string;
  accept?: string;
}

/** A token no other test process uses. */
export const clusterToken = (name: string): string =>
  `${name}-${process.pid}-${Math.random().toString(36).slice(2)}`;

export async function callNode(
  token: string,
  base: string,
  method: string,
  path: string,
  options: CallOptions = {},
): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (options.body !== undefined) headers['content-type'] = options.type ?? VND;
  if (options.accept) headers.accept = options.accept;
  const init: RequestInit = { method, headers, redirect: 'manual' };
  if (options.body !== undefined) init.body = JSON.stringify(options.body);
  const response = await fetch(base + path, init);
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: response.status, text, body };
}

export interface SluiceNode {
  readonly name: string;
  readonly url: string;
  start(): Promise<void>;
  /** SIGKILL, as a crash. */
  kill(): Promise<void>;
  running(): boolean;
}

export interface NodeOptions {
  readonly name: string;
  readonly port: number;
  readonly nats: readonly string[];
  readonly dir: string;
  readonly token: string;
  /** More STREAMS_* settings (e.g. STREAMS_INSTANCE_TIMEOUT). */
  readonly env?: Readonly<Record<string, string>>;
}

export function startableNode(options: NodeOptions): SluiceNode {
  const { name, port, nats, dir, token } = options;
  const url = `http://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('STREAMS_')),
  );
  const running = (): boolean => !!child && child.exitCode === null && child.signalCode === null;
  return {
    name,
    url,
    running,
    /**
     * Starts the process; one that exits before listening (JetStream not usable yet, e.g. a
     * cluster still electing its leaders) is started again until it listens.
     */
    async start() {
      await waitUntil(
        `sluice node ${name} to listen`,
        async () => {
          const started = spawn(process.execPath, ['--import', 'tsx', 'test/streams/node-child.ts'], {
            env: {
              ...inherited,
              LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
              NODE_DATA_DIR: dir,
              NODE_TOKEN: token,
              STREAMS_HOST: '127.0.0.1',
              STREAMS_PORT: String(port),
              STREAMS_PUBLIC_URL: url,
              STREAMS_BACKEND: 'jetstream',
              STREAMS_NATS_SERVERS: nats.join(','),
              STREAMS_REPLICAS: '3',
              STREAMS_NODE_ID: name,
              STREAMS_NODE_HEARTBEAT: '100ms',
              STREAMS_NODE_TIMEOUT: '1s',
              ...options.env,
            },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          child = started;
          let stderr = '';
          started.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
          const listening = await withinHang(
            `sluice node ${name} to listen or exit`,
            new Promise<boolean>((resolve) => {
              createInterface({ input: started.stdout }).once('line', () => resolve(true));
              started.once('exit', () => resolve(false));
            }),
          );
          if (!listening && !/JetStream is not usable|cannot connect to NATS|timeout/i.test(stderr))
            throw new Error(`node ${name} exited before listening:\n${stderr}`);
          return listening;
        },
        { intervalMs: 100 },
      );
    },
    async kill() {
      const c = child;
      if (!c || !running()) return;
      const exited = new Promise((resolve) => c.once('exit', resolve));
      c.kill('SIGKILL');
      await exited;
    },
  };
}

/** A record as a consumer read it: where it was, and the number the test produced in it. */
export interface Read {
  partition: number;
  offset: number;
  n: number;
}

/**
 * Each read is what was produced at its place (`produced`: number → where its produce answer put
 * it), no place is read twice, and the numbers read are exactly `values` (none skipped).
 */
export function assertReadOnce(
  reads: readonly Read[],
  produced: ReadonlyMap<number, { partition: number; offset: number }>,
  values: readonly number[],
): void {
  const places = reads.map((r) => `${r.partition}/${r.offset}`);
  assert.equal(new Set(places).size, places.length, `a record read twice: ${places.join(' ')}`);
  for (const r of reads) assert.deepEqual(produced.get(r.n), { partition: r.partition, offset: r.offset });
  assert.deepEqual(
    reads.map((r) => r.n).sort((x, y) => x - y),
    [...values].sort((x, y) => x - y),
    'every produced record read, none skipped',
  );
}
