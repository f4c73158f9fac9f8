// bin/sluice.js builds dist/ only where TypeScript is installed: a production install (dev
// dependencies pruned, docs/deployment.md) runs the dist/ it has.
import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

const dirs: string[] = [];

/** A copy of the build script in a folder without node_modules (no TypeScript). */
function installWithoutTypescript(withDist: boolean): string {
  const root = mkdtempSync(join(tmpdir(), 'sluice-prod-'));
  dirs.push(root);
  writeFileSync(join(root, 'package.json'), '{"type":"module"}');
  writeFileSync(join(root, 'tsconfig.json'), '{}');
  mkdirSync(join(root, 'scripts'));
  copyFileSync('scripts/build-if-needed.js', join(root, 'scripts', 'build-if-needed.js'));
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'cli.ts'), '');
  if (withDist) {
    mkdirSync(join(root, 'dist', 'src'), { recursive: true });
    writeFileSync(join(root, 'dist', 'src', 'cli.js'), '');
  }
  return root;
}

function ensureBuilt(root: string) {
  const url = pathToFileURL(join(root, 'scripts', 'build-if-needed.js')).href;
  return spawnSync(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `await (await import(${JSON.stringify(url)})).ensureBuilt(); console.log('ready');`,
    ],
    { encoding: 'utf8' },
  );
}

describe('build before start', () => {
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('runs the built dist/ as it is when TypeScript is not installed', () => {
    const out = ensureBuilt(installWithoutTypescript(true));
    assert.equal(out.status, 0, out.stderr);
    assert.equal(out.stdout.trim(), 'ready');
    assert.equal(out.stderr, '');
  });

  it('says how to build when dist/ is missing too', () => {
    const out = ensureBuilt(installWithoutTypescript(false));
    assert.equal(out.status, 1);
    assert.match(
      out.stderr,
      /dist\/ is missing and TypeScript is not installed: run `npm ci && npm run build`/,
    );
  });
});
