// Builds the web console: console/src/main.tsx bundled by esbuild into one minified ES2022 script
// and one stylesheet, both named by their content hash (so they can be cached for good), and an
// index.html that loads them from /console/. No inline script or style: the pages are served with
// a Content-Security-Policy that allows only files of the console's own origin.
//
//   node scripts/build-console.js              build, print sizes
//   node scripts/build-console.js --if-needed  build only when console/ is newer than the last build
import { gzipSync } from 'node:zlib';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'console');
const out = join(root, 'dist', 'console');
const stamp = join(out, '.build-stamp');

function newestMtime(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** True when console/ (or this script) changed since the last build, or there is none. */
export function consoleNeedsBuild() {
  if (!existsSync(stamp)) return true;
  const sources = Math.max(newestMtime(source), statSync(fileURLToPath(import.meta.url)).mtimeMs);
  return statSync(stamp).mtimeMs < sources;
}

export async function buildConsole({ quiet = false } = {}) {
  const esbuild = await import('esbuild');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const result = await esbuild.build({
    entryPoints: [join(source, 'src', 'main.tsx')],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    outdir: out,
    entryNames: 'app-[hash]',
    assetNames: 'asset-[hash]',
    metafile: true,
    legalComments: 'none',
    logLevel: 'warning',
    tsconfig: join(source, 'tsconfig.json'),
  });
  const files = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const js = files.find((f) => f.endsWith('.js'));
  const css = files.find((f) => f.endsWith('.css'));
  if (!js) throw new Error('build-console: esbuild produced no script');
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Sluice console</title>
<link rel="icon" href="data:,">
${css ? `<link rel="stylesheet" href="/console/${css}">\n` : ''}<script type="module" src="/console/${js}"></script>
</head>
<body>
<noscript>The Sluice console needs JavaScript.</noscript>
<div id="app"></div>
</body>
</html>
`;
  writeFileSync(join(out, 'index.html'), html);
  writeFileSync(stamp, new Date().toISOString());
  const jsBytes = readFileSync(join(out, js));
  const sizes = { js, jsBytes: jsBytes.length, jsGzipBytes: gzipSync(jsBytes, { level: 9 }).length };
  if (!quiet)
    process.stdout.write(
      `console: dist/console/${js} ${(sizes.jsBytes / 1024).toFixed(1)} KiB, ` +
        `${(sizes.jsGzipBytes / 1024).toFixed(1)} KiB gzipped${css ? `; ${css}` : ''}\n`,
    );
  return sizes;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const ifNeeded = process.argv.includes('--if-needed');
  if (!ifNeeded || consoleNeedsBuild()) await buildConsole({ quiet: ifNeeded });
}
