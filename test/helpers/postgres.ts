// A private PostgreSQL server for tests: initdb and pg_ctl from the Debian packages
// (/usr/lib/postgresql/<version>/bin), a fresh cluster in its own temp directory, on a free
// loopback port with its unix socket inside that directory, stopped by pid. Never the machine's
// shared server on 5432. initdb and the server refuse to run as root, so as root every command
// runs as the `postgres` user (runuser, from util-linux) on a directory that user owns.

import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './context.js';
import { HANG_MS, waitUntil } from './wait.js';
import { childrenOf, processState } from './proc.js';

/** The bin directory of the newest installed PostgreSQL that has initdb and pg_ctl. */
function findBinDir(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .filter((v) => /^\d+(\.\d+)?$/.test(v))
    .sort((a, b) => Number(b) - Number(a));
  for (const v of versions) {
    const bin = join(base, v, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  return undefined;
}

const BIN = findBinDir();
const asRoot = process.getuid?.() === 0;

function postgresUser(): { uid: number; gid: number } | undefined {
  const uid = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

const OWNER = asRoot ? postgresUser() : undefined;

export const postgresAvailable = BIN !== undefined && (!asRoot || OWNER !== undefined);

/** For `describe(…, { skip })`: false, or why the PostgreSQL tests cannot run here. */
export const postgresSkip: string | false = postgresAvailable
  ? false
  : BIN === undefined
    ? 'PostgreSQL is not installed (no initdb and pg_ctl under /usr/lib/postgresql/<version>/bin)'
    : 'running as root and there is no postgres user to run PostgreSQL as';

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:<port>/postgres (trust authentication). */
  readonly url: string;
  readonly port: number;
  /** The postmaster's pid while it runs (it changes on restart). */
  readonly pid: number | undefined;
  readonly dataDir: string;
  /** A URL of a new, empty database on this server (tests of one file can share a server). */
  createDatabase(): Promise<string>;
  /** Fast shutdown (SIGINT to the postmaster), keeping the data; `start()` brings it back. */
  shutdown(): Promise<void>;
  /** Starts the server again on the same port and data (after shutdown or kill9). */
  start(): Promise<void>;
  /** shutdown() then start(). */
  restart(): Promise<void>;
  /** SIGKILL to the postmaster and its backends, as a crash of the machine would. */
  kill9(): Promise<void>;
  /** Kills the server by pid and removes its temp directory. */
  stop(): Promise<void>;
}

function run(argv: string[], options: { allowFail?: boolean } = {}): { status: number; output: string } {
  const [cmd, ...args] = asRoot ? ['runuser', '-u', 'postgres', '--', ...argv] : argv;
  const result = spawnSync(cmd!, args, { encoding: 'utf8', timeout: HANG_MS });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`;
  const status = result.status ?? 1;
  if (status !== 0 && !options.allowFail) throw new Error(`${argv.join(' ')} failed (${status}):\n${output}`);
  return { status, output };
}

/** pg_ctl start -w in a child process (async, so the test's event loop keeps running). */
function pgCtlStart(dataDir: string, logFile: string): Promise<{ status: number; output: string }> {
  const argv = [
    join(BIN!, 'pg_ctl'),
    'start',
    '-w',
    '-t',
    String(HANG_MS / 1000),
    '-D',
    dataDir,
    '-l',
    logFile,
  ];
  const [cmd, ...args] = asRoot ? ['runuser', '-u', 'postgres', '--', ...argv] : argv;
  return new Promise((resolve) => {
    const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.once('error', (err) => resolve({ status: 1, output: output + String(err) }));
    child.once('exit', (code) => resolve({ status: code ?? 1, output }));
  });
}

/** True while `pid` exists and is not a zombie (a container's init may not reap at once). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const state = processState(pid);
  return state !== undefined && state !== 'Z';
}

export async function startPostgres(): Promise<PostgresServer> {
  if (!postgresAvailable) throw new Error(postgresSkip || 'PostgreSQL unavailable');
  const root = mkdtempSync(join(tmpdir(), 'sluice-pg-'));
  const dataDir = join(root, 'data');
  const socketDir = join(root, 'socket');
  const logFile = join(root, 'server.log');
  mkdirSync(socketDir);
  if (OWNER) for (const p of [root, socketDir]) chownSync(p, OWNER.uid, OWNER.gid);
  let pid: number | undefined;
  let port = 0;
  let databases = 0;

  try {
    // --no-sync only skips initdb's own flush of the new cluster; the server runs with fsync=on.
    run([
      join(BIN!, 'initdb'),
      '-D',
      dataDir,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }

  const launch = async (): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      if (port === 0 || attempt > 1) {
        port = await freePort();
        // The last setting of a name wins, so appending a new port replaces the old one.
        const conf = [
          `port = ${port}`,
          `listen_addresses = '127.0.0.1'`,
          `unix_socket_directories = '${socketDir}'`,
          'fsync = on',
          'max_connections = 100',
          'shared_buffers = 32MB',
          '',
        ].join('\n');
        // As root the file belongs to postgres; appending as root keeps its owner.
        appendFileSync(join(dataDir, 'postgresql.conf'), conf);
      }
      const result = await pgCtlStart(dataDir, logFile);
      if (result.status === 0) break;
      const log = existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-3000) : '';
      // Another process took the free port between the pick and the bind: try a new one.
      if (attempt < 4 && /could not (bind|create listen)|already in use/i.test(log)) continue;
      throw new Error(`pg_ctl start failed (${result.status}):\n${result.output}\n${log}`);
    }
    pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  };

  const waitGone = async (pids: number[]): Promise<void> => {
    await waitUntil('PostgreSQL processes to exit', () => pids.every((p) => !alive(p)));
  };

  const shutdown = async (): Promise<void> => {
    const p = pid;
    pid = undefined;
    if (p === undefined || !alive(p)) return;
    const family = [p, ...childrenOf(p)];
    process.kill(p, 'SIGINT');
    await waitGone(family);
  };

  const kill9 = async (): Promise<void> => {
    const p = pid;
    pid = undefined;
    if (p === undefined || !alive(p)) return;
    const family = [p, ...childrenOf(p)];
    for (const q of family) {
      try {
        process.kill(q, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await waitGone(family);
    // A killed postmaster may linger as a zombie until it is reaped, and PostgreSQL takes a
    // lock file (and the socket's) naming a pid that still exists for a running server: both
    // are stale now.
    rmSync(join(dataDir, 'postmaster.pid'), { force: true });
    rmSync(join(socketDir, `.s.PGSQL.${port}.lock`), { force: true });
  };

  // A port taken before the first start is retried inside launch; a failure here is final.
  try {
    await launch();
  } catch (err) {
    await kill9();
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
  const start = async (): Promise<void> => {
    if (pid !== undefined && alive(pid)) return;
    // Same port: clients configured with the URL must find the server again.
    const keep = port;
    const result = await pgCtlStart(dataDir, logFile);
    if (result.status !== 0)
      throw new Error(`pg_ctl start on port ${keep} failed (${result.status}):\n${result.output}`);
    pid = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  };

  const url = () => `postgres://postgres@127.0.0.1:${port}/postgres`;

  return {
    get url() {
      return url();
    },
    get port() {
      return port;
    },
    get pid() {
      return pid;
    },
    dataDir,
    async createDatabase() {
      const name = `t${process.pid}_${++databases}`;
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    shutdown,
    start,
    async restart() {
      await shutdown();
      await start();
    },
    kill9,
    async stop() {
      await kill9();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
