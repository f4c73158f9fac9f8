// Consumer instances behind a load balancer without stickiness (JetStream): three Sluice nodes on a
// 3-node nats-server cluster behind a round-robin TCP proxy written here, each new connection to
// the next node that accepts it. One client creates an instance, subscribes, fetches and commits
// through the proxy while another produces; the node that created the instance is killed
// (SIGKILL) between two of its requests, and the instance goes on through the other nodes from
// its committed offsets: every record produced is read exactly once. docs/streams.md,
// "Consumer instances on any node" and "When a node dies".
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../helpers/context.js';
import { natsAvailable, startNatsCluster, type NatsCluster } from '../helpers/nats.js';
import { waitUntil } from '../helpers/wait.js';
import {
  assertReadOnce,
  callNode,
  clusterToken,
  startableNode,
  VND,
  type Read,
  type SluiceNode,
} from './cluster-nodes.js';

const TOPIC = 'orders';
const token = clusterToken('any-node-kill');

interface Upstream {
  readonly name: string;
  readonly port: number;
}

/**
 * Round robin over `upstreams`, one choice per connection; a node that refuses the connection
 * (killed) is passed over for the next. `servedBy` maps the client's port to the node chosen.
 */
function roundRobinProxy(upstreams: readonly Upstream[]): { server: Server; servedBy: Map<number, string> } {
  const servedBy = new Map<number, string>();
  let next = 0;
  const server = createServer((client: Socket) => {
    client.pause();
    const attempt = (tries: number): void => {
      if (tries === upstreams.length) return void client.destroy();
      const target = upstreams[next++ % upstreams.length]!;
      const upstream = connect(target.port, '127.0.0.1');
      upstream.once('error', () => attempt(tries + 1));
      upstream.once('connect', () => {
        upstream.removeAllListeners('error');
        upstream.on('error', () => client.destroy());
        client.on('error', () => upstream.destroy());
        servedBy.set(client.remotePort!, target.name);
        client.pipe(upstream).pipe(client);
        client.resume();
      });
    };
    attempt(0);
  });
  return { server, servedBy };
}

interface Reply {
  status: number;
  body: any;
  text: string;
  /** The node the proxy sent this request to. */
  node: string;
}

