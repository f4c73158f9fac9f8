// The automation service: registry (git), run pool (worker threads), LMDB metadata and blobs on disk
// (or all of it in PostgreSQL, shared by several nodes), and the /api/v1 HTTP API. Stateful, so
// the core starts it on front-end thread 0 only.

import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loggedReserve } from '../core/disk/reserve.js';
import { bindUrl, Router, startHttpServer, type HttpRequest, type HttpResponse } from '../core/http/index.js';
import { describeEndpoint } from '../core/banner.js';
import type { RunningService, ServiceContext } from '../core/service.js';
import { mountConsole } from '../core/console/routes.js';
import { ServiceOperations, stateCheck } from '../core/observe/index.js';
import { createTracing } from '../core/tracing/index.js';
import { ArchivePool } from './archives/pool.js';
import { RunPool } from './executor/pool.js';
import type { FileStore } from './files/store.js';
import type { ReviewStore } from './reviews/store.js';
import type { ScoreStore } from './runs/scores.js';
import { openLmdbStores, type AutomationStores } from './stores.js';
import type { ApiDeps, ApiRoute } from './http/api.js';
import { authRoutes } from './auth/routes.js';
import { errorBody, storageFailure, toHttpError } from './http/envelope.js';
import { fileRoutes } from './files/routes.js';
import { checkRouteParams, routeParams } from './http/ids.js';
import { DownloadTokens } from './http/tokens.js';
import { buildOpenApi } from './openapi/document.js';
import { RegistryRepository } from './registry/repository.js';
import { automationRoutes } from './registry/routes.js';
import { AutomationRegistry } from './registry/service.js';
import { artifactRoutes } from './runs/artifact-routes.js';
import { runRoutes } from './runs/routes.js';
import { runMetrics } from './runs/metrics.js';
import { loggedRuns } from './runs/run-log.js';
import { RunService } from './runs/service.js';
import { loadAutomationSettings, type AutomationSettings } from './settings.js';
import type { FeatureHost } from './feature-host.js';
import { datasetsFeature } from './datasets/feature.js';
import { evaluatorsFeature } from './evaluators/feature.js';
import { experimentsFeature } from './experiments/feature.js';
import { reviewsFeature } from './reviews/feature.js';
import { ScriptPool } from './evals/index.js';
import { openPgBackend, type PgBackend } from './pg/backend.js';
import { chainAuthenticators } from './pg/key-store.js';
import { END_BLOB_BYTES } from './pg/run-queue.js';
import { queuePort } from './pg/queue/port.js';
import { LocalRunQueue } from './runs/local-queue.js';
import type { RunQueue } from './runs/queue.js';
import { runReviewView } from './reviews/view.js';
import { localOnly, throughSharedStores } from './runs/sharing.js';
import { startEmailTrigger, type EmailTrigger } from './triggers/email/index.js';
import { cronMetrics } from './triggers/cron/metrics.js';
import { scheduleRegistration } from './triggers/cron/registration.js';
import { scheduleRoutes } from './triggers/cron/routes.js';
import { Scheduler } from './triggers/cron/scheduler.js';
import { RetentionRunner } from './retention/runner.js';
import { retentionMetrics } from './retention/metrics.js';

export { loadAutomationSettings, type AutomationSettings } from './settings.js';
export type { ScoreStore, EvalResult } from './runs/scores.js';
export type { RunService, StartRunRequest } from './runs/service.js';
export type { AutomationRegistry } from './registry/service.js';

/** The service's parts, for route contributors and tests in the same process. */
export interface AutomationCore {
  settings: AutomationSettings;
  /** Every store of the service (the files, scores and reviews below are three of them). */
  stores: AutomationStores;
  registry: AutomationRegistry;
  runs: RunService;
  /** The run queue the run service runs every run through (a schedule's claim queues on it). */
  queue: RunQueue;
  scores: ScoreStore;
  files: FileStore;
  reviews: ReviewStore;
  /** Archive work (ZIP reading and writing) off the event loop. */
  archives: ArchivePool;
  /** Worker threads for tenant-written code and patterns: custom scripts, regexes, schemas. */
  evalPool: ScriptPool;
  /** The background retention passes (docs/operations.md "Data lifecycle"); `pass()` runs one now. */
  retention: RetentionRunner;
}

export interface AutomationOptions {
  /**
   * The clock retention measures ages on (default Date.now). Tests move it forward to age runs,
   * uploads and bundles past their retention without waiting.
   */
  now?: () => number;
}

export interface RunningAutomation extends RunningService {
  readonly core: AutomationCore;
  readonly url: string;
  /** The SMTP listener's port when the email trigger is on (AUTOMATION_SMTP_PORT). */
  readonly smtpPort: number | undefined;
}

