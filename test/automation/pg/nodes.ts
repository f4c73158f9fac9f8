// Sluice automation nodes as child processes (node-child.ts) for the multi-node tests: start one
// with its AUTOMATION_* settings, SIGKILL it (a crash) or SIGTERM it (a clean stop), call its API;
// and the registry remote the nodes clone, the held-run workflow (workflows.gated) the tests
// decide which node runs what with, and a cluster frame (PostgreSQL, temp folder, gates, nodes).
import { spawn, type ChildProcess } from 'node:child_process';
import { strict as assert } from 'node:assert';
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createInterface } from 'node:readline';
import { startPostgres, type PostgresServer } from '../../helpers/postgres.js';
import { withinHang } from '../../helpers/wait.js';
import { gitIn, release, workflowManifest } from '../registry-git.js';

export const TOKEN = `pg-nodes-${process.pid}-${Math.random().toString(36).slice(2)}`;

export interface Node {
  name: string;
  url: string;
  /** The SMTP listener's port when the node has AUTOMATION_SMTP_PORT. */
  smtpPort: number | undefined;
  start(): Promise<void>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export function automationNode(name: string, dir: string, env: Record<string, string>): Node {
  let child: ChildProcess | undefined;
  const node: Node = {
    name,
    url: '',
    smtpPort: undefined,
    async start() {
      const started = spawn(process.execPath, ['--import', 'tsx', 'test/automation/pg/node-child.ts'], {
        env: {
          ...process.env,
          LOG_LEVEL: process.env.LOG_LEVEL ?? 'silent',
          NODE_DATA_DIR: dir,
          NODE_TOKEN: TOKEN,
          AUTOMATION_NODE_ID: name,
          ...env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child = started;
      let stderr = '';
      started.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
      // PG_NODES_LOG=<dir>: each node's log goes to <dir>/<name>.log as well (debugging).
      if (process.env.PG_NODES_LOG) {
        const out = createWriteStream(join(process.env.PG_NODES_LOG, `${name}.log`), { flags: 'a' });
        started.stderr.pipe(out);
      }
      const line = await withinHang(
        `node ${name} to listen`,
        new Promise<string | undefined>((resolve) => {
          createInterface({ input: started.stdout }).once('line', resolve);
          started.once('exit', () => resolve(undefined));
        }),
      );
      if (!line) throw new Error(`node ${name} exited before listening:\n${stderr}`);
      const listening = JSON.parse(line) as { url: string; smtpPort?: number };
      node.url = listening.url;
      node.smtpPort = listening.smtpPort;
    },
    async kill() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGKILL');
      await exited;
    },
    async stop() {
      const c = child;
      if (!c || c.exitCode !== null || c.signalCode !== null) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      await withinHang(`node ${name} to stop`, exited).catch(() => c.kill('SIGKILL'));
    },
  };
  return node;
}

/** A call of a node's API, as the nodes' admin (tenant `default`) or with another key's token. */
export async function api(node: Node, method: string, path: string, body?: unknown, token = TOKEN) {
  const res = await fetch(`${node.url}/api/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** The held-run workflow of the multi-node tests. */
export const GATED = 'workflows.gated';

/**
 * The files of a workflow `workflows.<name>` whose run waits until the file named by its input's
 * `gate` exists, then outputs `{text}` of its input (and `edition`, when given, to tell releases
 * apart).
 */
export function gatedWorkflow(name: string, edition?: string): Record<string, string> {
  const extra = edition === undefined ? '' : `, edition: ${JSON.stringify(edition)}`;
  return {
    [`workflows/${name}/manifest.json`]: workflowManifest(`Gated ${name}`, {
      inputSchema: { type: 'object', required: ['gate', 'text'] },
    }),
    [`workflows/${name}/index.js`]: `import { existsSync } from 'node:fs';
export default {
  steps: [{ name: 'wait', async run(ctx) {
    while (!existsSync(ctx.input.gate)) await ctx.sleep(10);
    return { text: ctx.input.text${extra} };
  } }],
  output: (ctx) => ctx.steps.wait,
};
`,
  };
}

/**
 * A registry remote at `<dir>/registry` holding each workflow (its id → its files), each
 * committed and released as `<id>@1.0.0`; returns its path.
 */
export function registryRemote(dir: string, workflows: Record<string, Record<string, string>>): string {
  const remote = join(dir, 'registry');
  gitIn(dir, ['init', '-q', '-b', 'main', remote]);
  writeFileSync(join(remote, 'automation.json'), '{"schemaVersion":1,"platformVersion":"1"}\n');
  for (const [id, files] of Object.entries(workflows)) release(remote, files, `${id}@1.0.0`);
  return remote;
}

/** workflows.gated's files (`edition` tells releases apart). */
export function gatedFiles(edition?: string): Record<string, string> {
  return gatedWorkflow('gated', edition);
}

/**
 * The frame of a multi-node test: a private PostgreSQL with a fresh database, a client on it, a
 * temp folder, gate files in it (`gate()` names a new one) and nodes on the database, each with
 * its data directory `<dir>/<name>`. `close` opens every gate, stops the nodes and removes it all.
 */
export interface Cluster {
  server: PostgresServer;
  url: string;
  db: pg.Client;
  dir: string;
  gate(): string;
  node(name: string, env: Record<string, string>): Node;
  close(): Promise<void>;
}

export async function openCluster(prefix: string): Promise<Cluster> {
  const server = await startPostgres();
  const url = await server.createDatabase();
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  // A test that stops the server cuts this client off; it no longer needs it then.
  db.on('error', () => undefined);
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const gates: string[] = [];
  const nodes: Node[] = [];
  return {
    server,
    url,
    db,
    dir,
    gate() {
      const path = join(dir, `gate-${gates.length}`);
      gates.push(path);
      return path;
    },
    node(name, env) {
      const node = automationNode(name, join(dir, name), { AUTOMATION_DATABASE_URL: url, ...env });
      nodes.push(node);
      return node;
    },
    async close() {
      for (const path of gates) writeFileSync(path, '');
      for (const node of nodes) await node.stop();
      await db.end().catch(() => undefined);
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Starts a workflows.gated run on `node` held by `gate`; its id. */
export async function startGated(node: Node, gate: string, text: string, query = ''): Promise<string> {
  const r = await api(node, 'POST', `/runs${query}`, { target: GATED, input: { gate, text } });
  assert.ok(r.status === 201 || r.status === 200, JSON.stringify(r.body));
  return r.body.id as string;
}
