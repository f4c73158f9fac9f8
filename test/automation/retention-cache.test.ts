// The `.blobs/` cache bound on real files: a use of a cached copy (localCopy) makes it the most
// recently used, and boundCache removes the least recently used copies until the caches fit.

import { after, describe, it } from 'node:test';
import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalBlobStore } from '../../src/automation/files/blobs.js';
import { localCopy } from '../../src/automation/files/local-copy.js';
import { boundCache } from '../../src/automation/retention/cache.js';
import { blobCachePath } from '../../src/automation/runs/folder.js';

const sha = (text: string) => createHash('sha256').update(text).digest('hex');

describe('the .blobs cache bound', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-cache-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('evicts the least recently used copies first, a use counting as recent', async () => {
    const runsDir = join(dir, 'runs');
    const blobs = new LocalBlobStore(join(dir, 'blobs'));
    // Three cached copies of 100 bytes in two run folders, used an hour, two and three ago.
    const copies = ['a', 'b', 'c'].map((letter, i) => {
      const content = letter.repeat(100);
      const path = blobCachePath(join(runsDir, i === 2 ? 'run_2' : 'run_1'), sha(content));
      mkdirSync(join(path, '..'), { recursive: true });
      writeFileSync(path, content);
      const at = new Date(Date.now() - (3 - i) * 3600_000);
      utimesSync(path, at, at);
      return { path, content };
    });
    // A copy being written is not the cache's.
    writeFileSync(`${copies[0]!.path}.part-1234`, 'x'.repeat(500));
    const [a, b, c] = copies as [(typeof copies)[0], (typeof copies)[0], (typeof copies)[0]];
    // `a`, the oldest, is used now.
    assert.equal(await localCopy(blobs, a.path, sha(a.content)), true);

    assert.deepEqual(await boundCache(runsDir, 300), { files: 0, bytes: 0 });
    assert.deepEqual(await boundCache(runsDir, 250), { files: 1, bytes: 100 });
    assert.ok(!existsSync(b.path), 'b, now the least recently used, went first');
    assert.ok(existsSync(a.path) && existsSync(c.path));
    assert.deepEqual(await boundCache(runsDir, 100), { files: 1, bytes: 100 });
    assert.ok(!existsSync(c.path) && existsSync(a.path));
    assert.ok(existsSync(`${a.path}.part-1234`));
    // An absent runs folder is an empty cache.
    assert.deepEqual(await boundCache(join(dir, 'none'), 0), { files: 0, bytes: 0 });
  });
});
