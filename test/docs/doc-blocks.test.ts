// Docs that run as written: every shell block of README.md and docs/*.md is run (unless it is
// marked `<!-- doc-test: skip (reason) -->`), the blocks of a page in order in one bash with
// `set -euo pipefail`, against a `sluice serve` of the page's own on free ports with a fresh
// data directory; a block fails on a non-zero exit, or when its output differs from the
// expected output the page shows (`<!-- doc-test: expect -->`). The convention is in
// docs/architecture.md, "Docs that run".
import { strict as assert } from 'node:assert';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { quotedFiles, shellBlocks } from './blocks.js';
import { runPage, startServer, type Substitutes } from './run-page.js';
import { postgresSkip, startPostgres, type PostgresServer } from '../helpers/postgres.js';

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

describe('docs quote the repository as it is', () => {
  for (const page of pages) {
    for (const quoted of quotedFiles(readFileSync(join(repo, page), 'utf8'), page)) {
      it(`${page}:${quoted.line} is ${quoted.path}`, () => {
        const file = readFileSync(join(repo, quoted.path), 'utf8');
        assert.equal(
          quoted.text.trimEnd(),
          file.trimEnd(),
          `${page}:${quoted.line} differs from ${quoted.path}`,
        );
      });
    }
  }
});

describe('docs cite only what a reader has', () => {
  // The specs and notes the project was built from are not in the repository: a page states
  // the fact, or cites a public document, instead of pointing at them.
  it('no page points at spec/, notes/ or ../shared/', () => {
    const found: string[] = [];
    for (const page of pages) {
      readFileSync(join(repo, page), 'utf8')
        .split('\n')
        .forEach((line, k) => {
          if (/[`(](\.\.\/)*(shared\/)?(spec|notes)\/[\w.-]+/.test(line))
            found.push(`${page}:${k + 1}: ${line.trim()}`);
        });
    }
    assert.deepEqual(found, []);
  });
});

describe('docs run as written', { concurrency: 2 }, () => {
  // `sluice` builds dist/ when the sources are newer; done once here, before any server or
  // `npx sluice` of a block needs it, so no block waits on a build.
  before(() => {
    const built = spawnSync(process.execPath, ['bin/sluice.js', '--help'], { cwd: repo, encoding: 'utf8' });
    assert.equal(built.status, 0, `building dist/ failed:\n${built.stderr}`);
  });
  for (const page of pages) {
    const blocks = shellBlocks(readFileSync(join(repo, page), 'utf8'), page);
    const runnable = blocks.filter((b) => b.skip === undefined);
    if (runnable.length === 0) continue;
    // A page that asks for a PostgreSQL of its own (`instead NAME=postgres`) gets one, or is
    // skipped, with the reason, where PostgreSQL cannot run.
    const needsPostgres = blocks.some((b) => b.instead?.service === 'postgres');
    const skip = needsPostgres ? postgresSkip : false;
    const title = `${page}: ${runnable.length} block(s) run, ${blocks.length - runnable.length} skipped`;
    it(title, { skip }, async () => {
      let postgres: PostgresServer | undefined;
      const server = await startServer(repo);
      try {
        const substitutes: Substitutes = {};
        if (needsPostgres) {
          postgres = await startPostgres();
          substitutes.postgres = await postgres.createDatabase();
        }
        const result = await runPage(repo, page, blocks, server, substitutes);
        if (result.failures.length > 0) assert.fail(result.failures.join('\n\n'));
        assert.equal(result.ran, runnable.length);
      } finally {
        await server.stop();
        await postgres?.stop();
      }
    });
  }
});
