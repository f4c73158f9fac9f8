// The main thread: validates settings, makes shared memory once, starts N front-end threads,
// prints where everything listens and how to authenticate once every service of every thread
// listens, restarts a thread that dies, and on SIGTERM/SIGINT asks every thread to drain and
// waits for them to end by themselves before exiting 0 — at any moment, during start-up too (a
// thread still starting finishes the service it is starting, starts no other, and closes what
// it started). A second signal exits at once with status 1.

import { mkdirSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { openKeyStore } from './auth/index.js';
import { bannerLines } from './banner.js';
import type { FrontEndData, FrontEndMessage, SupervisorMessage } from './frontend.js';
import { configureLogging, createLogger } from './log.js';
import { claimPidFile } from './pid-file.js';
import { takenPortsMessage } from './port-probe.js';
import type { ServiceName } from './service.js';
import { EnvReader, loadCoreSettings } from './settings/index.js';
import { takeEarlyStop } from './signals.js';
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
  // Signals first: a stop that comes while settings load, keys are made or threads start is
  // a stop like any other (before this, the entry script remembered it: takeEarlyStop).
  let stopSignal: NodeJS.Signals | undefined = takeEarlyStop();
  let onStop: () => void = () => undefined;
  // Until threads run, a second signal may leave at once; then it goes through forceStop.
  let onSecond: (signal: NodeJS.Signals) => void = (signal) => {
    process.stderr.write(`sluice: second stop signal (${signal}): exiting now\n`);
    process.exit(1);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopSignal !== undefined) return onSecond(signal);
    stopSignal = signal;
    onStop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    return await supervise(options, {
      stopSignal: () => stopSignal,
      onStop: (fn) => (onStop = fn),
      onSecond: (fn) => (onSecond = fn),
    });
  } finally {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  }
}

interface SignalHooks {
  readonly stopSignal: () => NodeJS.Signals | undefined;
  /** Called on the first stop signal (or now, when one came already). */
  readonly onStop: (fn: () => void) => void;
  /** Called on every further signal. */
  readonly onSecond: (fn: (signal: NodeJS.Signals) => void) => void;
}

/** How long threads get to end after a forced stop before the process kills itself. */
const FORCED_STOP_MS = 3_000;

