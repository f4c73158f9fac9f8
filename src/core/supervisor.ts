// The main thread: validates settings, makes shared memory once, starts N front-end threads,
// prints where everything listens and how to authenticate, restarts a thread that dies, and on
// SIGTERM/SIGINT asks every thread to drain and waits for them before exiting 0.

import { mkdirSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { openKeyStore } from './auth/index.js';
import type { FrontEndData, FrontEndMessage } from './frontend.js';
import { configureLogging, createLogger } from './log.js';
import { claimPidFile } from './pid-file.js';
import { takenPortsMessage } from './port-probe.js';
import type { ServiceName } from './service.js';
import { EnvReader, loadCoreSettings } from './settings/index.js';
import { startWorker } from './worker-entry.js';
import { SERVICES } from '../services.js';

export interface SupervisorOptions {
  services: ServiceName[];
  /** Overrides SLUICE_THREADS. */
  threads?: number;
  /** Where the start banner goes (stdout by default). */
  print?: (line: string) => void;
}

export async function runSupervisor(options: SupervisorOptions): Promise<number> {
  const env = new EnvReader();
  const core = loadCoreSettings(env);
  configureLogging(core.log);
  const log = createLogger('supervisor');
  const print = options.print ?? ((line: string) => process.stdout.write(line + '\n'));
  const threads = options.threads ?? core.threads;
  // One server per port: checked before anything is created or any thread shares a port.
  const taken = await takenPortsMessage(
    options.services.map((name) => SERVICES[name]),
    env,
    core,
    threads,
  );
  if (taken) {
    process.stderr.write(taken + '\n');
    return 1;
  }
  mkdirSync(core.dataDir, { recursive: true });
  claimPidFile(core.dataDir);

  const keys = openKeyStore(core.dataDir, core.adminToken, core.diskReserveBytes);
  const initial = await keys.ensureInitialKey();
  await keys.close();

  const shared: FrontEndData['shared'] = {};
  const hints: Record<string, string> = {};
  for (const name of options.services) {
    const service = SERVICES[name];
    hints[name] = service.authHint;
    if (service.sharedMemory) {
      const module = await service.load();
      if (module.prepareShared) shared[name] = module.prepareShared(env);
    }
  }

  const workers = new Map<number, Worker>();
  let shuttingDown = false;
  let exitCode = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const restarts: number[] = [];

  const spawn = (index: number): Promise<FrontEndMessage> =>
    new Promise((resolve) => {
      const data: FrontEndData = {
        services: options.services,
        shared,
        index,
        count: threads,
        log: core.log,
      };
      const worker = startWorker('frontend', { workerData: { ...data } });
      workers.set(index, worker);
      let settled = false;
      worker.on('message', (message: FrontEndMessage) => {
        if (!settled && (message.type === 'ready' || message.type === 'error')) {
          settled = true;
          resolve(message);
        }
      });
      worker.on('error', (error) => log.error({ err: error, thread: index }, 'front-end thread failed'));
      worker.on('exit', (code) => {
        workers.delete(index);
        if (!settled) {
          settled = true;
          resolve({ type: 'error', index, message: `thread exited with code ${code} before it was ready` });
        }
        if (shuttingDown) {
          if (workers.size === 0) resolveDone();
          return;
        }
        // An unexpected exit: restart, unless threads keep dying (then stop, rather than flap).
        const now = Date.now();
        restarts.push(now);
        while (restarts.length > 0 && restarts[0]! < now - 60_000) restarts.shift();
        if (restarts.length > 5) {
          log.fatal('front-end threads keep exiting; stopping');
          exitCode = 1;
          void shutdown();
          return;
        }
        log.error({ thread: index, code }, 'front-end thread exited; restarting it');
        void spawn(index);
      });
    });

  const shutdown = async () => {
    if (shuttingDown) return;
    shuttingDown = true;
    if (workers.size === 0) resolveDone();
    for (const worker of workers.values()) worker.postMessage({ type: 'shutdown' });
    // A thread that cannot drain in time is stopped; exit code 1 tells the operator.
    setTimeout(() => {
      for (const worker of workers.values()) void worker.terminate();
      exitCode = exitCode || 1;
      resolveDone();
    }, core.shutdownGraceMs + 5_000).unref();
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (shuttingDown) {
      log.warn({ signal }, 'second stop signal: exiting now');
      process.exit(1);
    }
    log.info({ signal }, 'stopping: draining in-flight requests');
    void shutdown();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const first = await Promise.all(Array.from({ length: threads }, (_, i) => spawn(i)));
  const failure = first.find((m) => m.type === 'error');
  if (failure && failure.type === 'error') {
    print(`sluice: failed to start: ${failure.message}`);
    exitCode = 1;
    await shutdown();
    await done;
    return exitCode;
  }

  print(
    `sluice: ${options.services.join(', ')} running on ${threads} front-end thread(s); data in ${core.dataDir}`,
  );
  const ready = first.find((m) => m.type === 'ready');
  if (ready && ready.type === 'ready') print(`  http transport: ${ready.transport}`);
  // Threads share most ports; a listener that differs per thread (GRPC_THREAD_PORTS) lists each.
  const listing = new Map<string, Map<string, Set<string>>>();
  for (const message of first) {
    if (message.type !== 'ready') continue;
    for (const [service, listeners] of Object.entries(message.addresses)) {
      const byListener = listing.get(service) ?? new Map<string, Set<string>>();
      listing.set(service, byListener);
      for (const [listener, address] of Object.entries(listeners)) {
        const set = byListener.get(listener) ?? new Set<string>();
        set.add(address);
        byListener.set(listener, set);
      }
    }
  }
  for (const [service, listeners] of listing) {
    for (const [listener, addresses] of listeners)
      print(`  ${service.padEnd(10)} ${listener.padEnd(8)} ${[...addresses].join(', ')}`);
    print(`  ${service.padEnd(10)} auth     ${hints[service] ?? ''}`);
  }
  if (initial) {
    print('');
    print('  First start: an admin API key was created. It is shown only this once:');
    print(`    ${initial.token}`);
    print('  Use it as "Authorization: Bearer <key>"; manage keys with `sluice keys create|list|revoke`.');
  } else if (core.adminToken) {
    print('  SLUICE_ADMIN_TOKEN is accepted as an admin key.');
  }
  await done;
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  return exitCode;
}
