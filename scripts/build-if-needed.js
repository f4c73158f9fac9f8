// Builds dist/ with tsc when any source file is newer than the last build, so `npm start` and
// the `sluice` command work on a fresh clone without a separate build step. A production install
// (`npm prune --omit=dev` after `npm run build`, docs/deployment.md) has no TypeScript: there the
// built dist/ runs as it is. The web console (console/ → dist/console/) is rebuilt the same way
// when its sources are newer than its last build and esbuild is installed.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function newestMtime(dir) {
  let newest = 0;
  if (!existsSync(dir)) return newest;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const m = entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs;
    if (m > newest) newest = m;
  }
  return newest;
}

export async function ensureBuilt() {
  const stamp = join(root, 'dist', '.build-stamp');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  if (!existsSync(tsc)) {
    if (existsSync(join(root, 'dist', 'src', 'cli.js'))) return;
    process.stderr.write('sluice: dist/ is missing and TypeScript is not installed: run `npm ci && npm run build`\n');
    process.exit(1);
  }
  await ensureConsoleBuilt();
  const sources = Math.max(
    newestMtime(join(root, 'src')),
    newestMtime(join(root, 'workers')),
    statSync(join(root, 'tsconfig.json')).mtimeMs,
  );
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= sources) return;
  process.stderr.write('sluice: building (tsc)…\n');
  const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (result.status !== 0) {
    process.stderr.write('sluice: build failed\n');
    process.exit(result.status ?? 1);
  }
  writeBuildStamp();
}

/** Records that dist/ is as new as the sources (`npm run build` calls this after its tsc). */
export function writeBuildStamp() {
  writeFileSync(join(root, 'dist', '.build-stamp'), new Date().toISOString());
}

/** Rebuilds dist/console when console/ changed; a production install keeps the shipped one. */
export async function ensureConsoleBuilt() {
  if (!existsSync(join(root, 'node_modules', 'esbuild'))) return;
  const { buildConsole, consoleNeedsBuild } = await import('./build-console.js');
  if (!consoleNeedsBuild()) return;
  process.stderr.write('sluice: building the console (esbuild)…\n');
  await buildConsole({ quiet: true });
}

// `node scripts/build-if-needed.js --stamp`: the last step of `npm run build`, so that `npm start`
// after a build does not build again.
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === '--stamp') writeBuildStamp();
