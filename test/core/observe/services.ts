// Starts one of the three services with a test context on a free port, for the probe and
// metrics tests: the HTTP base URL, an admin key, and a stop that removes the temp data.

import { startAutomation } from '../../../src/automation/index.js';
import type { RunningService } from '../../../src/core/service.js';
import { startRatelimit } from '../../../src/ratelimit/index.js';
import { startStreams } from '../../../src/streams/index.js';
import { makeTestContext, type TestContext } from '../../helpers/context.js';

export type ServiceUnderTest = 'ratelimit' | 'streams' | 'automation';
export const SERVICES: readonly ServiceUnderTest[] = ['ratelimit', 'streams', 'automation'];

export interface Started {
  url: string;
  token: string;
  service: RunningService;
  test: TestContext;
  stop(): Promise<void>;
}

export async function startService(
  name: ServiceUnderTest,
  env: Record<string, string> = {},
): Promise<Started> {
  const test = await makeTestContext({
    env: { AUTOMATION_POOL_THREADS: '1', STREAMS_DEFAULT_PARTITIONS: '1', ...env },
  });
  let service: RunningService;
  try {
    service =
      name === 'ratelimit'
        ? await startRatelimit(test.ctx)
        : name === 'streams'
          ? await startStreams(test.ctx)
          : await startAutomation(test.ctx);
  } catch (error) {
    await test.cleanup();
    throw error;
  }
  const url =
    name === 'automation' ? (service as { url: string } & RunningService).url : service.addresses.http!;
  let stopped = false;
  return {
    url,
    token: test.token,
    service,
    test,
    async stop() {
      if (stopped) return;
      stopped = true;
      await service.close();
      await test.cleanup();
    },
  };
}

export async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}
