// The `sluice automation` nodes of the PostgreSQL load tools (automation-pg.ts,
// automation-pg-statements.ts): a registry remote made from automations/ and node processes
// started with it, stopped by the caller by pid.

import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { freePort, startChild, waitUntilReady, type Child } from './process.js';

export const TOKEN = 'loadtest-automation-admin-token';
const root = join(import.meta.dirname, '..');

export interface Node {
  url: string;
  child: Child;
}

/** `from`: the checkout whose bin/sluice.js runs (default this one; another for before/after). */
export async function startNode(
  name: string,
  dir: string,
  env: Record<string, string>,
  from: string = root,
): Promise<Node> {
  const port = await freePort();
  const child = startChild({
    name,
    command: process.execPath,
    args: [join(from, 'bin', 'sluice.js'), 'automation'],
    env: {
      ...process.env,
      SLUICE_ADMIN_TOKEN: TOKEN,
      SLUICE_THREADS: '1',
      SLUICE_DATA_DIR: join(dir, name),
      AUTOMATION_HOST: '127.0.0.1',
      AUTOMATION_PORT: String(port),
      AUTOMATION_POOL_THREADS: '2',
      AUTOMATION_NODE_ID: name,
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  await waitUntilReady(child, port, '/api/v1/openapi.json', 120_000);
  return { url: `http://127.0.0.1:${port}`, child };
}

/** A registry remote with the built-in automations released as 1.0.0 (what a fresh node seeds). */
export function makeRemote(dir: string): string {
  const remote = join(dir, 'registry');
  const git = (args: string[]) =>
    execFileSync('git', args, {
      cwd: remote,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'l',
        GIT_AUTHOR_EMAIL: 'l@l',
        GIT_COMMITTER_NAME: 'l',
        GIT_COMMITTER_EMAIL: 'l@l',
      },
      encoding: 'utf8',
    });
  cpSync(join(root, 'automations'), remote, { recursive: true });
  git(['init', '-q', '-b', 'main']);
  git(['add', '-A']);
  git(['commit', '-q', '-m', 'built-ins']);
  for (const type of ['workflows', 'agents'])
    for (const slug of git(['ls-tree', '--name-only', 'HEAD', `${type}/`])
      .split('\n')
      .filter(Boolean))
      git(['tag', '-a', `${slug.replace('/', '.')}@1.0.0`, '-m', slug]);
  return remote;
}