async function supervise(options: SupervisorOptions, signals: SignalHooks): Promise<number> {
  const stopSignal = signals.stopSignal;
  const env = new EnvReader();
  const core = loadCoreSettings(env);
  configureLogging(core.log);
  const log = createLogger('supervisor');
  const print = options.print ?? ((line: string) => process.stdout.write(line + '\n'));
  const threads = options.threads ?? core.threads;
  log.debug({ services: options.services, threads }, 'starting');
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
  let initial: Awaited<ReturnType<typeof keys.ensureInitialKey>>;
  try {
    initial = await keys.ensureInitialKey();
  } finally {
    await keys.close();
  }

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
  const early = stopSignal();
  if (early) {
    log.info({ signal: early }, 'stopping before any thread started');
    return 0;
  }

  const workers = new Map<number, Worker>();
  let shuttingDown = false;
  let serving = false;
  let exitCode = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const restarts: number[] = [];
  const send = (worker: Worker, message: SupervisorMessage) => worker.postMessage(message);
  /** Threads told the process serves that have not answered yet (the banner waits for them). */
  const unacknowledged = new Map<number, () => void>();

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
        if (message.type === 'ready' && serving && !shuttingDown) send(worker, { type: 'serving' });
        if (message.type === 'serving') unacknowledged.get(index)?.();
        if (!settled && message.type !== 'closed' && message.type !== 'serving') {
          settled = true;
          resolve(message);
        }
      });
      worker.on('error', (error) => log.error({ err: error, thread: index }, 'front-end thread failed'));
      worker.on('exit', (code) => {
        workers.delete(index);
        unacknowledged.get(index)?.();
        if (!settled) {
          settled = true;
          resolve({ type: 'error', index, message: `thread exited with code ${code} before it was ready` });
        }
        if (shuttingDown) {
          if (code !== 0) log.warn({ thread: index, code }, 'front-end thread ended with a non-zero code');
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
          shutdown();
          return;
        }
        log.error({ thread: index, code }, 'front-end thread exited; restarting it');
        void spawn(index);
      });
    });

  // A thread is never terminated (worker.terminate, or process.exit while it runs) when it may
  // hold a native handle — a uWS socket, an LMDB environment: Node then aborts the process in
  // uv_loop_close. Each thread ends by itself after closing what it opened; a forced stop only
  // cuts its drain short, and a thread that still does not end is not waited for: the process
  // kills itself (SIGKILL, status 137), which no data depends on (LMDB commits are durable).
  let forcing = false;
  const forceStop = (reason: string) => {
    if (forcing) {
      log.warn('stop signal while a forced stop runs: killing the process');
      process.kill(process.pid, 'SIGKILL');
    }
    forcing = true;
    exitCode = 1;
    log.warn({ reason }, 'forced stop: closing in-flight requests now');
    for (const worker of workers.values()) send(worker, { type: 'force' });
    setTimeout(() => {
      if (workers.size === 0) return;
      log.error({ threads: [...workers.keys()] }, 'front-end threads did not end: killing the process');
      process.kill(process.pid, 'SIGKILL');
    }, FORCED_STOP_MS).unref();
  };
  const shutdown = () => {
    if (shuttingDown) return;
    shuttingDown = true;
    if (workers.size === 0) resolveDone();
    // Each thread finishes what it is starting, drains for up to the grace and closes its
    // services, then ends by itself.
    for (const worker of workers.values()) send(worker, { type: 'shutdown' });
    setTimeout(() => {
      if (workers.size > 0) forceStop('front-end threads did not stop within the grace');
    }, core.shutdownGraceMs + 5_000).unref();
  };
  signals.onStop(() => {
    log.info({ signal: stopSignal() }, 'stopping: draining in-flight requests');
    shutdown();
  });
  signals.onSecond((signal) => {
    if (workers.size === 0) process.exit(1);
    process.stderr.write(`sluice: second stop signal (${signal}): stopping now\n`);
    shutdown();
    forceStop(`second stop signal (${signal})`);
  });

  const first = await Promise.all(Array.from({ length: threads }, (_, i) => spawn(i)));
  if (shuttingDown) {
    await done;
    log.info({ code: exitCode }, 'stopped');
    return exitCode;
  }
  const failure = first.find((m) => m.type === 'error');
  if (failure && failure.type === 'error') {
    print(`sluice: failed to start: ${failure.message}`);
    exitCode = 1;
    shutdown();
    await done;
    return exitCode;
  }

  // Health checks turn green on every thread before the banner says the process serves.
  serving = true;
  await Promise.all(
    [...workers].map(
      ([index, worker]) =>
        new Promise<void>((resolve) => {
          unacknowledged.set(index, () => {
            unacknowledged.delete(index);
            resolve();
          });
          send(worker, { type: 'serving' });
        }),
    ),
  );
  if (shuttingDown) {
    await done;
    log.info({ code: exitCode }, 'stopped');
    return exitCode;
  }
  for (const line of bannerLines({
    services: options.services,
    threads,
    dataDir: core.dataDir,
    ready: first.filter((m) => m.type === 'ready'),
    authHints: hints,
  }))
    print(line);
  if (initial) {
    print('');
    print('  First start: an admin API key was created. It is shown only this once:');
    print(`    ${initial.token}`);
    print('  Use it as "Authorization: Bearer <key>"; manage keys with `sluice keys create|list|revoke`.');
  } else if (core.adminToken) {
    print('  SLUICE_ADMIN_TOKEN is accepted as an admin key.');
  }
  await done;
  log.info({ code: exitCode }, 'stopped');
  return exitCode;
}
