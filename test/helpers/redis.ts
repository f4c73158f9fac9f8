// Real redis-server processes for tests: each on free loopback ports, in its own temp directory,
// stopped by pid. Never the machine's shared daemon on 6379.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCa } from './certs.js';

export function haveBinary(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

export const redisAvailable = haveBinary('redis-server') && haveBinary('redis-cli');

export { freePort } from './context.js';
import { freePort } from './context.js';
import { HANG_MS } from './wait.js';

export interface RedisProcess {
  readonly host: string;
  readonly port: number;
  readonly dir: string;
  /** Set when started with `unixSocket`. */
  readonly socketPath: string | undefined;
  pid(): number | undefined;
  /** SIGKILL, as a crash would. */
  kill(): Promise<void>;
  /** Starts the same server again on the same port (after kill). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface RedisOptions {
  /** Extra redis-server arguments, e.g. ['--requirepass', 'pw']. */
  args?: string[];
  /** Use this port instead of a free one. */
  port?: number;
  /** Run as a sentinel from this config text (the `port` line is added). */
  sentinelConfig?: string;
  /** TLS-only listener on the port (plain port disabled). */
  tls?: { cert: string; key: string; ca: string; authClients?: 'yes' | 'no' | 'optional' };
  /** Also listen on a unix socket in the server's directory. */
  unixSocket?: boolean;
  /** Output that marks the server ready (default: the "Ready to accept connections" line). */
  readyMarker?: RegExp;
}

function waitForLine(child: ChildProcess, marker: RegExp, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`redis-server did not become ready in ${timeoutMs} ms:\n${seen.slice(-2000)}`));
    }, timeoutMs);
    const onData = (chunk: Buffer): void => {
      seen += chunk.toString();
      if (marker.test(seen)) {
        cleanup();
        resolve();
      }
    };
    const onExit = (code: number | null): void => {
      cleanup();
      reject(new Error(`redis-server exited (${code}) before it was ready:\n${seen.slice(-2000)}`));
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

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export async function startRedis(options: RedisOptions = {}): Promise<RedisProcess> {
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'sluice-redis-'));
  let child: ChildProcess | undefined;

  const launch = async (): Promise<void> => {
    let args: string[];
    let marker = options.readyMarker ?? /Ready to accept connections/;
    if (options.sentinelConfig !== undefined) {
      const conf = join(dir, 'sentinel.conf');
      writeFileSync(conf, `port ${port}\nbind 127.0.0.1\ndir ${dir}\n${options.sentinelConfig}\n`);
      args = [conf, '--sentinel'];
      marker = options.readyMarker ?? /Sentinel ID is/;
    } else {
      args = [
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
        '--protected-mode',
        'no',
      ];
      if (options.tls) {
        args.push(
          '--port',
          '0',
          '--tls-port',
          String(port),
          '--tls-cert-file',
          options.tls.cert,
          '--tls-key-file',
          options.tls.key,
        );
        args.push(
          '--tls-ca-cert-file',
          options.tls.ca,
          '--tls-auth-clients',
          options.tls.authClients ?? 'no',
        );
      } else {
        args.push('--port', String(port));
      }
      if (options.unixSocket) args.push('--unixsocket', join(dir, 'redis.sock'), '--unixsocketperm', '700');
      args.push(...(options.args ?? []));
    }
    child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    await waitForLine(child, marker, HANG_MS);
  };

  const kill = async (): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    c.kill('SIGKILL');
    await exited(c);
  };

  await launch();
  return {
    host: '127.0.0.1',
    port,
    dir,
    socketPath: options.unixSocket ? join(dir, 'redis.sock') : undefined,
    pid: () => child?.pid,
    kill,
    async restart() {
      await kill();
      await launch();
    },
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function redisCli(port: number, args: string[], extra: string[] = []): string {
  const result = spawnSync('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...extra, ...args], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  if (result.status !== 0)
    throw new Error(`redis-cli ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
  return result.stdout;
}

export interface SentinelSetup {
  readonly masterName: string;
  readonly master: RedisProcess;
  readonly sentinels: RedisProcess[];
  stop(): Promise<void>;
}

/** One master and two sentinels watching it (quorum 2). */
export async function startSentinelSetup(
  options: { masterArgs?: string[]; sentinelExtra?: string } = {},
): Promise<SentinelSetup> {
  const masterName = 'sluicemaster';
  const master = await startRedis({ args: options.masterArgs ?? [] });
  const sentinels: RedisProcess[] = [];
  try {
    for (let i = 0; i < 2; i++) {
      sentinels.push(
        await startRedis({
          sentinelConfig: [
            `sentinel monitor ${masterName} 127.0.0.1 ${master.port} 2`,
            `sentinel down-after-milliseconds ${masterName} 5000`,
            options.sentinelExtra ?? '',
          ].join('\n'),
        }),
      );
    }
  } catch (error) {
    for (const s of sentinels) await s.stop();
    await master.stop();
    throw error;
  }
  return {
    masterName,
    master,
    sentinels,
    async stop() {
      for (const s of sentinels) await s.stop();
      await master.stop();
    },
  };
}

export interface ClusterSetup {
  readonly nodes: RedisProcess[];
  stop(): Promise<void>;
}

/**
 * One cluster-enabled node. Its two free ports (client and cluster bus) are picked before
 * redis-server binds them, so a test running alongside can take one in between: a bind failure
 * is retried with fresh ports.
 */
async function startClusterNode(): Promise<RedisProcess> {
  for (let attempt = 1; ; attempt++) {
    const busPort = await freePort();
    try {
      return await startRedis({
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-node-timeout',
          '5000',
          '--cluster-port',
          String(busPort),
        ],
      });
    } catch (err) {
      if (attempt >= 5 || !/Address already in use/.test(String(err))) throw err;
    }
  }
}

/** Three masters, no replicas, every slot assigned; resolves once all report cluster_state:ok. */
export async function startCluster(): Promise<ClusterSetup> {
  const nodes: RedisProcess[] = [];
  const stopAll = async (): Promise<void> => {
    for (const n of nodes) await n.stop();
  };
  try {
    for (let i = 0; i < 3; i++) nodes.push(await startClusterNode());
    redisCli(nodes[0]!.port, [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-yes',
    ]);
    const deadline = Date.now() + HANG_MS;
    for (const n of nodes) {
      for (;;) {
        if (/cluster_state:ok/.test(redisCli(n.port, ['cluster', 'info']))) break;
        if (Date.now() > deadline) throw new Error(`cluster node ${n.port} never reached cluster_state:ok`);
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  } catch (error) {
    await stopAll();
    throw error;
  }
  return { nodes, stop: stopAll };
}

export interface TestCerts {
  readonly dir: string;
  readonly ca: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  cleanup(): void;
}

/** A CA, a server certificate for 127.0.0.1/localhost and a client certificate, made with openssl. */
export function makeCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-certs-'));
  makeCa(dir, 'sluice', { server: 'IP:127.0.0.1,DNS:localhost', client: 'DNS:sluice-client' });
  return {
    dir,
    ca: join(dir, 'sluice-ca.crt'),
    serverCert: join(dir, 'server.crt'),
    serverKey: join(dir, 'server.key'),
    clientCert: join(dir, 'client.crt'),
    clientKey: join(dir, 'client.key'),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
