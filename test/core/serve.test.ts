// The whole process as a user runs it: `sluice serve` on free ports, each service answers,
// and SIGTERM drains and exits 0.
import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { freePort } from '../helpers/context.js';
import { describeEachTransport } from '../helpers/transports.js';

describeEachTransport('sluice serve', (transport) => {
  it('starts all three services, prints addresses and a first admin key, and exits 0 on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-serve-'));
    const ports = {
      PORT: await freePort(),
      GRPC_PORT: await freePort(),
      DEBUG_PORT: await freePort(),
      STREAMS_PORT: await freePort(),
      AUTOMATION_PORT: await freePort(),
    };
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'serve', '--threads', '2'], {
      env: {
        ...process.env,
        SLUICE_DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        GRPC_HOST: '127.0.0.1',
        DEBUG_HOST: '127.0.0.1',
        STREAMS_HOST: '127.0.0.1',
        AUTOMATION_HOST: '127.0.0.1',
        ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
        LOG_LEVEL: 'warn',
        SLUICE_HTTP_TRANSPORT: transport,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const deadline = Date.now() + 60_000;
      // The key is printed on lines of its own after this one, which may arrive in a later
      // chunk, so the wait is for the line that follows the key.
      while (!/First start: an admin API key[\s\S]*Use it as/.test(out) && Date.now() < deadline) {
        if (child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.match(out, /First start: an admin API key[\s\S]*Use it as/, `stdout:\n${out}\nstderr:\n${err}`);
      const token = /\s(sk_\S+)/.exec(out)?.[1];
      assert.ok(token);
      // The banner says which transport serves (on node:http before Node 22.12 thread 0 alone
      // listens on the shared HTTP port, and the banner still lists it once).
      assert.match(out, new RegExp(`http transport: ${transport} `));
      for (const port of Object.values(ports).filter((p) => p !== ports.GRPC_PORT))
        assert.match(out, new RegExp(`:${port}\\b`));

      const health = await fetch(`http://127.0.0.1:${ports.PORT}/healthcheck`);
      assert.equal(health.status, 200);
      const streams = await fetch(`http://127.0.0.1:${ports.STREAMS_PORT}/streams/nothing-here`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(streams.status, 404);
      assert.ok((await streams.json()) !== null);
      const auth = await fetch(`http://127.0.0.1:${ports.AUTOMATION_PORT}/api/v1/auth/check`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(auth.status, 200);
      const unauth = await fetch(`http://127.0.0.1:${ports.AUTOMATION_PORT}/api/v1/auth/check`);
      assert.equal(unauth.status, 401);
    } finally {
      child.kill('SIGTERM');
      const code = await exited;
      rmSync(dataDir, { recursive: true, force: true });
      assert.equal(code, 0, `exit code; stderr:\n${err}`);
    }
  });
});