/** The repository's automations/ folder (built-in examples), from src/ or dist/src/. */
function builtinsDir(): string | undefined {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'automations')))
      return join(dir, 'automations');
    dir = dirname(dir);
  }
  return undefined;
}

/**
 * The API answers under /api/v1 (the spec) and under /v1 (the product SDK appends /v1 to its
 * baseUrl, so a server root works as the SDK's baseUrl).
 */
const API_PREFIXES = ['/api/v1', '/v1'] as const;

/** The most queued runs the shared queue counts for the queue-depth gauge (one bounded query). */
const QUEUE_DEPTH_BOUND = 100_000;

function toRouterPattern(prefix: string, path: string): string {
  return prefix + path.replace(/\{path\}$/, '*').replace(/\{(\w+)\}/g, ':$1');
}

/** Extra routes a caller of startAutomation adds before the server starts. */
export type RouteContributor = (core: AutomationCore, deps: ApiDeps) => ApiRoute[];

/**
 * Datasets, evaluators, experiments and reviews: each feature builds its own services from the
 * host and returns its routes; the evaluators feature's scoring is handed to the two that score.
 */
function featureRoutes(host: FeatureHost): ApiRoute[] {
  const evaluators = evaluatorsFeature(host);
  return [
    ...datasetsFeature(host, evaluators).routes,
    ...evaluators.routes,
    ...experimentsFeature(host, evaluators).routes,
    ...reviewsFeature(host).routes,
  ];
}

