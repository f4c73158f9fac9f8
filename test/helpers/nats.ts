// Real nats-server processes with JetStream for tests: a single server or a cluster, each node on
// free loopback ports with its store in its own temp directory, stopped by pid. Never the
// machine's shared daemon on 4222.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { freePort } from './context.js';
import { haveBinary } from './redis.js';
import { HANG_MS, waitUntil } from './wait.js';

export const natsAvailable = haveBinary('nats-server');

export interface NatsNode {
  readonly name: string;
  readonly port: number;
  readonly clusterPort: number;
  readonly url: string;
  readonly dir: string;
  pid(): number | undefined;
  running(): boolean;
  /** SIGKILL, as a crash would; the store directory stays for a restart. */
  kill(): Promise<void>;
  /** Starts the node again on the same ports and store (after kill). */
  restart(): Promise<void>;
}

export interface NatsCluster {
  readonly nodes: NatsNode[];
  /** Client URLs of every node, e.g. for STREAMS_NATS_SERVERS (comma-joined). */
  readonly urls: string[];
  /** Resolves once a client can use JetStream (a meta leader exists in a cluster). */
  ready(): Promise<void>;
  stop(): Promise<void>;
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

function waitForReady(child: ChildProcess, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`nats-server ${name} did not become ready in ${HANG_MS} ms:\n${seen.slice(-2000)}`));
    }, HANG_MS);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      if (/Server is ready/.test(seen)) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`nats-server ${name} exited (${code}) before it was ready:\n${seen.slice(-2000)}`));
    };
    const cleanup = (): void => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
  });
}

interface NodePlan {
  name: string;
  port: number;
  clusterPort: number;
  dir: string;
}

function config(plan: NodePlan, all: NodePlan[]): string {
  const lines = [
    `server_name: ${plan.name}`,
    'host: 127.0.0.1',
    `port: ${plan.port}`,
    `jetstream { store_dir: ${JSON.stringify(join(plan.dir, 'js'))} }`,
  ];
  if (all.length > 1) {
    const routes = all
      .filter((p) => p !== plan)
      .map((p) => `nats-route://127.0.0.1:${p.clusterPort}`)
      .join(', ');
    lines.push(
      `cluster { name: sluice-test, host: 127.0.0.1, port: ${plan.clusterPort}, routes: [${routes}] }`,
    );
  }
  return lines.join('\n') + '\n';
}

function makeNode(plan: NodePlan, all: NodePlan[]): NatsNode & { start(): Promise<void> } {
  let child: ChildProcess | undefined;
  const conf = join(plan.dir, 'nats.conf');
  mkdirSync(plan.dir, { recursive: true });
  writeFileSync(conf, config(plan, all));
  const kill = async (): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    c.kill('SIGKILL');
    await exited(c);
  };
  const start = async (): Promise<void> => {
    child = spawn('nats-server', ['-c', conf], { stdio: ['ignore', 'pipe', 'pipe'] });
    await waitForReady(child, plan.name);
  };
  return {
    name: plan.name,
    port: plan.port,
    clusterPort: plan.clusterPort,
    url: `nats://127.0.0.1:${plan.port}`,
    dir: plan.dir,
    pid: () => child?.pid,
    running: () => !!child && child.exitCode === null && child.signalCode === null,
    kill,
    start,
    async restart() {
      await kill();
      await start();
    },
  };
}

/**
 * Waits until JetStream answers account info through any of `urls` and, with `replicas` > 1, can
 * place a stream of that many replicas (a meta leader alone is not enough: an R3 stream needs
 * three current peers, else "no suitable peers for placement").
 */
export async function waitForJetStream(urls: string[], replicas = 1): Promise<void> {
  await waitUntil(
    'JetStream to be available',
    async () => {
      let nc: NatsConnection | undefined;
      try {
        nc = await connect({ servers: urls, timeout: 2_000, maxReconnectAttempts: 0 });
        const jsm = await jetstreamManager(nc, { timeout: 2_000 });
        await jsm.getAccountInfo();
        if (replicas > 1) {
          const name = `ready_probe_${Math.random().toString(36).slice(2)}`;
          await jsm.streams.add({ name, subjects: [`${name}.x`], num_replicas: replicas });
          await jsm.streams.delete(name);
        }
        return true;
      } catch {
        return false;
      } finally {
        await nc?.close().catch(() => undefined);
      }
    },
    { intervalMs: 100 },
  );
}

/**
 * Starts `size` nats-server nodes with JetStream (size 1: a single server, no cluster block).
 * Ports are picked free and a start that loses a port to another process is retried with new ones.
 */
export async function startNatsCluster(size = 3): Promise<NatsCluster> {
  for (let attempt = 0; ; attempt++) {
    const root = mkdtempSync(join(tmpdir(), 'sluice-nats-'));
    const plans: NodePlan[] = [];
    for (let i = 0; i < size; i++)
      plans.push({
        name: `n${i + 1}`,
        port: await freePort(),
        clusterPort: await freePort(),
        dir: join(root, `n${i + 1}`),
      });
    const nodes = plans.map((p) => makeNode(p, plans));
    try {
      await Promise.all(nodes.map((n) => n.start()));
    } catch (err) {
      for (const n of nodes) await n.kill();
      rmSync(root, { recursive: true, force: true });
      if (attempt < 3 && /address already in use/i.test(String(err))) continue;
      throw err;
    }
    const urls = nodes.map((n) => n.url);
    const cluster: NatsCluster = {
      nodes,
      urls,
      ready: () => {
        // Placement is probed only with every node up (at start, or after all came back): with
        // one down, a stream of the running nodes' count is not placed on them alone.
        const running = urls.filter((_u, i) => nodes[i]!.running());
        return waitForJetStream(running, running.length === nodes.length ? nodes.length : 1);
      },
      async stop() {
        for (const n of nodes) await n.kill();
        rmSync(root, { recursive: true, force: true });
      },
    };
    try {
      await cluster.ready();
    } catch (err) {
      await cluster.stop();
      // A cluster that never became usable (a node that lost its route port to another process
      // keeps serving clients but joins no cluster) is started again on other ports.
      if (attempt < 3) continue;
      throw err;
    }
    return cluster;
  }
}
