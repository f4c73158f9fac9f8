// The debug listener's exposure: loopback by default, and no heap snapshots or CPU profiles
// unless DEBUG_PROFILING_ENABLED=true (a heap snapshot carries every secret the process holds).
// Real debug servers on free ports.

import { strict as assert } from 'node:assert';
import { after, describe, it } from 'node:test';
import { pino } from 'pino';
import type { HttpServerHandle } from '../../src/core/http/index.js';
import { EnvReader } from '../../src/core/settings/index.js';
import { startDebugServer } from '../../src/ratelimit/server/debug.js';
import { loadRateLimitSettings } from '../../src/ratelimit/settings/index.js';
import { createStatsBuffer, SharedStatsTable } from '../../src/ratelimit/stats/shared-table.js';

const servers: HttpServerHandle[] = [];

async function debugServer(profiling: boolean): Promise<string> {
  const server = await startDebugServer({
    host: '127.0.0.1',
    port: 0,
    profiling,
    log: pino({ level: 'silent' }),
    sources: {
      rules: () => undefined,
      stats: new SharedStatsTable(createStatsBuffer(64)),
      gauges: () => ({}),
    },
  });
  servers.push(server);
  return server.url;
}

describe('ratelimit debug listener exposure', () => {
  after(async () => {
    for (const server of servers) await server.close();
  });

  it('listens on loopback with profiling off unless told otherwise', () => {
    const defaults = loadRateLimitSettings(new EnvReader({})).server.debug;
    assert.deepEqual(defaults, { host: '127.0.0.1', port: 6070, profiling: false });
    const open = loadRateLimitSettings(
      new EnvReader({ DEBUG_HOST: '0.0.0.0', DEBUG_PROFILING_ENABLED: 'true' }),
    ).server.debug;
    assert.deepEqual(open, { host: '0.0.0.0', port: 6070, profiling: true });
  });

  it('refuses heap snapshots and CPU profiles by default, naming the setting', async () => {
    const profiling = loadRateLimitSettings(new EnvReader({})).server.debug.profiling;
    const url = await debugServer(profiling);
    for (const path of ['/debug/pprof/heap', '/debug/pprof/profile?seconds=1']) {
      const res = await fetch(url + path);
      assert.equal(res.status, 403, path);
      assert.match(res.headers.get('content-type') ?? '', /application\/json/);
      const body = (await res.json()) as { code: string; message: string; requestId: string };
      assert.equal(body.code, 'profiling_disabled');
      assert.match(body.message, /DEBUG_PROFILING_ENABLED=true/);
      assert.ok(body.requestId);
    }
    // The rest of the listener still answers.
    assert.equal((await fetch(`${url}/stats`)).status, 200);
    assert.match(await (await fetch(`${url}/debug/pprof/`)).text(), /disabled; set DEBUG_PROFILING_ENABLED/);
  });

  it('serves a heap snapshot when enabled', async () => {
    const url = await debugServer(true);
    const res = await fetch(`${url}/debug/pprof/heap`);
    assert.equal(res.status, 200);
    assert.ok(((await res.json()) as { snapshot?: unknown }).snapshot);
  });
});
