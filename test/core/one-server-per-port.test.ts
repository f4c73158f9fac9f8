// One server per port: a second `sluice` process started on ports a running server holds exits
// non-zero with a message naming the setting, the port and the holding process, creates nothing
// in its data folder, and the first server keeps answering. Threads of one server still share.
import { strict as assert } from 'node:assert';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { describeBusyPorts, findBusyPorts, listeningInodes } from '../../src/core/port-probe.js';
import { EnvReader } from '../../src/core/settings/index.js';
import { ratelimitListeners } from '../../src/ratelimit/server/listeners.js';
import { freePort } from '../helpers/context.js';
import { freeSluicePorts, SluiceProcess } from '../helpers/sluice-process.js';
import { describeEachTransport } from '../helpers/transports.js';
import { withinHang } from '../helpers/wait.js';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-ports-'));
  dirs.push(dir);
  return dir;
};

function start(args: string[], env: Record<string, string> & { SLUICE_DATA_DIR: string }): SluiceProcess {
  const { SLUICE_DATA_DIR: dataDir, ...rest } = env;
  return new SluiceProcess({
    dataDir,
    args,
    fromSource: true,
    detached: false,
    env: { LOG_LEVEL: 'warn', ...rest },
  });
}

const exitCode = (server: SluiceProcess) => server.exited.then((e) => e.code);

async function stop(server: SluiceProcess): Promise<void> {
  assert.equal(await withinHang('server exit', server.stop()), 0, server.stderr);
}

describeEachTransport('a second streams server on the same port', (transport) => {
  it('exits non-zero naming STREAMS_PORT and the first pid; the first keeps serving', async () => {
    const port = await freePort();
    const common = {
      STREAMS_HOST: '127.0.0.1',
      STREAMS_PORT: String(port),
      SLUICE_HTTP_TRANSPORT: transport,
    };
    const first = start(['streams', '--threads', '2'], { ...common, SLUICE_DATA_DIR: tempDir() });
    try {
      const token = await first.firstKey();
      const secondDir = tempDir();
      const second = start(['streams', '--threads', '2'], { ...common, SLUICE_DATA_DIR: secondDir });
      const code = await withinHang('second server exit', exitCode(second));
      assert.notEqual(code, 0);
      assert.match(
        second.stderr,
        new RegExp(`STREAMS_PORT: 127\\.0\\.0\\.1:${port} \\(streams\\) is already in use`),
      );
      assert.match(second.stderr, new RegExp(`by process ${first.child.pid} \\(`));
      assert.doesNotMatch(second.stdout, /listening on/);
      assert.deepEqual(readdirSync(secondDir), [], 'the refused server created nothing');
      // Every request still reaches the first server: its key works, again and again.
      for (let i = 0; i < 10; i++) {
        const res = await fetch(`http://127.0.0.1:${port}/topics`, {
          headers: { authorization: `Bearer ${token}` },
        });
        assert.equal(res.status, 200);
        await res.arrayBuffer();
      }
    } finally {
      await stop(first);
    }
  });
});

describe('a second `sluice serve` on the same ports', () => {
  it('exits non-zero naming each taken port; the first keeps serving', async () => {
    const ports = await freeSluicePorts();
    const env = Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)]));
    const first = start(['serve', '--threads', '2'], { ...env, SLUICE_DATA_DIR: tempDir() });
    try {
      const token = await first.firstKey();
      const second = start(['serve', '--threads', '2'], { ...env, SLUICE_DATA_DIR: tempDir() });
      assert.notEqual(await withinHang('second server exit', exitCode(second)), 0);
      for (const [setting, port] of Object.entries(ports))
        assert.match(second.stderr, new RegExp(`${setting}: 127\\.0\\.0\\.1:${port} .*already in use`));
      assert.match(second.stderr, new RegExp(`by process ${first.child.pid} \\(`));
      const auth = await fetch(`http://127.0.0.1:${ports.AUTOMATION_PORT}/api/v1/auth/check`, {
        headers: { authorization: `Bearer ${token}` },
      });
      assert.equal(auth.status, 200);
      assert.equal((await fetch(`http://127.0.0.1:${ports.PORT}/healthcheck`)).status, 200);
    } finally {
      await stop(first);
    }
  });
});

describe('port probe', () => {
  const listen = (host: string): Promise<Server> =>
    new Promise((resolve) => {
      const server = createServer();
      server.listen({ host, port: 0 }, () => resolve(server));
    });

  it('finds a held port, skips port 0, and frees a probed port again', async () => {
    const held = await listen('127.0.0.1');
    const heldPort = (held.address() as { port: number }).port;
    const free = await freePort();
    try {
      const busy = await findBusyPorts([
        { service: 's', setting: 'HELD_PORT', host: '127.0.0.1', port: heldPort },
        { service: 's', setting: 'FREE_PORT', host: '127.0.0.1', port: free },
        { service: 's', setting: 'ZERO_PORT', host: '127.0.0.1', port: 0 },
      ]);
      assert.deepEqual(
        busy.map((b) => b.setting),
        ['HELD_PORT'],
      );
      // A wildcard bind conflicts with a loopback holder too.
      const wild = await findBusyPorts([{ service: 's', setting: 'W', host: '0.0.0.0', port: heldPort }]);
      assert.equal(wild.length, 1);
      assert.match(
        describeBusyPorts(busy),
        new RegExp(`HELD_PORT: 127\\.0\\.0\\.1:${heldPort} \\(s\\) is already in use`),
      );
      // The probe closed its socket: the free port can be taken right after.
      const again = createServer();
      await new Promise<void>((resolve, reject) => {
        again.once('error', reject);
        again.listen({ host: '127.0.0.1', port: free, exclusive: true }, resolve);
      });
      again.close();
      if (process.platform === 'linux') assert.ok(listeningInodes(heldPort).size >= 1);
    } finally {
      held.close();
    }
  });

  it('plans the rate limit listeners from their settings', () => {
    const plan = (env: Record<string, string>, threads = 3) =>
      ratelimitListeners(new EnvReader(env), threads).map((l) => `${l.setting}=${l.host}:${l.port}`);
    assert.deepEqual(plan({}), ['PORT=0.0.0.0:8080', 'GRPC_PORT=0.0.0.0:8081', 'DEBUG_PORT=127.0.0.1:6070']);
    assert.deepEqual(plan({ GRPC_THREAD_PORTS: 'true', GRPC_PORT: '9000' }), [
      'PORT=0.0.0.0:8080',
      'GRPC_PORT=0.0.0.0:9000',
      'GRPC_PORT=0.0.0.0:9001',
      'GRPC_PORT=0.0.0.0:9002',
      'DEBUG_PORT=127.0.0.1:6070',
    ]);
    assert.deepEqual(
      plan({ GRPC_UDS: '/tmp/x.sock', USE_PULLMETRICS: 'true', PROMETHEUS_ADDR: '127.0.0.1:9191' }),
      // Named by the setting's current name; PROMETHEUS_ADDR is its older alias.
      ['PORT=0.0.0.0:8080', 'DEBUG_PORT=127.0.0.1:6070', 'PULLMETRICS_ADDR=127.0.0.1:9191'],
    );
  });
});
