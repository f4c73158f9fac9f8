// One front-end thread: builds a ServiceContext, starts the services this thread runs, reports
// the addresses to the supervisor, and on request stops them in order (health red, stop
// listening, drain, close stores) so the thread ends by itself.
//
// A stop may come at any moment, also while a service is still starting: the service being
// started is let finish (its start opens listeners, LMDB environments, worker pools and database
// connections that only its close can release), no further service starts, and then every
// started service is closed. The thread must never be terminated with a native handle open (a
// uWS socket, an LMDB environment): Node then aborts the whole process in uv_loop_close.

import type { MessagePort } from 'node:worker_threads';
import { openKeyStore } from './auth/index.js';
import { ServiceDirectory } from './directory.js';
import { HealthRegistry } from './health.js';
import { describeTransport, endDrainsNow, resolveTransport } from './http/index.js';
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

/** Thread → supervisor. */
export type FrontEndMessage =
  | {
      type: 'ready';
      index: number;
      addresses: Record<string, Record<string, string>>;
      /** What each service stores its data in (no secrets), as the banner prints it. */
      backends: Record<string, Record<string, string>>;
      /** The HTTP transport serving this thread, as the banner prints it. */
      transport: string;
    }
  | { type: 'error'; index: number; message: string }
  /** The thread stopped before it was ready, because a stop signal came during the start. */
  | { type: 'cancelled'; index: number }
  /** The thread's health checks now count the process as started (answer to 'serving'). */
  | { type: 'serving'; index: number }
  | { type: 'closed'; index: number };

/** Supervisor → thread. */
export type SupervisorMessage =
  /** Drain and close everything, then end the thread. */
  | { type: 'shutdown' }
  /** Stop now: in-flight requests are closed instead of drained (a second stop signal). */
  | { type: 'force' }
  /** Every thread of the process is ready: every service listens. */
  | { type: 'serving' };

/**
 * The health component every service's registry holds in a process run by the supervisor: red
 * until every service of every thread listens, so a health check (the rate limit /healthcheck,
 * gRPC health) does not report a half-started process as serving.
 */
export const STARTED_COMPONENT = 'process_started';

export async function runFrontEnd(data: FrontEndData, port: MessagePort): Promise<void> {
  const env = new EnvReader();
  configureLogging(data.log);
  const log = createLogger('sluice', { thread: data.index });
  const running: RunningService[] = [];
  const registries: HealthRegistry[] = [];
  let keys: ReturnType<typeof openKeyStore> | undefined;
  let stopRequested = false;
  let serving = false;
  let stopping: Promise<void> | undefined;
  let startup: Promise<void> = Promise.resolve();

  const stop = () =>
    (stopping ??= (async () => {
      // Whatever is starting finishes first: its close releases what its start opened.
      await startup;
      for (const service of running) service.beginShutdown?.();
      const results = await Promise.allSettled(
        running.map(async (service) => {
          await service.close();
          log.debug({ service: service.name }, 'service closed');
        }),
      );
      for (const [i, result] of results.entries())
        if (result.status === 'rejected')
          log.error({ err: result.reason, service: running[i]!.name }, 'service did not close cleanly');
      await keys?.close();
      log.debug('thread closed');
      port.postMessage({ type: 'closed', index: data.index } satisfies FrontEndMessage);
      port.close();
    })());

  port.on('message', (message: SupervisorMessage) => {
    if (message.type === 'shutdown' || message.type === 'force') {
      stopRequested = true;
      if (message.type === 'force') endDrainsNow();
      void stop();
    } else if (message.type === 'serving') {
      serving = true;
      for (const health of registries) health.set(STARTED_COMPONENT, true);
      port.postMessage({ type: 'serving', index: data.index } satisfies FrontEndMessage);
    }
  });

  startup = (async () => {
    try {
      const core = loadCoreSettings(env);
      // Decided before any service starts, so a forced transport that cannot load stops the start
      // with its own message.
      const transport = resolveTransport(core.httpTransport).info;
      keys = openKeyStore(core.dataDir, core.adminToken);
      const addresses: Record<string, Record<string, string>> = {};
      const backends: Record<string, Record<string, string>> = {};
      const directory = new ServiceDirectory(data.services);
      for (const name of data.services) {
        if (stopRequested) break;
        if (!SERVICES[name].allThreads && data.index !== 0) continue;
        const module = await SERVICES[name].load();
        if (stopRequested) break;
        const health = new HealthRegistry();
        health.detail('http', transport);
        health.register(STARTED_COMPONENT, serving);
        registries.push(health);
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
        backends[name] = { ...service.backends };
      }
      if (stopRequested) {
        log.info({ started: running.map((s) => s.name) }, 'stop requested during start-up');
        port.postMessage({ type: 'cancelled', index: data.index } satisfies FrontEndMessage);
        return;
      }
      port.postMessage({
        type: 'ready',
        index: data.index,
        addresses,
        backends,
        transport: describeTransport(transport),
      } satisfies FrontEndMessage);
    } catch (error) {
      port.postMessage({
        type: 'error',
        index: data.index,
        message: (error as Error).message,
      } satisfies FrontEndMessage);
      void stop();
    }
  })();
  await startup;
}
