// Hot reload through the real file watcher: edits, creation, removal, chmod, symlink swaps of
// RUNTIME_ROOT, and bad files that keep the previous rules.

import { strict as assert } from 'node:assert';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { listConfigFiles } from '../../src/ratelimit/config/files.js';
import { ConfigManager } from '../../src/ratelimit/config/manager.js';
import { FileConfigProvider, type FileProviderOptions } from '../../src/ratelimit/config/provider.js';
import type { RuleSet } from '../../src/ratelimit/config/rules.js';
import { createStatsBuffer, SharedStatsTable } from '../../src/ratelimit/stats/shared-table.js';
import { withinHang } from '../helpers/wait.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'sluice-rl-reload-'));
  dirs.push(d);
  return d;
}

const doc = (domain: string, limit = 5) =>
  `domain: ${domain}\ndescriptors:\n  - key: k\n    rate_limit:\n      unit: minute\n      requests_per_unit: ${limit}\n`;

async function managed(layout: FileProviderOptions) {
  const stats = new SharedStatsTable(createStatsBuffer(64));
  let domains = -1;
  const manager = new ConfigManager({
    provider: new FileConfigProvider({ debounceMs: 20, ...layout }),
    compile: { mergeDomainConfig: false, nearLimitRatio: 0.8 },
    onRules: () => undefined,
    stats,
    countStats: true,
    onDomainsLoaded: (n) => (domains = n),
  });
  await manager.start();
  return { manager, stats, domains: () => domains };
}

/**
 * Runs `change` and waits for a reload after which `done` holds. One change can cause more
 * than one load (a watcher may report a write twice, further apart than the debounce on a
 * loaded machine), so a load is not taken as the one this change caused until it shows it.
 */
async function reloadAfter(manager: ConfigManager, change: () => void, done: () => boolean): Promise<void> {
  let next = manager.nextLoad();
  change();
  for (;;) {
    await withinHang('a reload showing the change', next);
    // The manager resolves its waiters synchronously at the end of a load, so no other load
    // can finish between that and the next registration below.
    if (done()) return;
    next = manager.nextLoad();
  }
}

const limitOf = (rules: RuleSet | undefined, domain: string) =>
  rules?.domains.get(domain)?.root.exact.get('k')?.rule?.requestsPerUnit;

