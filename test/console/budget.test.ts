// The console's script budget (docs/console.md, "Build"): the bundled script stays under 200 KB
// gzipped, measured as the build measures it (gzip level 9 of the file it writes).
import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ensureConsoleBuilt } from '../helpers/browser.js';

const BUDGET_BYTES = 200_000;

describe('console script budget', () => {
  it('keeps the bundled script under 200 KB gzipped', () => {
    ensureConsoleBuilt();
    const html = readFileSync(join('dist', 'console', 'index.html'), 'utf8');
    const script = /src="\/console\/(app-[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(script, 'index.html names its script');
    const gzipped = gzipSync(readFileSync(join('dist', 'console', script)), { level: 9 }).length;
    assert.ok(gzipped < BUDGET_BYTES, `the script is ${gzipped} bytes gzipped, over ${BUDGET_BYTES}`);
  });
});
