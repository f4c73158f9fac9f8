// Sluice automation nodes as child processes (node-child.ts) for the multi-node tests: start one
// with its AUTOMATION_* settings, SIGKILL it (a crash) or SIGTERM it (a clean stop), call its API;
// and the registry remote the nodes clone, with workflows that wait on a gate file.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { withinHang } from '../../helpers/wait.js';
import { gitIn, release, workflowManifest } from '../registry-git.js';

export const TOKEN = `pg-nodes-${process.pid}-${Math.random().toString(36).slice(2)}`;

export interface Node {
  name: string;
  url: string;
  start(): Promise<void>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

export function automationNode(name: string, dir: string, env: Record<string, string>): Node {
  let child: ChildProcess | undefined;
  const node: Node = {
    name,
    url: '',
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
      node.url = JSON.parse(line).url as string;
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

const GATED_SOURCE = `import { existsSync } from 'node:fs';
export default {
  steps: [{ name: 'wait', async run(ctx) {
    while (!existsSync(ctx.input.gate)) await ctx.sleep(10);
    return { text: ctx.input.text };
  } }],
  output: (ctx) => ctx.steps.wait,
};
`;

/**
 * The files of a workflow `workflows.<name>` that waits until the file named by its input's
 * `gate` exists, then outputs `{text}` of its input.
 */
export function gatedWorkflow(name: string): Record<string, string> {
  return {
    [`workflows/${name}/manifest.json`]: workflowManifest(`Gated ${name}`, {
      inputSchema: { type: 'object', required: ['gate', 'text'] },
    }),
    [`workflows/${name}/index.js`]: GATED_SOURCE,
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
