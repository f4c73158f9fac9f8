// Starts the automation service on a free port with a temp data dir, and a small fetch helper.

import { makeTestContext } from '../helpers/context.js';
import { startAutomation, type RunningAutomation } from '../../src/automation/index.js';

export interface Harness {
  service: RunningAutomation;
  url: string;
  token: string;
  dataDir: string;
  registryPath: string;
  ctx: Awaited<ReturnType<typeof makeTestContext>>;
  api<T = any>(
    method: string,
    path: string,
    opts?: {
      body?: unknown;
      token?: string | null;
      headers?: Record<string, string>;
      raw?: string | Uint8Array | FormData;
    },
  ): Promise<{ status: number; body: T; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * `dataDir`: start on an existing data directory (a restart); the caller removes it. `now`: the
 * service's retention clock (startAutomation's options).
 */
export async function startHarness(
  env: Record<string, string> = {},
  opts: { dataDir?: string; now?: () => number } = {},
): Promise<Harness> {
  const ctx = await makeTestContext({
    env: { AUTOMATION_POOL_THREADS: '1', AUTOMATION_CANCEL_GRACE: '300ms', ...env },
    ...(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir }),
  });
  const service = await startAutomation(ctx.ctx, [], opts.now ? { now: opts.now } : {});
  const url = service.url;
  const api: Harness['api'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...opts.headers };
    const token = opts.token === undefined ? ctx.token : opts.token;
    if (token !== null) headers['authorization'] = `Bearer ${token}`;
    let body: string | Uint8Array | FormData | undefined = opts.raw;
    if (opts.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = JSON.stringify(opts.body);
    }
    const res = await fetch(url + '/api/v1' + path, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const type = res.headers.get('content-type') ?? '';
    const parsed = type.includes('json') ? await res.json() : Buffer.from(await res.arrayBuffer());
    return { status: res.status, body: parsed as any, headers: res.headers };
  };
  return {
    service,
    url,
    token: ctx.token,
    dataDir: ctx.dataDir,
    registryPath: service.core.settings.registryPath,
    ctx,
    api,
    async close() {
      await service.close();
      await ctx.cleanup();
    },
  };
}
