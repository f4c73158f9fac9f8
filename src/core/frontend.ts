// One front-end thread: builds a ServiceContext, starts the services this thread runs, reports
// the addresses to the supervisor, and on request stops them in order (health red, stop
// listening, drain, close stores) so the thread can end by itself.

import type { MessagePort } from 'node:worker_threads';
import { openKeyStore } from './auth/index.js';
import { ServiceDirectory } from './directory.js';
import { HealthRegistry } from './health.js';
import { describeTransport, resolveTransport } from './http/index.js';
import { configureLogging, createLogger } from './log.js';
import type { RunningService, ServiceName } from './service.js';
import { EnvReader, loadCoreSettings, type LogSettings } from './settings/index.js';
import { SERVICES } from '../services.js';

export interface FrontEndData {
  services: ServiceName[];
  shared: Record<string, Record<string, SharedArrayBuffer>>;
  index: number;
  count: number;
  /** The supervisor's log settings, so every thread logs alike without reading them again. */
  log: LogSettings;
}

export type FrontEndMessage =
  | {
      type: 'ready';
      index: number;
      addresses: Record<string, Record<string, string>>;
      /** The HTTP transport serving this thread, as the banner prints it. */
      transport: string;
    }
  | { type: 'error'; index: number; message: string }
  | { type: 'closed'; index: number };

export async function runFrontEnd(data: FrontEndData, port: MessagePort): Promise<void> {
  const env = new EnvReader();
  configureLogging(data.log);
  const log = createLogger('sluice', { thread: data.index });
  const running: RunningService[] = [];
  let keys: ReturnType<typeof openKeyStore> | undefined;
  let stopping = false;

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const service of running) service.beginShutdown?.();
    await Promise.allSettled(running.map((service) => service.close()));
    await keys?.close();
    port.postMessage({ type: 'closed', index: data.index } satisfies FrontEndMessage);
    port.close();
  };
  port.on('message', (message: { type: string }) => {
    if (message.type === 'shutdown') void stop();
  });

  try {
    const core = loadCoreSettings(env);
    // Decided before any service starts, so a forced transport that cannot load stops the start
    // with its own message.
    const transport = resolveTransport(core.httpTransport).info;
    keys = openKeyStore(core.dataDir, core.adminToken);
    const addresses: Record<string, Record<string, string>> = {};
    const directory = new ServiceDirectory(data.services);
    for (const name of data.services) {
      if (!SERVICES[name].allThreads && data.index !== 0) continue;
      const module = await SERVICES[name].load();
      const health = new HealthRegistry();
      health.detail('http', transport);
      const service = await module.start({
        core,
        env,
        log: log.child({ service: name }),
        health,
        auth: keys,
        thread: { index: data.index, count: data.count },
        shared: data.shared[name] ?? {},
        directory,
      });
      running.push(service);
      addresses[name] = { ...service.addresses };
    }
    port.postMessage({
      type: 'ready',
      index: data.index,
      addresses,
      transport: describeTransport(transport),
    } satisfies FrontEndMessage);
  } catch (error) {
    port.postMessage({
      type: 'error',
      index: data.index,
      message: (error as Error).message,
    } satisfies FrontEndMessage);
    await stop();
  }
}
