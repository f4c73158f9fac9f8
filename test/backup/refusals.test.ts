// What `sluice backup` and `sluice restore` refuse, each with a message that says why, and
// without touching the data: a backup into a folder that holds something, a missing folder, a
// folder that is no backup, a garbage or tampered manifest, and a data directory that does not
// exist. (Restoring under a running server is refused in online.test.ts.)
import { strict as assert } from 'node:assert';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Manifest } from '../../src/backup/manifest.js';
import { runCli, startServer } from './harness.js';

describe('sluice backup and restore refuse', () => {
  const root = mkdtempSync(join(tmpdir(), 'sluice-backup-refusals-'));
  const data = join(root, 'data');
  const good = join(root, 'good');
  after(() => rmSync(root, { recursive: true, force: true }));

  before(async () => {
    // A data directory made by a real server, then a backup of it (server stopped).
    const server = await startServer(data);
    assert.equal(await server.stop(), 0, server.output());
    const made = await runCli(data, ['backup', good]);
    assert.equal(made.code, 0, made.stdout + made.stderr);
  });

  it('a backup into a folder that is not empty, leaving it as it was', async () => {
    const target = join(root, 'occupied');
    mkdirSync(target);
    writeFileSync(join(target, 'keep.txt'), 'mine');
    const result = await runCli(data, ['backup', target]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /occupied is not empty; back up into a new or empty folder/);
    assert.deepEqual(readdirSync(target), ['keep.txt']);
  });

  it('a backup of a data directory that does not exist', async () => {
    const result = await runCli(join(root, 'no-data'), ['backup', join(root, 'b-none')]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /the data directory .*no-data does not exist/);
    assert.equal(existsSync(join(root, 'b-none')), false);
  });

  it('usage errors', async () => {
    assert.equal((await runCli(data, ['backup'])).code, 2);
    assert.equal((await runCli(data, ['restore', 'a', 'b'])).code, 2);
  });

  it('a restore from a missing folder, a folder without a manifest, or a garbage manifest', async () => {
    const target = join(root, 'restore-target');
    const missing = await runCli(target, ['restore', join(root, 'nowhere')]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /no backup at .*nowhere: the folder does not exist/);

    const empty = join(root, 'not-a-backup');
    mkdirSync(empty);
    const none = await runCli(target, ['restore', empty]);
    assert.equal(none.code, 1);
    assert.match(none.stderr, /is not a sluice backup: it has no manifest.json/);

    const garbage = join(root, 'garbage');
    mkdirSync(garbage);
    writeFileSync(
      join(garbage, 'manifest.json'),
      '{"format": "sluice-backup", "formatVersion": 1, "lmdb": 7',
    );
    const bad = await runCli(target, ['restore', garbage]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /manifest.json is not valid JSON/);

    writeFileSync(join(garbage, 'manifest.json'), '{"format": "something-else"}');
    const other = await runCli(target, ['restore', garbage]);
    assert.equal(other.code, 1);
    assert.match(other.stderr, /is not a sluice backup manifest/);
    assert.equal(existsSync(target), false, 'nothing was written');
  });

  it('a restore from a backup whose copies or manifest were altered', async () => {
    const target = join(root, 'restore-tampered');
    const manifest = JSON.parse(readFileSync(join(good, 'manifest.json'), 'utf8')) as Manifest;

    // A manifest may not name a path outside the known layout.
    const escaping = structuredClone(manifest);
    escaping.lmdb[0]!.path = '../../elsewhere';
    const copy = join(root, 'tampered');
    rmSync(copy, { recursive: true, force: true });
    await runCli(data, ['backup', copy]);
    writeFileSync(join(copy, 'manifest.json'), JSON.stringify(escaping));
    const escaped = await runCli(target, ['restore', copy]);
    assert.equal(escaped.code, 1);
    assert.match(escaped.stderr, /unknown LMDB environment/);

    // A changed byte in an LMDB copy.
    writeFileSync(join(copy, 'manifest.json'), JSON.stringify(manifest));
    const file = join(copy, 'data', manifest.lmdb[0]!.files[0]!.path);
    const bytes = readFileSync(file);
    bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 0xff, bytes.length - 1);
    writeFileSync(file, bytes);
    const corrupt = await runCli(target, ['restore', copy]);
    assert.equal(corrupt.code, 1);
    assert.match(corrupt.stderr, /does not match its checksum/);
    assert.equal(existsSync(target), false, 'nothing was written');
  });

  it('a restore into a data directory that holds something, unless --force', async () => {
    const target = join(root, 'restore-occupied');
    mkdirSync(target);
    writeFileSync(join(target, 'other.txt'), 'x');
    const refused = await runCli(target, ['restore', good]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /is not empty; restore into an empty data directory, or pass --force/);
    assert.deepEqual(readdirSync(target), ['other.txt']);
    const forced = await runCli(target, ['restore', good, '--force']);
    assert.equal(forced.code, 0, forced.stdout + forced.stderr);
    assert.equal(existsSync(join(target, 'other.txt')), false);
    assert.ok(existsSync(join(target, 'streams', 'streams.mdb')));
  });
});
