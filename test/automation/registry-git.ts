// Test helpers that change the test's own registry repository the way a developer would.

import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const env = {
  ...process.env,
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@t',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@t',
};

export function gitIn(repo: string, args: string[]): string {
  return execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' });
}

/** Writes files (path → content), commits them and tags `<tag>` when given. */
export function release(repo: string, files: Record<string, string>, tag?: string): string {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), content);
  }
  gitIn(repo, ['add', '-A']);
  gitIn(repo, ['commit', '-q', '-m', `change ${Object.keys(files).join(', ')}`]);
  if (tag) gitIn(repo, ['tag', '-a', tag, '-m', tag]);
  return gitIn(repo, ['rev-parse', 'HEAD']).trim();
}

export function workflowManifest(name: string, extra: Record<string, unknown> = {}): string {
  return JSON.stringify(
    { schemaVersion: 1, name, description: `${name} (test)`, type: 'workflow', entry: 'index.js', ...extra },
    null,
    2,
  );
}

/** workflows.file-echo: its output maps each input file's name to the file's text. */
export const FILE_ECHO: Record<string, string> = {
  'workflows/file-echo/manifest.json': workflowManifest('File echo'),
  'workflows/file-echo/index.js': `export default { steps: [{ name: 'read', async run(ctx) {
    const out = {};
    for (const f of ctx.files.input) out[f.name] = (await ctx.files.read(f.name)).toString('utf8');
    return out;
  } }] };\n`,
};
