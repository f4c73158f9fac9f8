// `sluice keys` finds the server's data directory exactly as the server does (SLUICE_DATA_DIR,
// default ./data in the current folder), refuses a folder that holds no server data instead of
// creating an empty key store there, and creates one only with --init.
import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  DataDirError,
  EnvReader,
  loadCoreSettings,
  requireDataDir,
  resolveDataDir,
} from '../../src/core/settings/index.js';
import { waitUntil, withinHang } from '../helpers/wait.js';

const BIN = resolve('bin/sluice.js');
const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-datadir-'));
  dirs.push(dir);
  return dir;
};

/** The environment of a user's shell: none of the settings that choose where keys live. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...extra };
  if (!('SLUICE_DATA_DIR' in extra)) delete env.SLUICE_DATA_DIR;
  delete env.AUTOMATION_DATABASE_URL;
  delete env.SLUICE_ADMIN_TOKEN;
  return env;
}

function sluice(args: string[], cwd: string, env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [BIN, ...args], { cwd, env: cleanEnv(env), encoding: 'utf8' });
  return { code: result.status, out: result.stdout, err: result.stderr };
}

describe('the data directory', () => {
  it('is found by one function for the server and the commands', () => {
    const cwd = process.cwd();
    assert.equal(resolveDataDir(new EnvReader({})), join(cwd, 'data'));
    assert.equal(resolveDataDir(new EnvReader({ SLUICE_DATA_DIR: 'x/y' })), join(cwd, 'x', 'y'));
    const env = new EnvReader({ SLUICE_DATA_DIR: '/srv/sluice' });
    assert.equal(loadCoreSettings(env).dataDir, resolveDataDir(env));
  });

  it('is required to hold server data unless init is asked for', () => {
    const dir = join(tempDir(), 'data');
    const env = new EnvReader({ SLUICE_DATA_DIR: dir });
    assert.throws(
      () => requireDataDir(env, { init: false }),
      (error: unknown) =>
        error instanceof DataDirError && error.message.includes(dir) && /SLUICE_DATA_DIR/.test(error.message),
    );
    assert.equal(existsSync(dir), false);
    assert.equal(requireDataDir(env, { init: true }), dir);
    assert.equal(existsSync(dir), true);
  });
});

describe('sluice keys from another folder', () => {
  it('refuses a folder without server data, naming the folder and the setting; creates nothing', () => {
    const cwd = tempDir();
    for (const args of [
      ['keys', 'list'],
      ['keys', 'create', '--name', 'x'],
      ['keys', 'revoke', 'abc'],
    ]) {
      const r = sluice(args, cwd);
      assert.equal(r.code, 1, `${args.join(' ')}: ${r.out}${r.err}`);
      assert.match(r.err, new RegExp(`no Sluice data in ${join(cwd, 'data').replace(/[.]/g, '\\.')}`));
      assert.match(r.err, /SLUICE_DATA_DIR/);
      assert.match(r.err, /--init/);
      assert.doesNotMatch(r.out, /token/);
    }
    assert.equal(existsSync(join(cwd, 'data')), false);
  });

  it('with --init creates a key store there, which later commands use', () => {
    const cwd = tempDir();
    const created = sluice(['keys', 'create', '--init', '--name', 'first'], cwd);
    assert.equal(created.code, 0, created.err);
    assert.match(created.out, /token \(shown once\): sk_/);
    assert.equal(existsSync(join(cwd, 'data', 'auth')), true);
    const listed = sluice(['keys', 'list'], cwd);
    assert.equal(listed.code, 0, listed.err);
    assert.match(listed.out, /"name":"first"/);
  });

  it("with SLUICE_DATA_DIR set to a running server's data directory: a key made there works on it", async () => {
    const dataDir = tempDir();
    const server = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'streams', '--threads', '1'], {
      env: cleanEnv({ SLUICE_DATA_DIR: dataDir, STREAMS_HOST: '127.0.0.1', STREAMS_PORT: '0' }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    server.stdout.on('data', (d) => (out += d));
    server.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((r) => server.on('exit', (code) => r(code)));
    try {
      await waitUntil('the server to start', () => {
        if (server.exitCode !== null) throw new Error(`server exited:\n${out}\n${err}`);
        return /Use it as/.test(out);
      });
      const url = /streams\s+http\s+(http:\/\/\S+)/.exec(out)?.[1];
      assert.ok(url, out);
      const elsewhere = tempDir();
      const listed = sluice(['keys', 'list'], elsewhere, { SLUICE_DATA_DIR: dataDir });
      assert.equal(listed.code, 0, listed.err);
      assert.match(listed.out, /"name":"initial admin key"/);
      const created = sluice(['keys', 'create', '--name', 'ops'], elsewhere, { SLUICE_DATA_DIR: dataDir });
      assert.equal(created.code, 0, created.err);
      const token = /token \(shown once\): (\S+)/.exec(created.out)?.[1];
      assert.ok(token);
      const res = await fetch(`${url}/topics`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(res.status, 200);
      assert.equal(existsSync(join(elsewhere, 'data')), false);
    } finally {
      server.kill('SIGTERM');
      assert.equal(await withinHang('server exit', exited), 0, err);
    }
  });
});
