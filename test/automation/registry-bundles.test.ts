// Registry repositories that share commits through a registry source store and a blob store
// (here LMDB and a local directory, the interfaces the PostgreSQL ones implement): the first
// repository seeds and becomes the base, the next joins it; a commit published by one is fetched
// by the other (also when several ask at once); a missing bundle or blob is a CommitUnavailableError
// naming the commit; with a remote the remote is asked first and the bundle is the fallback.
import { after, before, describe, test } from 'node:test';
import { strict as assert } from 'node:assert';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { openAutomationDb, type AutomationDb } from '../../src/automation/db.js';
import { LocalBlobStore } from '../../src/automation/files/blobs.js';
import { CommitUnavailableError, type BundlePort } from '../../src/automation/registry/bundles.js';
import { RegistryRepository } from '../../src/automation/registry/repository.js';
import { LmdbRegistrySourceStore } from '../../src/automation/registry/source-store.js';
import { gitIn, release, workflowManifest } from './registry-git.js';

const files = (edition: string) => ({
  'workflows/w/manifest.json': workflowManifest('W'),
  'workflows/w/index.js': `export default { steps: [{ name: 's', run: () => (${JSON.stringify(edition)}) }] };\n`,
});

describe('registry commits shared as bundles', () => {
  let dir: string;
  let db: AutomationDb;
  let port: BundlePort;
  const repository = (name: string, cloneUrl?: string) =>
    new RegistryRepository({
      path: join(dir, name),
      cacheDir: join(dir, `${name}-versions`),
      cloneUrl,
      seedDir: join(dir, 'seed'),
      sources: port,
    });

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-bundles-'));
    db = openAutomationDb(join(dir, 'meta.lmdb'));
    const blobs = new LocalBlobStore(join(dir, 'blobs'));
    port = { store: new LmdbRegistrySourceStore(db, blobs), blobs, tmpDir: join(dir, 'tmp') };
    // The seed folder a new repository copies (as the built-ins are): one workflow.
    for (const [path, text] of Object.entries(files('seed'))) {
      mkdirSync(dirname(join(dir, 'seed', path)), { recursive: true });
      writeFileSync(join(dir, 'seed', path), text);
    }
  });

  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the first repository seeds the base, the next joins it; published commits are fetched', async () => {
    const a = repository('a');
    const b = repository('b');
    assert.equal(await a.open(), 'seeded');
    assert.equal(await b.open(), 'joined');
    const head = (name: string) => gitIn(join(dir, name), ['rev-parse', 'HEAD']).trim();
    assert.equal(head('b'), head('a'));
    assert.deepEqual(await b.releasedPackages(), ['workflows.w']);
    assert.equal(await a.open(), 'existing');

    const commit = release(join(dir, 'a'), files('second'));
    await a.publish(commit);
    // Several readers at once (they share one fetch of the commit), every one of them served.
    await Promise.all([1, 2, 3].map(() => b.ensureCommit(commit)));
    const unpacked = await b.materialise(commit, 'workflows/w');
    assert.ok(existsSync(join(unpacked, 'index.js')));
    assert.equal((await b.readManifest(commit, 'workflows/w'))?.fileName, 'manifest.json');
  });

  test('a commit without a bundle, or whose blob is gone, is unavailable with the commit named', async () => {
    const a = repository('a');
    const b = repository('b');
    const unpublished = release(join(dir, 'a'), files('third'));
    await assert.rejects(b.ensureCommit(unpublished), (err: unknown) => {
      assert.ok(err instanceof CommitUnavailableError);
      assert.equal(err.code, 'version_unavailable');
      assert.match(
        err.message,
        new RegExp(`commit ${unpublished} is not in this node's registry repository`),
      );
      assert.match(err.message, /no bundle of it is stored/);
      return true;
    });
    await a.publish(unpublished);
    const sha256 = (await port.store.get(unpublished))!;
    await port.blobs.delete(sha256);
    await assert.rejects(b.ensureCommit(unpublished), (err: unknown) => {
      assert.ok(err instanceof CommitUnavailableError);
      assert.match(
        err.message,
        new RegExp(`commit ${unpublished} .*blob ${sha256}\\) is not in the blob store`),
      );
      return true;
    });
  });

  test('with a remote: the remote first, the bundle when the remote lacks the commit', async () => {
    const remote = join(dir, 'remote');
    gitIn(dir, ['clone', '-q', '--bare', join(dir, 'a'), remote]);
    const c = repository('c', remote);
    assert.equal(await c.open(), 'cloned');
    const onRemote = release(join(dir, 'a'), files('pushed'));
    gitIn(join(dir, 'a'), ['push', '-q', remote, 'HEAD:refs/heads/main']);
    await c.ensureCommit(onRemote);
    const onlyBundled = release(join(dir, 'a'), files('bundled'));
    await repository('a').publish(onlyBundled);
    await c.ensureCommit(onlyBundled);
    assert.equal((await c.readManifest(onlyBundled, 'workflows/w'))?.fileName, 'manifest.json');
  });
});
