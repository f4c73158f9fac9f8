// The whole process as a user runs it: `sluice serve` on free ports, each service answers,
// and SIGTERM drains and exits 0.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { freeSluicePorts, SluiceProcess } from '../helpers/sluice-process.js';
import { describeEachTransport } from '../helpers/transports.js';

describeEachTransport('sluice serve', (transport) => {
  it('starts all three services, prints addresses and a first admin key, and exits 0 on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'sluice-serve-'));
    const ports = await freeSluicePorts();
    const proc = new SluiceProcess({
      dataDir,
      ports,
      transport,
      fromSource: true,
      detached: false,
      env: { LOG_LEVEL: 'warn' },
    });
    const out = () => proc.stdout;
    try {
      const token = await proc.firstKey();
      assert.match(out(), /First start: an admin API key[\s\S]*Use it as/);
      // The banner says which transport serves (on node:http before Node 22.12 thread 0 alone
      // listens on the shared HTTP port, and the banner still lists it once).
      assert.match(out(), new RegExp(`http transport: ${transport} `));
      for (const port of Object.values(ports).filter((p) => p !== ports.GRPC_PORT))
        assert.match(out(), new RegExp(`:${port}\\b`));

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
      const code = await proc.stop();
      rmSync(dataDir, { recursive: true, force: true });
      assert.equal(code, 0, `exit code\n${proc.output()}`);
    }
  });
});