export async function startAutomation(
  ctx: ServiceContext,
  contributors: readonly RouteContributor[] = [],
  options: AutomationOptions = {},
): Promise<RunningAutomation> {
  if (ctx.thread.index !== 0)
    throw new Error('the automation service is stateful and must run on front-end thread 0 only');
  const settings = loadAutomationSettings(ctx.env, ctx.core);
  // Threads start on first use; built before anything opens so a bad setting leaks nothing.
  const evalPool = new ScriptPool(settings.evalPool);
  // The front-end thread's logger names the service already.
  const log = ctx.log;
  await mkdir(settings.dataDir, { recursive: true });
  // With AUTOMATION_DATABASE_URL every node shares PostgreSQL: stores, run queue, API keys.
  let pg: PgBackend | undefined;
  try {
    pg = settings.database ? await openPgBackend(settings, log) : undefined;
  } catch (err) {
    await evalPool.close();
    throw err;
  }
  // Writes keep SLUICE_DISK_RESERVE free on the data directory's disk (core/disk/reserve.ts).
  const reserve = loggedReserve('automation store', settings.dataDir, ctx.core.diskReserveBytes, log);
  const lmdb = pg
    ? undefined
    : openLmdbStores(settings.dataDir, { listScanLimit: settings.listScanLimit, reserve });
  const stores: AutomationStores = pg?.stores ?? lmdb!;
  // The run queue: PostgreSQL's (in the backend) with several nodes, else this process's own.
  const localQueue =
    lmdb &&
    new LocalRunQueue(lmdb.runs, {
      tenantConcurrency: settings.tenantConcurrency,
      automationConcurrency: settings.automationConcurrency,
    });
  const closeStores = () => {
    localQueue?.close();
    return pg ? pg.close() : stores.close();
  };
  const auth = pg ? chainAuthenticators(pg.keys, ctx.auth) : ctx.auth;
  const pool = new RunPool({
    threads: settings.poolThreads,
    cancelGraceMs: settings.cancelGraceMs,
    diskReserveBytes: ctx.core.diskReserveBytes,
  });
  const ops = new ServiceOperations({
    service: 'automation',
    settings: ctx.core.observe,
    log,
    thread: { index: ctx.thread.index, serviceThreads: 1 },
  });
  const runObserver = runMetrics(ops.metrics, {
    // The shared queue counts every node's waiting runs (bounded); one node counts its own.
    queueDepth: () => (pg ? pg.queue : localQueue!).queuedCount(QUEUE_DEPTH_BOUND),
    poolThreads: () => pool.threads,
    poolBusy: () => pool.busy,
    pgPool: pg ? () => pg.db.poolStats() : undefined,
  });
  if (pg) ops.readiness.register('postgresql', () => pg.db.query('SELECT 1').then(() => undefined));
  else ops.readiness.register('lmdb', () => stores.runs.get('readyz-probe').then(() => undefined));
  const archives = new ArchivePool({
    threads: settings.archiveThreads,
    onError: (err) => log.error({ err }, 'archive worker failed'),
  });
  /** The end of every close, also of a failed start: the stores go after the workers using them. */
  const closeWorkersAndStores = async () => {
    await pool.close();
    await archives.close();
    await evalPool.close();
    await closeStores();
    ops.close();
  };
  let scheduler: Scheduler | undefined;
  // What a failed start has started so far, stopped in reverse order before the workers and
  // stores close (the same order as a normal close).
  const startedParts: (() => Promise<void>)[] = [];
  try {
    const repo = new RegistryRepository({
      path: settings.registryPath,
      cacheDir: join(settings.dataDir, 'versions'),
      cloneUrl: settings.registryUrl,
      seedDir: settings.seedBuiltins ? builtinsDir() : undefined,
      // Nodes sharing PostgreSQL share registry commits through it, with or without a remote.
      sources: pg
        ? { store: stores.registrySources, blobs: stores.blobs, tmpDir: join(settings.dataDir, 'tmp') }
        : undefined,
    });
    const registry = new AutomationRegistry(stores.automations, repo, settings.defaultTimeoutMs);
    registry.addSyncHook(
      scheduleRegistration({
        store: stores.schedules,
        schemaPool: evalPool,
        log,
        changed: () => scheduler?.wake(),
      }),
    );
    log.debug({ path: repo.path }, 'opening the automation registry');
    const init = await registry.init();
    ops.readiness.register(
      'registry',
      stateCheck(() => existsSync(repo.path), `the automation registry at ${repo.path} is missing`),
    );
    if (init.created)
      log.info({ path: repo.path, from: init.opened, synced: init.synced }, 'automation registry created');

    const tracing = createTracing(settings.tracing, 'sluice-automation');
    startedParts.push(() => tracing.close());
    // Every run's folder is below this one (runs/folder.ts).
    const runsDir = join(settings.dataDir, 'runs');
    const queue = pg ? queuePort(pg.queue) : localQueue!;
    const runs = new RunService(stores.runs, registry, pool, {
      blobs: stores.blobs,
      runsDir,
      maxQueuedRuns: settings.maxQueuedRuns,
      providers: {
        ...(settings.openaiBaseUrl ? { openaiBaseUrl: settings.openaiBaseUrl } : {}),
        ...(settings.openaiApiKey ? { openaiApiKey: settings.openaiApiKey } : {}),
        ...(settings.openaiModel ? { openaiModel: settings.openaiModel } : {}),
      },
      log,
      schemaPool: evalPool,
      observer: loggedRuns(runObserver, log),
      queue,
      sharing: pg ? throughSharedStores(stores.blobs, registry, END_BLOB_BYTES) : localOnly,
      capacity: settings.poolThreads,
      tracing,
    });
    startedParts.push(() => runs.close());
    const recovered = await runs.recover();
    if (recovered.requeued + recovered.failed > 0)
      log.info(recovered, 'runs left over from the last process');
    // Every node fires schedules; a tick's claim makes it one node's (triggers/cron/).
    scheduler = new Scheduler({
      store: stores.schedules,
      queue,
      start: (req) => runs.start(req),
      catchup: settings.cronCatchup,
      pollMs: settings.cronPollMs,
      log,
      metrics: cronMetrics(ops.metrics),
    });
    scheduler.start();
    const startedScheduler = scheduler;
    startedParts.push(() => startedScheduler.stop());

    const secret = settings.downloadTokenSecret
      ? Buffer.from(settings.downloadTokenSecret)
      : await stores.automations.secret('download-token-secret', () => randomBytes(32));
    const { files, scores, reviews } = stores;
    const retention = new RetentionRunner({
      settings: settings.retention,
      store: stores.retention,
      runs: stores.runs,
      files,
      runsDir,
      shared: pg !== undefined,
      now: options.now ?? Date.now,
      log,
      observer: retentionMetrics(ops.metrics),
    });
    const core: AutomationCore = {
      settings,
      stores,
      registry,
      runs,
      queue,
      scores,
      files,
      reviews,
      archives,
      evalPool,
      retention,
    };
    const closers: (() => Promise<void>)[] = [];
    startedParts.push(async () => {
      for (const close of closers) await close();
    });
    const tokens = new DownloadTokens(Buffer.from(secret), settings.downloadTokenTtlMs);
    const deps: ApiDeps = {
      settings,
      registry,
      runs,
      files,
      scores,
      tokens,
      auth,
      log,
      tmpDir: join(settings.dataDir, 'tmp'),
      archives,
      listRuns: (q) => runs.list(q),
      lastReviewClosedAt: (tenant) => reviews.lastClosedAt(tenant),
      runReview: async (run) => {
        const review = await reviews.get(run);
        return review ? runReviewView(review) : null;
      },
      expectedFiles: async (run) => (await reviews.get(run))?.expectedFiles ?? [],
      onClose: (fn) => closers.push(fn),
    };

    const routes: ApiRoute[] = [
      ...authRoutes(),
      ...automationRoutes(deps),
      ...runRoutes(deps),
      ...artifactRoutes(deps),
      ...fileRoutes(deps),
      ...scheduleRoutes(stores.schedules),
    ];
    routes.push(
      ...featureRoutes({
        settings,
        stores,
        registry,
        runs,
        archives,
        evalPool,
        tmpDir: deps.tmpDir,
        log,
        discardBlob: (sha) => files.discardIfUnreferenced(sha),
        onClose: (fn) => closers.push(fn),
      }),
    );
    for (const contribute of contributors) routes.push(...contribute(core, deps));
    const openapi = JSON.stringify(buildOpenApi(routes, { version: '1.0.0' }));
    const router = new Router();
    for (const prefix of API_PREFIXES)
      router.get(
        `${prefix}/openapi.json`,
        (_req, res) => res.header('content-type', 'application/json').send(openapi),
        { scope: false },
      );
    for (const route of routes) {
      // Path parameters are checked here, once for every route, before any handler reads them.
      const params = routeParams(route.path, route.params);
      const writes = route.method !== 'GET' && route.method !== 'DELETE';
      const handler = async (req: HttpRequest, res: HttpResponse) => {
        try {
          checkRouteParams(params, req.params);
          // A write is refused (507) before it starts when the disk is nearly full; a delete,
          // which frees space, never is.
          if (writes) reserve.admit(0);
          await route.handle(req, res);
        } catch (err) {
          throw toHttpError(storageFailure(err, settings.dataDir));
        }
      };
      const options: { scope?: string | false; maxBodyBytes?: number } = {};
      if (route.public) options.scope = false;
      if (route.maxBodyBytes !== undefined) options.maxBodyBytes = route.maxBodyBytes;
      for (const prefix of API_PREFIXES)
        router.route(route.method, toRouterPattern(prefix, route.path), handler, options);
    }

    ops.mount(router);
    mountConsole(router, { self: 'automation', ctx });
    const server = await startHttpServer({
      name: 'automation',
      host: settings.host,
      port: settings.port,
      router,
      errorBody,
      maxBodyBytes: settings.maxJsonBytes,
      authenticator: auth,
      defaultScope: (method) =>
        method === 'GET' || method === 'HEAD' ? 'automation:read' : 'automation:write',
      log,
      transport: ctx.core.httpTransport,
      observer: ops.observer,
    });
    // Mail starts runs only once the API that shows them answers.
    let email: EmailTrigger | undefined;
    if (settings.email) {
      try {
        email = await startEmailTrigger({
          settings: settings.email,
          automations: stores.automations,
          messages: stores.emailMessages,
          runs,
          tokens,
          publicUrl: settings.publicUrl,
          dataDir: settings.dataDir,
          log,
          metrics: ops.metrics,
        });
      } catch (err) {
        await server.close(0);
        throw err;
      }
      const trigger = email;
      ops.readiness.register('smtp', stateCheck(trigger.listening, 'the SMTP listener is closed'));
    }
    ctx.directory?.publish('automation', server.port);
    retention.start();
    ctx.health.register('automation', true);
    log.info(
      {
        url: server.url,
        registry: repo.path,
        poolThreads: settings.poolThreads,
        ...(pg ? { database: 'postgresql', nodeId: settings.nodeId } : { database: 'lmdb' }),
      },
      'automation service listening',
    );
    let closing: Promise<void> | undefined;
    return {
      name: 'automation',
      addresses: {
        http: `${bindUrl(server.host, server.port)}/api/v1`,
        ...(email ? { smtp: `smtp://${settings.email!.host}:${email.port}` } : {}),
      },
      backends: {
        ...(settings.database
          ? { database: `PostgreSQL ${describeEndpoint(settings.database.url)}` }
          : { metadata: `LMDB ${join(settings.dataDir, 'meta.lmdb')}` }),
        registry: repo.path,
      },
      core,
      url: server.url,
      smtpPort: email?.port,
      beginShutdown() {
        ctx.health.set('automation', false);
        ops.beginShutdown();
      },
      close() {
        // Every caller waits for the one close: the stores close only after all their users.
        closing ??= (async () => {
          ops.beginShutdown();
          await email?.close();
          await server.close(ctx.core.shutdownGraceMs);
          await retention.stop();
          for (const close of closers) await close();
          await scheduler?.stop();
          await runs.close();
          await tracing.close();
          await closeWorkersAndStores();
        })();
        return closing;
      },
    };
  } catch (err) {
    for (const stop of startedParts.reverse())
      await stop().catch((error: unknown) => log.warn({ err: error }, 'stopping after a failed start'));
    await closeWorkersAndStores();
    throw err;
  }
}
