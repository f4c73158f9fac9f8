// The free-space reserve on a real file system: a tmpfs mounted here (root only), filled with a
// file, so statfs reports what the kernel says. And the SLUICE_DISK_RESERVE setting.
import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DiskReserve, StorageFullError, asStorageFull, isOutOfSpace } from '../../src/core/disk/reserve.js';
import { EnvReader, DEFAULT_DISK_RESERVE, loadCoreSettings } from '../../src/core/settings/index.js';

const MiB = 1024 * 1024;

describe('DiskReserve', () => {
  it('refuses below the reserve, says so once, and admits again once space is freed', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-reserve-'));
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir], { stdio: 'pipe' });
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      t.skip(`cannot mount a tmpfs here (needs root): ${String(error).split('\n')[0]}`);
      return;
    }
    try {
      const changes: boolean[] = [];
      let clock = 0;
      const reserve = new DiskReserve({
        store: 'test store',
        path: dir,
        reserveBytes: 2 * MiB,
        onChange: (full) => changes.push(full),
        now: () => clock,
      });
      reserve.admit(MiB); // 8 MiB free: fine
      writeFileSync(join(dir, 'filler'), Buffer.alloc(5 * MiB));
      clock += 1000; // the next admit looks at the file system again
      assert.throws(
        () => reserve.admit(MiB),
        (e: unknown) =>
          e instanceof StorageFullError && e.code === 'insufficient_storage' && /test store/.test(e.message),
      );
      assert.throws(() => reserve.admit(MiB), StorageFullError); // still full, not said again
      assert.deepEqual(changes, [true]);
      rmSync(join(dir, 'filler'));
      clock += 1000;
      reserve.admit(MiB);
      assert.deepEqual(changes, [true, false]);
    } finally {
      execFileSync('umount', [dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts admitted bytes against the free space between looks', () => {
    let looks = 0;
    const reserve = new DiskReserve({
      store: 's',
      path: '/',
      reserveBytes: 100 * MiB,
      onChange: () => undefined,
      probe: () => (looks++, 130 * MiB),
      now: () => 0,
    });
    reserve.admit(MiB); // costs 2 MiB (twice, for LMDB's pages)
    assert.equal(looks, 1);
    reserve.admit(MiB); // no new look: 4 MiB of 30 used
    assert.equal(looks, 1);
    assert.throws(() => reserve.admit(20 * MiB), StorageFullError); // 40 MiB more is below the reserve
  });

  it('is off with a reserve of 0', () => {
    const reserve = new DiskReserve({
      store: 's',
      path: '/',
      reserveBytes: 0,
      onChange: () => assert.fail('no change expected'),
      probe: () => 0,
    });
    reserve.admit(10 * MiB);
  });

  it('tells "no space" errors apart and names the store', () => {
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const pgFull = Object.assign(new Error('could not extend file'), { code: '53100' });
    const other = Object.assign(new Error('EACCES'), { code: 'EACCES' });
    assert.ok(isOutOfSpace(enospc) && isOutOfSpace(pgFull) && isOutOfSpace(new Error('MDB_MAP_FULL: x')));
    assert.ok(!isOutOfSpace(other) && !isOutOfSpace('ENOSPC'));
    const mapped = asStorageFull(enospc, 'automation store', '/data');
    assert.ok(
      mapped instanceof StorageFullError && mapped.store === 'automation store' && mapped.cause === enospc,
    );
    assert.equal(asStorageFull(other, 'x', '/'), other);
  });
});

describe('SLUICE_DISK_RESERVE', () => {
  it('takes bytes or a size with a binary unit, defaults to 64 MiB, and names itself when bad', () => {
    assert.equal(loadCoreSettings(new EnvReader({})).diskReserveBytes, DEFAULT_DISK_RESERVE);
    assert.equal(DEFAULT_DISK_RESERVE, 64 * MiB);
    const size = (v: string) => new EnvReader({ R: v }).size('R', 1);
    assert.equal(size('4096'), 4096);
    assert.equal(size('512KiB'), 512 * 1024);
    assert.equal(size('8m'), 8 * MiB);
    assert.equal(size('2GB'), 2 * 1024 * MiB);
    assert.equal(size('0'), 0);
    for (const bad of ['-1', '1.5GiB', 'lots', '10 parsecs'])
      assert.throws(() => size(bad), new RegExp(`R=${JSON.stringify(bad).replace(/[.]/g, '\\.')}`));
    assert.throws(
      () => loadCoreSettings(new EnvReader({ SLUICE_DISK_RESERVE: 'big' })),
      /SLUICE_DISK_RESERVE="big"/,
    );
  });
});