describe('ratelimit config loading and hot reload', () => {
  it('reloads on write, create, chmod and remove in the config directory (RUNTIME_WATCH_ROOT=false)', async () => {
    const root = tempDir();
    mkdirSync(join(root, 'config'));
    writeFileSync(join(root, 'config', 'a.yaml'), doc('one', 5));
    const { manager, stats, domains } = await managed({
      root,
      subdirectory: '',
      appDirectory: 'config',
      ignoreDotFiles: false,
      watchRoot: false,
    });
    try {
      assert.equal(limitOf(manager.current, 'one'), 5);
      assert.equal(domains(), 1);
      await reloadAfter(
        manager,
        () => writeFileSync(join(root, 'config', 'a.yaml'), doc('one', 7)),
        () => limitOf(manager.current, 'one') === 7,
      );
      assert.equal(limitOf(manager.current, 'one'), 7);
      await reloadAfter(
        manager,
        () => writeFileSync(join(root, 'config', 'b.yaml'), doc('two', 9)),
        () => limitOf(manager.current, 'two') === 9,
      );
      assert.equal(limitOf(manager.current, 'two'), 9);
      const loadsBefore = manager.loadCount;
      await reloadAfter(
        manager,
        () => chmodSync(join(root, 'config', 'b.yaml'), 0o600),
        () => manager.loadCount > loadsBefore,
      );
      assert.ok(manager.loadCount > loadsBefore);
      await reloadAfter(
        manager,
        () => unlinkSync(join(root, 'config', 'b.yaml')),
        () => manager.current?.domains.has('two') === false,
      );
      assert.equal(manager.current?.domains.has('two'), false);

      // a bad file: the previous rules stay, the error is counted and kept
      await reloadAfter(
        manager,
        () =>
          writeFileSync(
            join(root, 'config', 'c.yaml'),
            'domain: three\ndescriptors:\n  - key: k\n    rate_limit: { unit: fortnight }\n',
          ),
        () => manager.error !== undefined,
      );
      assert.equal(limitOf(manager.current, 'one'), 7);
      assert.match(manager.error?.message ?? '', /c\.yaml: invalid rate limit unit 'fortnight'/);
      assert.ok(stats.get('ratelimit.service.config_load_error') >= 1);
      assert.ok(stats.get('ratelimit.service.config_load_success') >= 4);

      // removing every domain makes the config health component unhealthy
      await reloadAfter(
        manager,
        () => {
          unlinkSync(join(root, 'config', 'c.yaml'));
          unlinkSync(join(root, 'config', 'a.yaml'));
        },
        () => manager.current?.domains.size === 0,
      );
      assert.equal(manager.current?.domains.size, 0);
      assert.equal(domains(), 0);
    } finally {
      await manager.close();
    }
  });

  it('reloads when the RUNTIME_ROOT symlink is swapped (RUNTIME_WATCH_ROOT=true), not on edits in place', async () => {
    const base = tempDir();
    for (const v of ['v1', 'v2']) mkdirSync(join(base, v, 'config'), { recursive: true });
    writeFileSync(join(base, 'v1', 'config', 'rl.yaml'), doc('swap', 1));
    writeFileSync(join(base, 'v2', 'config', 'rl.yaml'), doc('swap', 2));
    const current = join(base, 'current');
    symlinkSync(join(base, 'v1'), current);
    const { manager } = await managed({
      root: current,
      subdirectory: '',
      appDirectory: 'config',
      ignoreDotFiles: false,
      watchRoot: true,
    });
    try {
      assert.equal(limitOf(manager.current, 'swap'), 1);
      assert.deepEqual(manager.current?.files, ['config.rl.yaml']);
      // the atomic swap tools use: new link beside, then rename over
      await reloadAfter(
        manager,
        () => {
          symlinkSync(join(base, 'v2'), join(base, 'current.tmp'));
          renameSync(join(base, 'current.tmp'), current);
        },
        () => limitOf(manager.current, 'swap') === 2,
      );
      assert.equal(limitOf(manager.current, 'swap'), 2);
    } finally {
      await manager.close();
    }
  });

  it('RUNTIME_SUBDIRECTORY adds a path segment; sorted order; dot files only when not ignored; only *.yaml/*.yml', () => {
    const root = tempDir();
    const dir = join(root, 'sub', 'config');
    mkdirSync(join(dir, 'nested'), { recursive: true });
    writeFileSync(join(dir, 'b.yaml'), doc('b'));
    writeFileSync(join(dir, 'a.yml'), doc('a'));
    writeFileSync(join(dir, 'nested', 'c.yaml'), doc('c'));
    writeFileSync(join(dir, '.hidden.yaml'), doc('hidden'));
    writeFileSync(join(dir, 'README.md'), 'not yaml');
    const names = (ignoreDotFiles: boolean, watchRoot: boolean) =>
      listConfigFiles({ root, subdirectory: 'sub', appDirectory: 'config', ignoreDotFiles, watchRoot }).map(
        (f) => f.name,
      );
    assert.deepEqual(names(false, true), [
      'config..hidden.yaml',
      'config.a.yml',
      'config.b.yaml',
      'config.nested.c.yaml',
    ]);
    assert.deepEqual(names(true, false), ['a.yml', 'b.yaml', 'nested.c.yaml']);
    assert.deepEqual(
      listConfigFiles({
        root: join(root, 'missing'),
        subdirectory: '',
        appDirectory: 'config',
        ignoreDotFiles: false,
        watchRoot: false,
      }),
      [],
    );
  });
});
