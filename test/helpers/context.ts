// A ServiceContext for tests: a temp data directory, a key store holding one admin key, and
// the environment the test gives (nothing from the real environment leaks in but PATH-like basics).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openKeyStore } from '../../src/core/auth/index.js';
import { HealthRegistry } from '../../src/core/health.js';
import { buildLogger } from '../../src/core/log.js';
import type { ServiceContext } from '../../src/core/service.js';
import { EnvReader, loadCoreSettings } from '../../src/core/settings/index.js';

export interface TestContext {
  ctx: ServiceContext;
  dataDir: string;
  /** An admin bearer token accepted by ctx.auth. */
  token: string;
  cleanup(): Promise<void>;
}

export async function makeTestContext(
  options: {
    env?: Record<string, string>;
    shared?: Record<string, SharedArrayBuffer>;
    dataDir?: string;
    /** The admin token (default: a random one); processes that must accept one token share it. */
    token?: string;
  } = {},
): Promise<TestContext> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'sluice-test-'));
  const token = options.token ?? 'test-admin-token-' + Math.random().toString(36).slice(2);
  const env = new EnvReader({
    SLUICE_DATA_DIR: dataDir,
    SLUICE_ADMIN_TOKEN: token,
    SLUICE_THREADS: '1',
    STREAMS_HOST: '127.0.0.1',
    STREAMS_PORT: '0',
    AUTOMATION_HOST: '127.0.0.1',
    AUTOMATION_PORT: '0',
    HOST: '127.0.0.1',
    PORT: '0',
    GRPC_HOST: '127.0.0.1',
    GRPC_PORT: '0',
    DEBUG_HOST: '127.0.0.1',
    DEBUG_PORT: '0',
    // A whole-suite run on one transport (SLUICE_HTTP_TRANSPORT=node node scripts/test.js).
    ...(process.env.SLUICE_HTTP_TRANSPORT
      ? { SLUICE_HTTP_TRANSPORT: process.env.SLUICE_HTTP_TRANSPORT }
      : {}),
    ...options.env,
  });
  const core = loadCoreSettings(env);
  const keys = openKeyStore(dataDir, token);
  const ctx: ServiceContext = {
    core,
    env,
    log: buildLogger((process.env.LOG_LEVEL as 'silent') ?? 'silent', 'json'),
    health: new HealthRegistry(),
    auth: keys,
    thread: { index: 0, count: 1 },
    shared: options.shared ?? {},
  };
  return {
    ctx,
    dataDir,
    token,
    async cleanup() {
      await keys.close();
      if (!options.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { freePort, freePortPair } from './ports.js';
