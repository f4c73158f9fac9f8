// Docs that run as written: every shell block of README.md and docs/*.md is run (unless it is
// marked `<!-- doc-test: skip (reason) -->`), the blocks of a page in order in one bash with
// `set -euo pipefail`, against a `sluice serve` of the page's own on free ports with a fresh
// data directory; a block fails on a non-zero exit, or when its output differs from the
// expected output the page shows (`<!-- doc-test: expect -->`). The convention is in
// docs/architecture.md, "Docs that run".
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { shellBlocks } from './blocks.js';
import { runPage, startServer } from './run-page.js';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
// DOC_TEST_PAGE=streams runs only the pages whose path contains it (while editing a page).
const only = process.env.DOC_TEST_PAGE;
const pages = [
  'README.md',
  ...readdirSync(join(repo, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
].filter((page) => !only || page.includes(only));

describe('docs run as written', () => {
  for (const page of pages) {
    const blocks = shellBlocks(readFileSync(join(repo, page), 'utf8'), page);
    const runnable = blocks.filter((b) => b.skip === undefined);
    if (runnable.length === 0) continue;
    it(`${page}: ${runnable.length} block(s) run, ${blocks.length - runnable.length} skipped`, async () => {
      const server = await startServer(repo);
      try {
        const result = await runPage(repo, page, blocks, server);
        if (result.failures.length > 0) assert.fail(result.failures.join('\n\n'));
        assert.equal(result.ran, runnable.length);
      } finally {
        await server.stop();
      }
    });
  }
});