describe(
  'an instance behind a round-robin proxy outlives the node that created it (JetStream)',
  { skip: !natsAvailable && 'nats-server not installed' },
  () => {
    let cluster: NatsCluster;
    let root: string;
    let proxy: ReturnType<typeof roundRobinProxy>;
    let proxyUrl: string;
    const nodes: SluiceNode[] = [];

    /** One request through the proxy, on a connection of its own (so it is balanced on its own). */
    const via = (method: string, path: string, body?: unknown, type = VND): Promise<Reply> =>
      new Promise((resolve, reject) => {
        const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: VND };
        if (body !== undefined) headers['content-type'] = type;
        const req = request(`${proxyUrl}${path}`, { method, headers, agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString();
            let parsed: unknown;
            try {
              parsed = text === '' ? undefined : JSON.parse(text);
            } catch {
              parsed = undefined;
            }
            const node = proxy.servedBy.get(req.socket!.localPort!) ?? '?';
            resolve({ status: res.statusCode!, body: parsed, text, node });
          });
        });
        req.on('error', reject);
        req.end(body === undefined ? undefined : JSON.stringify(body));
      });

    before(async () => {
      cluster = await startNatsCluster(3);
      root = mkdtempSync(join(tmpdir(), 'sluice-any-node-kill-'));
      const proxyPort = await freePort();
      proxyUrl = `http://127.0.0.1:${proxyPort}`;
      const upstreams: Upstream[] = [];
      for (const name of ['node-k1', 'node-k2', 'node-k3']) {
        const port = await freePort();
        upstreams.push({ name, port });
        // Behind a balancer every node names the balancer's address in base_uri.
        const env = { STREAMS_PUBLIC_URL: proxyUrl };
        nodes.push(startableNode({ name, port, nats: cluster.urls, dir: join(root, name), token, env }));
      }
      await Promise.all(nodes.map((n) => n.start()));
      proxy = roundRobinProxy(upstreams);
      await new Promise<void>((resolve) => proxy.server.listen(proxyPort, '127.0.0.1', resolve));
      const created = await via(
        'POST',
        '/streams/topics/topic',
        { topic_name: TOPIC, partitions: 2 },
        'application/json',
      );
      assert.equal(created.status, 200, created.text);
      for (const n of nodes)
        await waitUntil(
          `${n.name} to know the topic`,
          async () => (await callNode(token, n.url, 'GET', `/streams/topics/${TOPIC}`)).status === 200,
        );
    });
    after(async () => {
      for (const n of nodes) await n.kill();
      await new Promise((resolve) => proxy?.server.close(resolve));
      await cluster?.stop();
      if (root) rmSync(root, { recursive: true, force: true });
    });

    test('SIGKILL of the creating node: the instance goes on through the others, each record read once', async (t) => {
      const created = await via('POST', '/streams/consumers/survivors', {
        name: 's1',
        'auto.offset.reset': 'earliest',
        'auto.commit.enable': 'false',
      });
      assert.equal(created.status, 200, created.text);
      const baseUri = created.body.base_uri as string;
      assert.ok(baseUri.startsWith(`${proxyUrl}/streams/consumers/`), `base_uri ${baseUri} names the proxy`);
      const creator = nodes.find((n) => n.name === created.node)!;
      const path = new URL(baseUri).pathname;
      const sub = await via('POST', `${path}/subscription`, { topics: [TOPIC] });
      assert.equal(sub.status, 200, sub.text);

      // The producer: a client of its own, batches through the proxy until told to stop.
      const produced = new Map<number, { partition: number; offset: number }>();
      let producing = true;
      let next = 0;
      // Closed around the kill: a produce in flight to the killed node would have an unknown
      // outcome (the connection resets), and this test counts every record produced.
      let gate: Promise<void> = Promise.resolve();
      let idle: () => void = () => undefined;
      const producer = (async () => {
        while (producing) {
          await gate;
          const records = Array.from({ length: 3 }, () => ({ key: `k${next}`, value: { n: next++ } }));
          const reply = await via('POST', `/streams/topic/${TOPIC}`, { records });
          assert.equal(reply.status, 200, `produce on ${reply.node}: ${reply.text}`);
          (reply.body.offsets as Array<{ partition: number; offset: number }>).forEach((o, i) =>
            produced.set(records[i]!.value.n, { partition: o.partition, offset: o.offset }),
          );
          idle();
        }
      })();

      // The consumer: fetch, then commit what was fetched; both through the proxy, one at a time.
      const reads: Read[] = [];
      let last = '';
      const step = async (): Promise<void> => {
        const got = await via('GET', `${path}/records?timeout=0`);
        assert.equal(got.status, 200, `fetch on ${got.node}: ${got.text}`);
        last = got.node;
        const batch = (got.body as Array<{ partition: number; offset: number; value: { n: number } }>).map(
          (r) => ({ partition: r.partition, offset: r.offset, n: r.value.n }),
        );
        if (batch.length === 0) return;
        reads.push(...batch);
        const top = new Map<number, number>();
        for (const r of batch) top.set(r.partition, Math.max(top.get(r.partition) ?? -1, r.offset));
        const offsets = [...top].map(([partition, offset]) => ({ topic: TOPIC, partition, offset }));
        const commit = await via('POST', `${path}/offsets`, { offsets });
        assert.equal(commit.status, 204, `commit on ${commit.node}: ${commit.text}`);
        last = commit.node;
      };

      // Kill the creating node between two requests of the instance, when another node served
      // the last one (a node that dies while it serves the instance takes it along once its
      // heartbeat times out: docs/streams.md, "When a node dies").
      await waitUntil(
        'ten records read, the last request served by another node than the creator',
        async () => {
          await step();
          return reads.length >= 10 && last !== creator.name;
        },
      );
      let open!: () => void;
      const paused = new Promise<void>((resolve) => (idle = resolve));
      gate = new Promise((resolve) => (open = resolve));
      await paused;
      await creator.kill();
      open();
      const before = reads.length;
      const servedAfter = new Set<string>();
      await waitUntil('ten more records read through the surviving nodes', async () => {
        await step();
        servedAfter.add(last);
        return reads.length >= before + 10;
      });
      producing = false;
      await producer;
      await waitUntil('every produced record to be read', async () => {
        await step();
        return reads.length >= produced.size;
      });

      t.diagnostic(
        `${before} records read before the kill of ${creator.name}, ${reads.length - before} after, served by ${[...servedAfter].sort().join(', ')}`,
      );
      assert.ok(!servedAfter.has(creator.name), 'the killed node served nothing');
      assertReadOnce(reads, produced, [...produced.keys()]);
      const committed = await via('GET', `${path}/offsets`);
      assert.equal(committed.status, 200, committed.text);
      for (const { partition, offset } of committed.body.offsets as Array<{
        partition: number;
        offset: number;
      }>) {
        const top = Math.max(
          ...[...produced.values()].filter((v) => v.partition === partition).map((v) => v.offset),
        );
        assert.equal(offset, top + 1, `partition ${partition}: committed after its last record`);
      }
    });
  },
);
